// SPDX-License-Identifier: MIT
/*
 * Call counts are exact: a function called N times reports N, in each of
 * the four instrumentation modes (the variants), with the off backend
 * (calls only, no samples).  On kselftest_harness.h: one behaviour per
 * test, each test in its own child with the workload run afresh.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(counts) {
	struct meter_profile *p;
	char out[256];
	int status;
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
	char prog[64], label[64];
	const char *args[] = { "counts", "1000", NULL };

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s counts", variant->mode);
	self->p = run_profile(prog, "off", args, self->out,
			      sizeof(self->out), label, NULL, &self->status);
	ASSERT_EQ(0, self->status);
	ASSERT_NE(NULL, self->p) TH_LOG("no readable JSON profile");
}

FIXTURE_TEARDOWN(counts)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(counts, off_backend_takes_no_samples)
{
	EXPECT_STREQ("off", self->p->backend);
	EXPECT_EQ(0, self->p->samples);
}

TEST_F(counts, each_function_reports_its_exact_calls)
{
	EXPECT_EQ(1, calls_of(self->p, "main"));
	EXPECT_EQ(1000, calls_of(self->p, "top"));
	EXPECT_EQ(1000, calls_of(self->p, "mid"));
	EXPECT_EQ(4000, calls_of(self->p, "leaf"));
}

TEST_F(counts, shadow_stack_back_to_main_after_the_calls)
{
	EXPECT_EQ(1, printed_depth(self->out));
}

TEST_F(counts, calibrated_call_cost_in_the_profile)
{
	EXPECT_LT(0, self->p->call_cost_ps);
}

TEST_HARNESS_MAIN
