// SPDX-License-Identifier: MIT
/*
 * A profiled function inlined into its profiled caller runs in the
 * caller's frame: it is counted, pushed above its caller (not taken for a
 * stale frame), and the stack comes back right.
 */
#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "inlined", "10000", NULL };
	struct meter_profile *p;
	const struct meter_func *spin;
	uint64_t in;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label),
		 "%s: workload with an inlined profiled function", mode);
	p = run_backend(prog, "signal", args, out, sizeof(out), label, NULL);
	ok(printed_depth(out) == 1, "%s: depth back to 1 (got %ld)", mode,
	   printed_depth(out));
	ok(calls_of(p, "inl_small") == 20000 && calls_of(p, "outer_inl") == 10000,
	   "%s: inlined function counted (inl_small %lld, outer_inl %lld)", mode,
	   calls_of(p, "inl_small"), calls_of(p, "outer_inl"));
	spin = func_named(p, "spin");
	in = p ? samples_of_stack(p, "main;outer_inl;inl_small;spin") : 0;
	ok(spin && spin->self_samples && in * 10 >= spin->self_samples * 9,
	   "%s: time inside it is charged through main;outer_inl;inl_small (%llu of %llu)",
	   mode, (unsigned long long)in,
	   spin ? (unsigned long long)spin->self_samples : 0ULL);
	meter_profile_free(p);
}

int main(void)
{
	check("manual");
	check("auto");
	check("plugin");
	check("api");
	scratch_cleanup();
	return tap_done();
}
