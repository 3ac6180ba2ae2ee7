// SPDX-License-Identifier: MIT
/*
 * The GCC plugin's corner cases (selftests/host/lib_plugin_corners.c):
 * exact counts through a sibling call, a variadic function, a noreturn
 * function left by longjmp, recursion, a flat leaf, a shared library built
 * with the plugin and calls from constructors; nothing recorded for
 * no_instrument_function or a function left out by a plugin argument;
 * calls made before libmeter's constructor run unprofiled, without a
 * crash; and a sibling call keeps its caller on the stack.
 */
#include "lib_tap.h"

static void check(const char *backend)
{
	char label[64], out[256];
	const char *args[] = { "1000", NULL };
	struct meter_profile *p;
	const struct meter_func *spin;
	uint64_t in;

	snprintf(label, sizeof(label), "plugin corners, %s backend", backend);
	p = run_backend("lib_plugin_corners", backend, args, out, sizeof(out),
			label, NULL);
	ok(printed_depth(out) == 1, "%s: shadow stack back to depth 1 (got %ld)",
	   backend, printed_depth(out));
	ok(strstr(out, "early=3") != NULL,
	   "%s: the program ran its three early calls", backend);
	if (!p) {
		ok(0, "%s: profile written", backend);
		return;
	}
	ok(calls_of(p, "main") == 1, "%s: main counted once", backend);
	ok(calls_of(p, "tail_a") == 1001 && calls_of(p, "tail_b") == 1001,
	   "%s: a sibling call counts both ends (tail_a %lld, tail_b %lld)",
	   backend, calls_of(p, "tail_a"), calls_of(p, "tail_b"));
	ok(calls_of(p, "vsum") == 1000, "%s: variadic vsum 1000 (got %lld)",
	   backend, calls_of(p, "vsum"));
	ok(calls_of(p, "bail") == 1000,
	   "%s: noreturn bail, left by longjmp, 1000 (got %lld)", backend,
	   calls_of(p, "bail"));
	ok(calls_of(p, "twice") == 5000,
	   "%s: recursive twice(4) x 1000 is 5000 calls (got %lld)", backend,
	   calls_of(p, "twice"));
	ok(calls_of(p, "leaf_flat") == 3000,
	   "%s: flat leaf_flat 3000, through uninstrumented callers too (got %lld)",
	   backend, calls_of(p, "leaf_flat"));
	ok(calls_of(p, "in_dso") == 1000 && calls_of(p, "dso_helper") == 1000,
	   "%s: a shared library built with the plugin (in_dso %lld, dso_helper %lld)",
	   backend, calls_of(p, "in_dso"), calls_of(p, "dso_helper"));
	ok(calls_of(p, "untouched") < 0,
	   "%s: no_instrument_function has no record", backend);
	ok(calls_of(p, "skipped_by_arg") < 0,
	   "%s: exclude-function=skipped_by_arg has no record", backend);
	/* .preinit_array runs before libmeter's constructor: not counted;
	 * the constructor's two calls are */
	ok(calls_of(p, "early_fn") == 2,
	   "%s: early_fn counts its 2 calls from a constructor, not the preinit one (got %lld)",
	   backend, calls_of(p, "early_fn"));
	spin = func_named(p, "spin_here");
	in = samples_of_stack(p, "main;tail_a;tail_b;spin_here");
	if (!strcmp(backend, "off"))
		ok(p->samples == 0, "%s: no samples", backend);
	else
		ok(spin && spin->self_samples >= 100 &&
		   in * 10 >= spin->self_samples * 9,
		   "%s: spin_here under main;tail_a;tail_b (%llu of %llu)",
		   backend, (unsigned long long)in,
		   spin ? (unsigned long long)spin->self_samples : 0ULL);
	ok(p->invalid == 0, "%s: no invalid samples", backend);
	meter_profile_free(p);
}

int main(void)
{
	check("off");
	check("signal");
	scratch_cleanup();
	return tap_done();
}
