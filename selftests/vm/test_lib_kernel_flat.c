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

FIXTURE(flat) {
	struct kernel_run r;
};

FIXTURE_SETUP(flat)
{
	const char *args[] = { "child", NULL };

	kernel_run(&self->r, "test_lib_flat", args, "flat", NULL);
	ASSERT_KERNEL_RUN(&self->r);
}

FIXTURE_TEARDOWN(flat)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(flat, return_makes_the_caller_current_again)
{
	EXPECT_NE(NULL, strstr(self->r.out, "restored=1 current_main=1 depth=1"));
}

TEST_F(flat, exact_call_counts)
{
	struct meter_profile *p = self->r.p;

	EXPECT_EQ(100000, calls_of(p, "tiny"));
	EXPECT_EQ(1, calls_of(p, "flat_spin"));
	EXPECT_EQ(1, calls_of(p, "flat_mid"));
	EXPECT_EQ(1, calls_of(p, "stacked_child"));
	EXPECT_EQ(1, calls_of(p, "parent"));
	/* shares are checked on the host (test_lib_flat, signal backend):
	 * under emulation a stalled VM can weigh many periods at once */
	TH_LOG("self shares: parent %.1f%%, flat_spin %.1f%%, flat_mid %.1f%%, stacked_child %.1f%% (expected 22.2, 44.4, 22.2, 11.1)",
	       share(p, "parent"), share(p, "flat_spin"),
	       share(p, "flat_mid"), share(p, "stacked_child"));
}

TEST_F(flat, flat_function_is_the_leaf_over_the_stacked_chain)
{
	const struct meter_func *f = func_named(self->r.p, "flat_spin");

	ASSERT_NE(NULL, f);
	ASSERT_LT(0, f->self_samples);
	EXPECT_EQ(f->self_samples,
		  samples_of_stack(self->r.p, "child;parent;flat_spin"));
	EXPECT_EQ(f->self_samples, f->total_samples);
}

TEST_F(flat, stacked_callee_hangs_from_the_nearest_stacked_frame)
{
	EXPECT_LT(0, samples_of_stack(self->r.p, "child;parent;stacked_child"));
	EXPECT_EQ(0, samples_of_stack(self->r.p,
				      "child;parent;flat_mid;stacked_child"));
}

TEST_HARNESS_MAIN
