// SPDX-License-Identifier: MIT
/*
 * longjmp out of deep recursion, 3000 times, leaves a correct profile:
 * exact call counts, the shadow stack back at main's depth, and no sampled
 * stack carrying stale frames (never deeper than the recursion, always
 * rooted at main;jumper or main;spin); in each mode (variants), signal
 * backend.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(longjmp) {
	struct meter_profile *p;
	char out[256];
};

FIXTURE_VARIANT(longjmp) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(longjmp, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(longjmp, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(longjmp, plugin) { .mode = "plugin" };

/* "longjmp 3000 50": jumper recurses 50 deep and longjmps back, 3000
 * times, calling leaf after each; then main spins */
FIXTURE_SETUP(longjmp)
{
	char prog[64], label[64];
	const char *args[] = { "longjmp", "3000", "50", NULL };
	int status;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s longjmp", variant->mode);
	self->p = run_profile(prog, "signal", args, self->out,
			      sizeof(self->out), label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(longjmp)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(longjmp, shadow_stack_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->out));
}

TEST_F(longjmp, exact_counts_after_longjmps)
{
	EXPECT_EQ(150000, calls_of(self->p, "recurse"));
	EXPECT_EQ(3000, calls_of(self->p, "jumper"));
	EXPECT_EQ(3000, calls_of(self->p, "leaf"));
}

TEST_F(longjmp, no_sampled_stack_carries_stale_frames)
{
	char buf[8192];
	size_t i;

	for (i = 0; i < self->p->nstacks; i++) {
		stack_string(self->p, &self->p->stacks[i], buf, sizeof(buf));
		EXPECT_GE(53, self->p->stacks[i].depth) TH_LOG("%s", buf);
		EXPECT_TRUE(!strncmp(buf, "main;jumper", 11) ||
			    !strcmp(buf, "main;spin") || !strcmp(buf, "main"))
			TH_LOG("unexpected stack %s", buf);
	}
}

TEST_F(longjmp, time_after_charged_to_main_spin)
{
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_LT(0, samples_of_stack(self->p, "main;spin"));
}

TEST_HARNESS_MAIN
