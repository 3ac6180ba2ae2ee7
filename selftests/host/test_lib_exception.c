// SPDX-License-Identifier: MIT
/*
 * A C++ exception thrown through 20 profiled frames and caught 2000 times
 * leaves a correct profile: exact call counts, the shadow stack back at
 * main's depth, and no sampled stack with frames that were unwound.
 */
#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], out[256], env_out[PATH_MAX + 16], path[PATH_MAX];
	char buf[8192];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { "2000", "20", NULL };
	struct meter_profile *p;
	size_t i, bad = 0;

	snprintf(prog, sizeof(prog), "lib_cxx_%s", mode);
	snprintf(path, sizeof(path), "%s/cxx-%s.json", scratch(), mode);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ok(run_prog(prog, env, args, out, sizeof(out)) == 0,
	   "%s: 2000 exceptions through 20 profiled frames exit 0", mode);
	ok(printed_depth(out) == 1, "%s: shadow stack back to depth 1 (got %ld)",
	   mode, printed_depth(out));
	p = load_profile(path);
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
	scratch_cleanup();
	return tap_done();
}
