// SPDX-License-Identifier: MIT
/*
 * The GCC plugin's corner cases (selftests/host/lib_plugin_corners.c):
 * exact counts through a sibling call, a variadic function, a noreturn
 * function left by longjmp, recursion, a flat leaf, a shared library built
 * with the plugin and calls from constructors; nothing recorded for
 * no_instrument_function or a function left out by a plugin argument;
 * calls made before libmeter's constructor run unprofiled, without a
 * crash; and a sibling call keeps its caller on the stack.  With the off
 * and the signal backends (the variants).
 */
#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(corners) {
	struct meter_profile *p;
	char out[256];
};

FIXTURE_VARIANT(corners) {
	const char *backend;
};

FIXTURE_VARIANT_ADD(corners, off) { .backend = "off" };
FIXTURE_VARIANT_ADD(corners, signal) { .backend = "signal" };

/* lib_plugin_corners 1000: each corner 1000 times */
FIXTURE_SETUP(corners)
{
	char label[64];
	const char *args[] = { "1000", NULL };
	int status;

	snprintf(label, sizeof(label), "plugin corners %s", variant->backend);
	self->p = run_profile("lib_plugin_corners", variant->backend, args,
			      self->out, sizeof(self->out), label, NULL,
			      &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(corners)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(corners, shadow_stack_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->out));
}

TEST_F(corners, early_calls_before_libmeter_run)
{
	EXPECT_NE(NULL, strstr(self->out, "early=3"));
}

TEST_F(corners, main_counted_once)
{
	EXPECT_EQ(1, calls_of(self->p, "main"));
}

TEST_F(corners, sibling_call_counts_both_ends)
{
	EXPECT_EQ(1001, calls_of(self->p, "tail_a"));
	EXPECT_EQ(1001, calls_of(self->p, "tail_b"));
}

TEST_F(corners, variadic_function)
{
	EXPECT_EQ(1000, calls_of(self->p, "vsum"));
}

TEST_F(corners, noreturn_function_left_by_longjmp)
{
	EXPECT_EQ(1000, calls_of(self->p, "bail"));
}

TEST_F(corners, recursion_counts_every_level)
{
	EXPECT_EQ(5000, calls_of(self->p, "twice"));	/* twice(4) x 1000 */
}

TEST_F(corners, flat_leaf_through_uninstrumented_callers)
{
	EXPECT_EQ(3000, calls_of(self->p, "leaf_flat"));
}

TEST_F(corners, shared_library_built_with_the_plugin)
{
	EXPECT_EQ(1000, calls_of(self->p, "in_dso"));
	EXPECT_EQ(1000, calls_of(self->p, "dso_helper"));
}

TEST_F(corners, no_instrument_function_has_no_record)
{
	EXPECT_GT(0, calls_of(self->p, "untouched"));
}

TEST_F(corners, excluded_function_has_no_record)
{
	EXPECT_GT(0, calls_of(self->p, "skipped_by_arg"));
}

/* .preinit_array runs before libmeter's constructor: not counted; the
 * constructor's two calls are */
TEST_F(corners, constructor_calls_counted_preinit_not)
{
	EXPECT_EQ(2, calls_of(self->p, "early_fn"));
}

TEST_F(corners, sibling_call_keeps_its_caller_on_the_stack)
{
	const struct meter_func *spin = func_named(self->p, "spin_here");
	uint64_t in = samples_of_stack(self->p,
				       "main;tail_a;tail_b;spin_here");

	SKIP_IF_SIGNAL_STARVED(self->p);
	if (!strcmp(variant->backend, "off")) {
		EXPECT_EQ(0, self->p->samples);
		return;
	}
	ASSERT_NE(NULL, spin);
	EXPECT_LE(100, spin->self_samples);
	EXPECT_GE(in * 10, spin->self_samples * 9);
}

TEST_F(corners, no_invalid_samples)
{
	EXPECT_EQ(0, self->p->invalid);
}

TEST_HARNESS_MAIN
