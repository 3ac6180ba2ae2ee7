// SPDX-License-Identifier: MIT
/*
 * A C++ exception thrown through 20 profiled frames and caught 2000 times
 * leaves a correct profile: exact call counts, the shadow stack back at
 * main's depth, and no sampled stack with frames that were unwound.
 */
#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], label[64], out[256], buf[8192];
	const char *args[] = { "2000", "20", NULL };
	struct meter_profile *p;
	size_t i, bad = 0;

	snprintf(prog, sizeof(prog), "lib_cxx_%s", mode);
	snprintf(label, sizeof(label),
		 "%s: 2000 exceptions through 20 profiled frames", mode);
	p = run_backend(prog, "signal", args, out, sizeof(out), label, NULL);
	ok(printed_depth(out) == 1, "%s: shadow stack back to depth 1 (got %ld)",
	   mode, printed_depth(out));
	if (!p) {
		ok(0, "%s: profile written", mode);
		return;
	}
	ok(calls_of(p, "thrower") == 40000 && calls_of(p, "catcher") == 2000 &&
	   calls_of(p, "leaf") == 2000,
	   "%s: exact counts through exceptions (thrower %lld, catcher %lld, leaf %lld)",
	   mode, calls_of(p, "thrower"), calls_of(p, "catcher"),
	   calls_of(p, "leaf"));
	for (i = 0; i < p->nstacks; i++) {
		stack_string(p, &p->stacks[i], buf, sizeof(buf));
		if (p->stacks[i].depth > 23 ||
		    (strncmp(buf, "main;catcher", 12) && strcmp(buf, "main;spin") &&
		     strcmp(buf, "main"))) {
			diag("%s: unexpected stack %s", mode, buf);
			bad++;
		}
	}
	ok(bad == 0, "%s: no sampled stack carries unwound frames", mode);
	ok(samples_of_stack(p, "main;spin") > 0,
	   "%s: time after the exceptions is charged to main;spin", mode);
	meter_profile_free(p);
}

int main(void)
{
	check("manual");
	check("auto");
	check("plugin");
	scratch_cleanup();
	return tap_done();
}
