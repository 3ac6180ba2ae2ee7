// SPDX-License-Identifier: MIT
/*
 * Recursion past METER_STACK_CAP (3000 frames, capacity 1008) is counted,
 * not corrupted: exact calls, the stack comes back, samples taken at the
 * bottom are marked truncated, none is invalid, the process does not crash.
 */
#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], out[256], env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { "deep", "3000", "200", NULL };
	struct meter_profile *p;
	const struct meter_func *spin;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(path, sizeof(path), "%s/deep-%s.json", scratch(), mode);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ok(run_prog(prog, env, args, out, sizeof(out)) == 0,
	   "%s: 3000-deep recursion exits 0", mode);
	ok(printed_depth(out) == 1, "%s: depth back to 1 (got %ld)", mode,
	   printed_depth(out));
	p = load_profile(path);
	if (!p) {
		ok(0, "%s: profile written", mode);
		return;
	}
	ok(calls_of(p, "deep") == 3000, "%s: deep reports 3000 calls (got %lld)",
	   mode, calls_of(p, "deep"));
	ok(p->truncated > 0, "%s: samples past the capacity counted as truncated (%llu)",
	   mode, (unsigned long long)p->truncated);
	ok(p->invalid == 0, "%s: no invalid samples", mode);
	spin = func_named(p, "spin");
	ok(spin && spin->self_samples * 10 >= p->samples * 8,
	   "%s: the bottom's spin keeps its self time", mode);
	meter_profile_free(p);
}

int main(void)
{
	check("manual");
	check("auto");
	scratch_cleanup();
	return tap_done();
}
