// SPDX-License-Identifier: MIT
/*
 * Once inlining is done, a body that calls nothing and holds no other
 * instrumented body takes the flat form (plugin/entry_forms.cc): it is
 * counted and made current, and pushes nothing; one that still calls out
 * keeps its push, and an inlined copy's push checks for stale frames only
 * where longjmp can re-enter its host.  An inlined copy that calls
 * nothing is counted only where the build has inline records (-g): its
 * host stays current (and pushes nothing for it), and the reports give
 * it its samples by address, on the stack under its host.  Without them
 * (-g0) the copy is flat and its host pushes.  Its samples have the
 * stacks the push would have given.  selftests/host/lib_plugin_leaves.c,
 * -O2 and the default rules; the signal backend on the host, meter.ko in
 * the VM (selftests/vm/test_lib_plugin_leaves.sh).
 */
#include "lib_backend.h"
#include "analysis.h"

#define CALLS 1000

FIXTURE(leaves) {
	struct backend_run r;
};

FIXTURE_VARIANT(leaves) {
	const char *prog;
	bool counted;	/* inlined_leaf's copies counted only */
};

FIXTURE_VARIANT_ADD(leaves, with_inline_records) {
	.prog = "lib_plugin_leaves",
	.counted = true,
};

FIXTURE_VARIANT_ADD(leaves, without_debug_records) {
	.prog = "lib_plugin_leaves_nog",
	.counted = false,
};

FIXTURE_SETUP(leaves)
{
	char n[32], w[32];
	const char *args[] = { n, w, NULL };

	snprintf(n, sizeof(n), "%d", CALLS);
	/* about 0.2 s of CPU in each of the two long calls (TCG: ~10x) */
	snprintf(w, sizeof(w), "%d", on_kernel() ? 20000000 : 200000000);
	backend_run(&self->r, variant->prog, "signal", args, "leaves",
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

TEST_F(leaves, bodies_that_call_out_push)
{
	EXPECT_NE(NULL, strstr(self->r.out, "keeps_call=1"))
		TH_LOG("%s", self->r.out);
}

/* a host of copies counted only pushes nothing for them; of flat ones,
 * it pushes */
TEST_F(leaves, hosts_push_for_flat_copies_only)
{
	EXPECT_NE(NULL, strstr(self->r.out, variant->counted ?
			       "hosts_copy=0" : "hosts_copy=1"))
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

/*
 * A body of METER_FUNCTION() inlined into a function the plugin
 * instruments pushes over that function's frame, on the fast path: the
 * host keeps its return address for the macro's test, which would take
 * the host for a frame left behind and pop it.  The slow path is taken
 * once a thread (two threads: main and tiny_start's) and once past the
 * stack's capacity (nested_copies_at_the_capacity_push_two_frames).
 */
TEST_F(leaves, a_macro_body_inlined_into_a_plugin_host_pushes_over_it)
{
	EXPECT_NE(NULL, strstr(self->r.out, "host_macro=1"))
		TH_LOG("%s", self->r.out);
	EXPECT_EQ(2 * (CALLS + 1), calls_of(self->r.p, "by_macro"));
	EXPECT_EQ(CALLS + 1, calls_of(self->r.p, "host_macro"));
	EXPECT_GE(3, self->r.p->slow_entries);
}

/*
 * Two copies nested in a function without an entry of its own, the outer
 * one at the stack's last slot: the inner one's slow path (past the
 * capacity) takes the outer for its host by the return address the outer
 * kept, and the two push two frames.
 */
TEST_F(leaves, nested_copies_at_the_capacity_push_two_frames)
{
	EXPECT_NE(NULL, strstr(self->r.out, "nested_at_cap=2"))
		TH_LOG("%s", self->r.out);
}

TEST_F(leaves, exact_counts_and_the_tiny_function_left_alone)
{
	EXPECT_EQ(CALLS + 1, calls_of(self->r.p, "became_leaf"));
	/* and one in tiny_start's thread */
	EXPECT_EQ(2 * (CALLS + 1) + 1, calls_of(self->r.p, "inlined_leaf"));
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
	const char *flat[] = { "became_leaf", "inlined_leaf", "hosts_copy" };
	const char *push[] = { "keeps_call", "in_line_stacked", "hosts_copy" };
	size_t nflat = variant->counted ? 3 : 2;
	const struct meter_func *f;
	size_t i;

	ASSERT_NE(0, self->r.p->call_cost_ps);
	for (i = 0; i < nflat; i++) {
		f = func_named(self->r.p, flat[i]);
		ASSERT_NE(NULL, f);
		EXPECT_NE(0, f->cost_ps) TH_LOG("%s", flat[i]);
		if (self->r.p->flat_call_cost_ps)
			EXPECT_EQ(self->r.p->flat_call_cost_ps, f->cost_ps);
	}
	for (i = 0; i < 5 - nflat; i++) {
		f = func_named(self->r.p, push[i]);
		ASSERT_NE(NULL, f);
		EXPECT_EQ(0, f->cost_ps) TH_LOG("%s", push[i]);
		EXPECT_FALSE(f->flat) TH_LOG("%s", push[i]);
	}
}

/* a thread whose only instrumented code is inlined_leaf's copy in a
 * function without an entry of its own is registered by it */
TEST_F(leaves, a_thread_that_runs_copies_only_is_registered)
{
	EXPECT_EQ(2, self->r.p->nthreads);
}

TEST_F(leaves, shadow_stack_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->r.out));
}

/*
 * Every sample of each is on the stack a push would have given it: as
 * taken, and where inlined_leaf's copies are counted only, once the
 * samples are given out by address (as the reports do by default), its
 * own under its host's.
 */
TEST_F(leaves, samples_keep_the_stacks_of_a_push)
{
	const struct meter_func *b = func_named(self->r.p, "became_leaf");
	const struct meter_func *c = func_named(self->r.p, "inlined_leaf");
	const struct meter_func *h = func_named(self->r.p, "hosts_copy");
	struct meter_profile *a;
	bool failed;

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, h);
	SKIP_IF_SIGNAL_STARVED(self->r.p);
	EXPECT_LT(0, b->self_samples);
	EXPECT_EQ(b->self_samples,
		  samples_of_stack(self->r.p, "main;became_leaf"));
	if (!variant->counted) {
		char all[2048];

		stacks_of_leaf(self->r.p, "inlined_leaf", all, sizeof(all));
		EXPECT_LT(0, c->self_samples);
		/* tiny_start's copy is the root of its thread's stack: the
		 * end of that thread's registration, in the copy's entry, is
		 * sampled there (5 runs of 70 in the VM, on 6.1) */
		EXPECT_EQ(c->self_samples,
			  samples_of_stack(self->r.p,
					   "main;hosts_copy;inlined_leaf") +
			  samples_of_stack_off(self->r.p, "inlined_leaf",
					       (uint32_t)self->r.p->pid))
			TH_LOG("inlined_leaf's stacks: %s", all);
		return;
	}
	/* as taken: the copies' time is their host's */
	EXPECT_EQ(0, c->self_samples);
	EXPECT_LT(0, h->self_samples);
	EXPECT_EQ(h->self_samples,
		  samples_of_stack(self->r.p, "main;hosts_copy"));
	a = profile_attributed_copy(self->r.p, ATTRIB_BY_ADDRESS, &failed);
	ASSERT_NE(NULL, a) TH_LOG("no addresses, or unread (failed %d)",
				  failed);
	c = func_named(a, "inlined_leaf");
	h = func_named(a, "hosts_copy");
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, h);
	/* by address: nearly all of the host's time is the copy's loop
	 * (mix, tiny, inlined into it, below it) */
	EXPECT_LT(h->self_samples * 4, c->total_samples)
		TH_LOG("hosts_copy %llu, inlined_leaf %llu in all",
		       (unsigned long long)h->self_samples,
		       (unsigned long long)c->total_samples);
	EXPECT_EQ(c->self_samples,
		  samples_of_stack(a, "main;hosts_copy;inlined_leaf"));
	meter_profile_free(a);
}

/* The samples of function id at addresses of the file named name. */
static uint64_t samples_in_file(const struct meter_profile *p, uint32_t id,
				const char *name)
{
	size_t i, j, l = strlen(name);
	uint64_t n = 0;

	for (i = 0; i < p->naddrs; i++) {
		const struct meter_addr *a = &p->addrs[i];

		if (a->func != id)
			continue;
		for (j = 0; j < p->nmaps; j++) {
			const struct meter_map_row *m = &p->maps[j];
			size_t k = m->path ? strlen(m->path) : 0;

			if (a->ip >= m->start && a->ip < m->end && k > l &&
			    m->path[k - l - 1] == '/' &&
			    !strcmp(m->path + k - l, name))
				n += a->samples;
		}
	}
	return n;
}

/*
 * Without inline records a flat copy's samples lie at addresses of its
 * host, which is below it on each of its stacks: read by address they
 * stay the copy's, never the host's as a callee of its own copy.
 */
TEST_F(leaves, flat_copies_keep_their_samples_by_address_without_records)
{
	const struct meter_func *c = func_named(self->r.p, "inlined_leaf");
	struct meter_profile *a;
	const struct meter_func *ca;
	uint64_t in_prog;
	char all[2048];
	bool failed;

	if (variant->counted)
		SKIP(return, "the copies are counted only: the host is current");
	ASSERT_NE(NULL, c);
	SKIP_IF_SIGNAL_STARVED(self->r.p);
	a = profile_attributed_copy(self->r.p, ATTRIB_BY_ADDRESS, &failed);
	ASSERT_NE(NULL, a) TH_LOG("no addresses, or unread (failed %d)",
				  failed);
	ca = func_named(a, "inlined_leaf");
	ASSERT_NE(NULL, ca);
	stacks_of_leaf(a, "hosts_copy", all, sizeof(all));
	/* those in libmeter (tiny_start's registration) are meter's own */
	in_prog = samples_in_file(self->r.p, c->id, variant->prog);
	EXPECT_LT(0, in_prog);
	EXPECT_LE(in_prog, ca->self_samples);
	EXPECT_EQ(0, samples_of_stack(a, "main;hosts_copy;inlined_leaf;hosts_copy"))
		TH_LOG("hosts_copy's stacks: %s", all);
	meter_profile_free(a);
}

TEST_HARNESS_MAIN
