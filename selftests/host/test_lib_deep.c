// SPDX-License-Identifier: MIT
/*
 * Recursion past METER_STACK_CAP (3000 frames, capacity 1008) is counted,
 * not corrupted: exact calls, the stack comes back, samples taken at the
 * bottom are marked truncated, none is invalid, the process does not crash.
 */
#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "deep", "3000", "200", NULL };
	struct meter_profile *p;
	const struct meter_func *spin;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s: 3000-deep recursion", mode);
	p = run_backend(prog, "signal", args, out, sizeof(out), label, NULL);
	ok(printed_depth(out) == 1, "%s: depth back to 1 (got %ld)", mode,
	   printed_depth(out));
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
	check("plugin");
	scratch_cleanup();
	return tap_done();
}
