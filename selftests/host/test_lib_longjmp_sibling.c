// SPDX-License-Identifier: MIT
/*
 * A dispatcher calls, from one call site through a pointer, a function
 * that leaves by longjmp back into it, then another: the second one's
 * frame lies where the first one left its own.  No sampled stack shows
 * the second under the first (before, every one did), in each mode:
 * libmeter's longjmp takes the frames the jump leaves off.  With the C
 * library's own longjmp (siblings_libc), only a plugin build's entry can
 * tell that frame from an inlined copy's host: it knows it is a
 * function's own, and the slow path takes the frame off.  From past the
 * shadow stack's capacity (1100 frames deep), every frame goes.  Nor
 * does a sample taken as runner enters, before that path has taken the
 * frame off (plugin_libc_many: a million entries, no spin, where a
 * current stored before the test showed runner over thrower in about
 * one sample in 140).  Signal backend.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(sibling) {
	struct meter_profile *p;
	char out[256];
};

FIXTURE_VARIANT(sibling) {
	const char *mode;
	const char *cmd;
	const char *depth;	/* thrower jumps from this deep */
	const char *k, *ms;	/* "200" and "3" if NULL */
};

FIXTURE_VARIANT_ADD(sibling, manual) {
	.mode = "manual", .cmd = "siblings" };
FIXTURE_VARIANT_ADD(sibling, automatic) {
	.mode = "auto", .cmd = "siblings" };
FIXTURE_VARIANT_ADD(sibling, plugin) {
	.mode = "plugin", .cmd = "siblings" };
FIXTURE_VARIANT_ADD(sibling, plugin_libc_longjmp) {
	.mode = "plugin", .cmd = "siblings_libc" };
FIXTURE_VARIANT_ADD(sibling, plugin_libc_many) {
	.mode = "plugin", .cmd = "siblings_libc", .k = "1000000", .ms = "0" };
FIXTURE_VARIANT_ADD(sibling, manual_past_capacity) {
	.mode = "manual", .cmd = "siblings", .depth = "1100" };
FIXTURE_VARIANT_ADD(sibling, automatic_past_capacity) {
	.mode = "auto", .cmd = "siblings", .depth = "1100" };
FIXTURE_VARIANT_ADD(sibling, plugin_past_capacity) {
	.mode = "plugin", .cmd = "siblings", .depth = "1100" };

/* "siblings 200 3": 200 times thrower (longjmps back), then runner,
 * which spins 3 ms in spin() */
FIXTURE_SETUP(sibling)
{
	const char *args[] = { variant->cmd, variant->k ? variant->k : "200",
			       variant->ms ? variant->ms : "3",
			       variant->depth, NULL };
	char prog[64], label[64];
	int status;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s %s", variant->mode, variant->cmd);
	self->p = run_profile(prog, "signal", args, self->out,
			      sizeof(self->out), label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(sibling)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(sibling, exact_counts)
{
	long k = atol(variant->k ? variant->k : "200");

	EXPECT_EQ(1, calls_of(self->p, "dispatcher"));
	EXPECT_EQ(k, calls_of(self->p, "thrower"));
	EXPECT_EQ(k, calls_of(self->p, "runner"));
	EXPECT_EQ(k, calls_of(self->p, "spin"));
}

TEST_F(sibling, shadow_stack_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->out));
}

/* thrower's own samples have it (and fall) live on top: not those */
TEST_F(sibling, runner_never_under_the_frames_longjmp_left)
{
	static const char want[] = "main;dispatcher;runner";
	char buf[8192];
	size_t i;

	for (i = 0; i < self->p->nstacks; i++) {
		stack_string(self->p, &self->p->stacks[i], buf, sizeof(buf));
		if (strstr(buf, "runner"))
			EXPECT_EQ(0, strncmp(buf, want, sizeof(want) - 1))
				TH_LOG("%s", buf);
	}
}

TEST_F(sibling, runner_time_under_dispatcher)
{
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_LT(0, samples_of_stack(self->p,
				      "main;dispatcher;runner;spin"));
}

TEST_HARNESS_MAIN
