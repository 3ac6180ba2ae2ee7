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
	char prog[64], out[256], env_out[PATH_MAX + 16], path[PATH_MAX];
	char buf[8192];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { "longjmp", "3000", "50", NULL };
	struct meter_profile *p;
	size_t i, bad = 0;
	uint32_t maxdepth = 0;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(path, sizeof(path), "%s/longjmp-%s.json", scratch(), mode);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ok(run_prog(prog, env, args, out, sizeof(out)) == 0,
	   "%s: 3000 longjmps out of 50-deep recursion exit 0", mode);
	ok(printed_depth(out) == 1,
	   "%s: shadow stack back to depth 1 afterwards (got %ld)", mode,
	   printed_depth(out));
	p = load_profile(path);
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
	scratch_cleanup();
	return tap_done();
}
