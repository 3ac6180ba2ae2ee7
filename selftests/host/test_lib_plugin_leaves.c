// SPDX-License-Identifier: MIT
/*
 * Once inlining is done, a body that calls nothing and holds no other
 * instrumented body takes the flat form (plugin/entry_forms.cc): it is
 * counted and made current, and pushes nothing; one that still calls out,
 * or holds an inlined instrumented copy, keeps its push, and an inlined
 * copy's push checks for stale frames only where longjmp can re-enter
 * its host.  Its samples
 * have the stacks the push would have given.  selftests/host/
 * lib_plugin_leaves.c, -O2 and the default rules; the signal backend on
 * the host, meter.ko in the VM (selftests/vm/test_lib_plugin_leaves.sh).
 */
#include "lib_backend.h"

#define CALLS 1000

FIXTURE(leaves) {
	struct backend_run r;
};

FIXTURE_SETUP(leaves)
{
	char n[32], w[32];
	const char *args[] = { n, w, NULL };

	snprintf(n, sizeof(n), "%d", CALLS);
	/* about 0.2 s of CPU in each of the two long calls (TCG: ~10x) */
	snprintf(w, sizeof(w), "%d", on_kernel() ? 20000000 : 200000000);
	backend_run(&self->r, "lib_plugin_leaves", "signal", args, "leaves",
		    "METER_PERIOD_NS=1000000");
	ASSERT_BACKEND_RUN(&self->r);
}

FIXTURE_TEARDOWN(leaves)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(leaves, bodies_that_became_leaves_push_nothing)
{
	EXPECT_NE(NULL, strstr(self->r.out, "became_leaf=0 inlined_leaf=0"))
		TH_LOG("%s", self->r.out);
}

TEST_F(leaves, bodies_that_call_out_or_hold_copies_push)
{
	EXPECT_NE(NULL, strstr(self->r.out, "hosts_copy=1 keeps_call=1"))
		TH_LOG("%s", self->r.out);
}

/* an inlined copy pushes one frame, without the stale-frame test where
 * nothing re-enters its host, with it where longjmp does (deep_jump's
 * four frames left above the host are taken for stale) */
TEST_F(leaves, inlined_copies_push_one_frame_also_after_longjmp)
{
	EXPECT_NE(NULL, strstr(self->r.out, "host_plain=1 host_setjmp=1"))
		TH_LOG("%s", self->r.out);
}

TEST_F(leaves, exact_counts_and_the_tiny_function_left_alone)
{
	EXPECT_EQ(CALLS + 1, calls_of(self->r.p, "became_leaf"));
	EXPECT_EQ(2 * (CALLS + 1), calls_of(self->r.p, "inlined_leaf"));
	EXPECT_EQ(CALLS + 1, calls_of(self->r.p, "hosts_copy"));
	EXPECT_EQ(CALLS, calls_of(self->r.p, "keeps_call"));
	EXPECT_EQ(-1, calls_of(self->r.p, "mix"));
	EXPECT_EQ(4, calls_of(self->r.p, "in_line_stacked"));
	EXPECT_EQ(4, calls_of(self->r.p, "deep_jump"));
}

/*
 * The record of a function whose every body became a leaf says so
 * (plugin/entry_forms.cc), and the profile charges its calls what the flat
 * sequence costs, in both backends' profiles (the kernel's through the
 * function's own cost): --correct reads that cost.
 */
TEST_F(leaves, records_whose_bodies_all_became_leaves_cost_a_flat_call)
{
	const char *flat[] = { "became_leaf", "inlined_leaf" };
	const char *push[] = { "hosts_copy", "keeps_call", "in_line_stacked" };
	const struct meter_func *f;
	size_t i;

	ASSERT_NE(0, self->r.p->call_cost_ps);
	for (i = 0; i < sizeof(flat) / sizeof(flat[0]); i++) {
		f = func_named(self->r.p, flat[i]);
		ASSERT_NE(NULL, f);
		EXPECT_NE(0, f->cost_ps) TH_LOG("%s", flat[i]);
		if (self->r.p->flat_call_cost_ps)
			EXPECT_EQ(self->r.p->flat_call_cost_ps, f->cost_ps);
	}
	for (i = 0; i < sizeof(push) / sizeof(push[0]); i++) {
		f = func_named(self->r.p, push[i]);
		ASSERT_NE(NULL, f);
		EXPECT_EQ(0, f->cost_ps) TH_LOG("%s", push[i]);
		EXPECT_FALSE(f->flat) TH_LOG("%s", push[i]);
	}
}

TEST_F(leaves, shadow_stack_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->r.out));
}

/* every sample of each is on the stack a push would have given it */
TEST_F(leaves, samples_keep_the_stacks_of_a_push)
{
	const struct meter_func *b = func_named(self->r.p, "became_leaf");
	const struct meter_func *c = func_named(self->r.p, "inlined_leaf");

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	SKIP_IF_SIGNAL_STARVED(self->r.p);
	EXPECT_LT(0, b->self_samples);
	EXPECT_LT(0, c->self_samples);
	EXPECT_EQ(b->self_samples,
		  samples_of_stack(self->r.p, "main;became_leaf"));
	EXPECT_EQ(c->self_samples,
		  samples_of_stack(self->r.p, "main;hosts_copy;inlined_leaf"));
}

TEST_HARNESS_MAIN
