// SPDX-License-Identifier: MIT
/*
 * Flat functions (METER_FUNCTION_FLAT) under meter.ko: exact call counts,
 * the caller current again on return, and meter.ko's stacks follow the rule of
 * Documentation/libmeter.md: the stacked chain, then the current flat
 * function as the leaf.  Runs selftests/host/test_lib_flat's child.
 */
#include "lib_kernel.h"

static double share(const struct meter_profile *p, const char *name)
{
	const struct meter_func *f = func_named(p, name);
	uint64_t all = 0;
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		all += p->funcs[i].self_samples;
	return f && all ? 100.0 * (double)f->self_samples / (double)all : -1;
}

int main(void)
{
	const char *args[] = { "child", NULL };
	const struct meter_func *f;
	struct meter_profile *p;
	char out[1024];

	p = run_kernel("test_lib_flat", args, out, sizeof(out), "flat");
	ok(strstr(out, "restored=1 current_main=1 depth=1") != NULL,
	   "a flat function's return makes its caller current again");
	ok(p != NULL, "session read back");
	if (!p)
		return tap_done();
	ok(calls_of(p, "tiny") == 100000 && calls_of(p, "flat_spin") == 1 &&
	   calls_of(p, "flat_mid") == 1 && calls_of(p, "stacked_child") == 1 &&
	   calls_of(p, "parent") == 1,
	   "exact call counts (tiny %lld of 100000)", calls_of(p, "tiny"));
	/* shares are checked on the host (test_lib_flat, signal backend):
	 * under emulation a stalled VM can weigh many periods at once */
	diag("self shares: parent %.1f%%, flat_spin %.1f%%, flat_mid %.1f%%, stacked_child %.1f%% (expected 22.2, 44.4, 22.2, 11.1)",
	     share(p, "parent"), share(p, "flat_spin"), share(p, "flat_mid"),
	     share(p, "stacked_child"));
	f = func_named(p, "flat_spin");
	ok(f && f->self_samples &&
	   samples_of_stack(p, "child;parent;flat_spin") == f->self_samples &&
	   f->total_samples == f->self_samples,
	   "meter.ko: flat_spin's samples have the stack child;parent;flat_spin (%llu of %llu)",
	   (unsigned long long)samples_of_stack(p, "child;parent;flat_spin"),
	   f ? (unsigned long long)f->self_samples : 0ULL);
	ok(samples_of_stack(p, "child;parent;stacked_child") > 0 &&
	   samples_of_stack(p, "child;parent;flat_mid;stacked_child") == 0,
	   "meter.ko: a stacked callee of a flat function hangs from the nearest stacked frame");
	meter_profile_free(p);
	scratch_cleanup();
	return tap_done();
}
