// SPDX-License-Identifier: MIT
/*
 * A forked child gets its own kernel session, linked to its parent's by
 * parent_cookie, with only its own calls, also when it leaves with _exit();
 * in each mode (the variants).  No sample of the child is invalid, also at
 * 10 us a sample: the child's page keeps the parent's frames, whose ids
 * its session learns only after it has registered (a machine with its
 * other core busy gave 1 to 4 invalid samples at 1 ms).
 */
#include "lib_kernel.h"

FIXTURE(fork) {
	struct kernel_run r;
	struct meter_profile *child;
};

FIXTURE_VARIANT(fork) {
	const char *mode, *what;
	const char *extra;	/* "K=V" for the run, or NULL */
};

FIXTURE_VARIANT_ADD(fork, manual) { .mode = "manual", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, automatic) { .mode = "auto", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, plugin) { .mode = "plugin", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, manual__exit) {
	.mode = "manual", .what = "fork_exit" };
FIXTURE_VARIANT_ADD(fork, plugin__exit) {
	.mode = "plugin", .what = "fork_exit" };
FIXTURE_VARIANT_ADD(fork, plugin_10us) {
	.mode = "plugin", .what = "fork", .extra = "METER_PERIOD_NS=10000" };

/* "fork 1000": the parent calls leaf 1000 times, the child 2000, spins
 * 100 ms and exit()s; "fork_exit 1000": the child _exit()s */
FIXTURE_SETUP(fork)
{
	char prog[64];
	const char *args[] = { variant->what, "1000", NULL };
	const char *c;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	kernel_run(&self->r, prog, args, "fork", variant->extra);
	ASSERT_KERNEL_RUN(&self->r);
	c = strstr(self->r.out, "child=");
	ASSERT_NE(NULL, c);
	self->child = kernel_profile(atoi(c + 6));
	ASSERT_NE(NULL, self->child) TH_LOG("the child has no session");
}

FIXTURE_TEARDOWN(fork)
{
	meter_profile_free(self->r.p);
	meter_profile_free(self->child);
	scratch_cleanup();
}

TEST_F(fork, child_session_linked_to_the_parent)
{
	EXPECT_NE(self->r.p->cookie, self->child->cookie);
	EXPECT_EQ(self->r.p->cookie, self->child->parent_cookie);
}

TEST_F(fork, each_session_has_only_its_own_calls)
{
	EXPECT_EQ(1000, calls_of(self->r.p, "leaf"));
	EXPECT_EQ(2000, calls_of(self->child, "leaf"));
}

TEST_F(fork, child_keeps_its_calls_and_time_by_exit_or__exit)
{
	const struct meter_func *spin = func_named(self->child, "spin");

	ASSERT_NE(NULL, spin);
	EXPECT_EQ(1, spin->calls);
	EXPECT_LT(0, spin->self_samples);
	EXPECT_EQ(0, self->child->invalid);
}

TEST_HARNESS_MAIN
