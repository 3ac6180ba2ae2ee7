// SPDX-License-Identifier: MIT
/*
 * A profiled function inlined into its profiled caller runs in the
 * caller's frame: it is counted, pushed above its caller (not taken for a
 * stale frame), and the stack comes back right; in each mode (variants),
 * signal backend.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(inlined) {
	struct meter_profile *p;
	char out[256];
};

FIXTURE_VARIANT(inlined) {
	const char *mode;
	bool slow_first_call;	/* each function's first call finds its
				   record on the slow path */
};

FIXTURE_VARIANT_ADD(inlined, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(inlined, automatic) {
	.mode = "auto", .slow_first_call = true
};
FIXTURE_VARIANT_ADD(inlined, plugin) { .mode = "plugin" };
FIXTURE_VARIANT_ADD(inlined, api) { .mode = "api" };

/* "inlined 10000": outer_inl 10000 times, inl_small inlined into it twice
 * a call, spin under inl_small */
FIXTURE_SETUP(inlined)
{
	char prog[64], label[64];
	const char *args[] = { "inlined", "10000", NULL };
	int status;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s inlined", variant->mode);
	self->p = run_profile(prog, "signal", args, self->out,
			      sizeof(self->out), label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(inlined)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(inlined, depth_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->out));
}

TEST_F(inlined, inlined_function_counted)
{
	EXPECT_EQ(20000, calls_of(self->p, "inl_small"));
	EXPECT_EQ(10000, calls_of(self->p, "outer_inl"));
}

/*
 * Inlined into its caller, a function pushes itself on the fast path: the
 * only slow-path entry is the thread's first call, which registers it
 * (20000 entries, one per inlined call, before the fast path knew the
 * case); in the automatic mode, each function's first call too.
 */
TEST_F(inlined, inlined_calls_stay_on_the_fast_path)
{
	uint64_t most = variant->slow_first_call ? self->p->nfuncs : 1;

	EXPECT_GE(most, self->p->slow_entries)
		TH_LOG("%llu slow-path entries",
		       (unsigned long long)self->p->slow_entries);
}

TEST_F(inlined, time_inside_charged_through_its_own_frame)
{
	const struct meter_func *spin = func_named(self->p, "spin");
	uint64_t in = samples_of_stack(self->p,
				       "main;outer_inl;inl_small;spin");

	ASSERT_NE(NULL, spin);
	SKIP_IF_SIGNAL_STARVED(self->p);
	ASSERT_LT(0, spin->self_samples);
	EXPECT_GE(in * 10, spin->self_samples * 9)
		TH_LOG("%llu of spin's %llu samples under main;outer_inl;inl_small",
		       (unsigned long long)in,
		       (unsigned long long)spin->self_samples);
}

TEST_HARNESS_MAIN
