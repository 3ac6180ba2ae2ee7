// SPDX-License-Identifier: MIT
/*
 * A forked child gets its own kernel session, linked to its parent's by
 * parent_cookie, with only its own calls; in each mode (the variants).
 */
#include "lib_kernel.h"

FIXTURE(fork) {
	struct kernel_run r;
	struct meter_profile *child;
};

FIXTURE_VARIANT(fork) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(fork, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(fork, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(fork, plugin) { .mode = "plugin" };

/* "fork 1000": the parent calls leaf 1000 times, the child 2000 */
FIXTURE_SETUP(fork)
{
	char prog[64];
	const char *args[] = { "fork", "1000", NULL };
	const char *c;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	kernel_run(&self->r, prog, args, "fork", NULL);
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

TEST_HARNESS_MAIN
