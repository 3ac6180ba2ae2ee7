// SPDX-License-Identifier: MIT
/*
 * A C++ exception thrown through 20 profiled frames and caught 2000 times
 * leaves a correct profile: exact call counts, the shadow stack back at
 * main's depth, and no sampled stack with frames that were unwound; in
 * each mode (variants), signal backend.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(exception) {
	struct meter_profile *p;
	char out[256];
};

FIXTURE_VARIANT(exception) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(exception, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(exception, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(exception, plugin) { .mode = "plugin" };

/* lib_cxx 2000 20: catcher calls 20 throwers deep, 2000 times; the last
 * throws, catcher catches and calls leaf; then main spins */
FIXTURE_SETUP(exception)
{
	char prog[64], label[64];
	const char *args[] = { "2000", "20", NULL };
	int status;

	snprintf(prog, sizeof(prog), "lib_cxx_%s", variant->mode);
	snprintf(label, sizeof(label), "%s exceptions", variant->mode);
	self->p = run_profile(prog, "signal", args, self->out,
			      sizeof(self->out), label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(exception)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(exception, shadow_stack_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->out));
}

TEST_F(exception, exact_counts_through_exceptions)
{
	EXPECT_EQ(40000, calls_of(self->p, "thrower"));
	EXPECT_EQ(2000, calls_of(self->p, "catcher"));
	EXPECT_EQ(2000, calls_of(self->p, "leaf"));
}

TEST_F(exception, no_sampled_stack_carries_unwound_frames)
{
	char buf[8192];
	size_t i;

	for (i = 0; i < self->p->nstacks; i++) {
		stack_string(self->p, &self->p->stacks[i], buf, sizeof(buf));
		EXPECT_GE(23, self->p->stacks[i].depth) TH_LOG("%s", buf);
		EXPECT_TRUE(!strncmp(buf, "main;catcher", 12) ||
			    !strcmp(buf, "main;spin") || !strcmp(buf, "main"))
			TH_LOG("unexpected stack %s", buf);
	}
}

TEST_F(exception, time_after_charged_to_main_spin)
{
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_LT(0, samples_of_stack(self->p, "main;spin"));
}

TEST_HARNESS_MAIN
