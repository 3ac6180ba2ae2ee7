// SPDX-License-Identifier: MIT
/*
 * longjmp out of deep recursion, 3000 times, leaves a correct profile:
 * exact call counts, the shadow stack back at main's depth, and no sampled
 * stack carrying stale frames (never deeper than the recursion, always
 * rooted at main;jumper or main;spin).
 */
#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], label[64], out[256], buf[8192];
	const char *args[] = { "longjmp", "3000", "50", NULL };
	struct meter_profile *p;
	size_t i, bad = 0;
	uint32_t maxdepth = 0;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s: 3000 longjmps out of 50-deep recursion",
		 mode);
	p = run_backend(prog, "signal", args, out, sizeof(out), label, NULL);
	ok(printed_depth(out) == 1,
	   "%s: shadow stack back to depth 1 afterwards (got %ld)", mode,
	   printed_depth(out));
	if (!p) {
		ok(0, "%s: profile written", mode);
		return;
	}
	ok(calls_of(p, "recurse") == 150000 && calls_of(p, "jumper") == 3000 &&
	   calls_of(p, "leaf") == 3000,
	   "%s: exact counts after longjmps (recurse %lld, jumper %lld, leaf %lld)",
	   mode, calls_of(p, "recurse"), calls_of(p, "jumper"),
	   calls_of(p, "leaf"));
	for (i = 0; i < p->nstacks; i++) {
		stack_string(p, &p->stacks[i], buf, sizeof(buf));
		if (p->stacks[i].depth > maxdepth)
			maxdepth = p->stacks[i].depth;
		if (strncmp(buf, "main;jumper", 11) && strcmp(buf, "main;spin") &&
		    strcmp(buf, "main")) {
			diag("%s: unexpected stack %s", mode, buf);
			bad++;
		}
	}
	ok(bad == 0 && maxdepth <= 53,
	   "%s: no sampled stack carries stale frames (deepest %u)", mode,
	   maxdepth);
	ok(samples_of_stack(p, "main;spin") > 0,
	   "%s: time after the longjmps is charged to main;spin", mode);
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
