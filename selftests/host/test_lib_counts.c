// SPDX-License-Identifier: MIT
/*
 * Call counts are exact: a function called N times reports N, in each of
 * the four instrumentation modes (the variants).  On the host with the off
 * backend (calls only, no samples: a profile file); in the VM
 * (selftests/vm/test_lib_counts.sh) with meter.ko, libmeter flushing the
 * counts into the session.  On kselftest_harness.h: one behaviour per
 * test, each test in its own child with the workload run afresh.
 */
#include "lib_backend.h"

FIXTURE(counts) {
	struct backend_run r;
};

FIXTURE_VARIANT(counts) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(counts, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(counts, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(counts, plugin) { .mode = "plugin" };
FIXTURE_VARIANT_ADD(counts, api) { .mode = "api" };

/* lib_workload's "counts 1000": main calls top 1000 times, top calls mid,
 * mid calls leaf four times */
FIXTURE_SETUP(counts)
{
	char prog[64];
	const char *args[] = { "counts", "1000", NULL };

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	backend_run(&self->r, prog, "off", args, "counts", NULL);
	ASSERT_BACKEND_RUN(&self->r);
}

FIXTURE_TEARDOWN(counts)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(counts, profile_is_the_backends_and_off_takes_no_samples)
{
	EXPECT_STREQ(self->r.backend, self->r.p->backend);
	if (!on_kernel())
		EXPECT_EQ(0, self->r.p->samples);
}

TEST_F(counts, each_function_reports_its_exact_calls)
{
	EXPECT_EQ(1, calls_of(self->r.p, "main"));
	EXPECT_EQ(1000, calls_of(self->r.p, "top"));
	EXPECT_EQ(1000, calls_of(self->r.p, "mid"));
	EXPECT_EQ(4000, calls_of(self->r.p, "leaf"));
}

TEST_F(counts, shadow_stack_back_to_main_after_the_calls)
{
	EXPECT_EQ(1, printed_depth(self->r.out));
}

TEST_F(counts, calibrated_call_cost_in_the_profile)
{
	EXPECT_LT(0, self->r.p->call_cost_ps);
}

TEST_HARNESS_MAIN
