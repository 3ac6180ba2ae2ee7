// SPDX-License-Identifier: MIT
/*
 * Recursion past METER_STACK_CAP (3000 frames, capacity 1008) is counted,
 * not corrupted: exact calls, the stack comes back, samples taken at the
 * bottom are marked truncated, none is invalid, the process does not crash.
 * A stack deeper than the frames a sample keeps (300 > 128) keeps its
 * leaf-most frames, as meter.ko does: the leaf is the function running
 * (spin), the root-most (main) is what was dropped, in the profile and in
 * the folded stacks meter-stat prints from it.  Past the capacity too the
 * leaf is the function running and the frames before it are its callers,
 * and a return there makes the caller current again.  Signal backend, in
 * each mode (the variants).
 */
#include "kselftest_harness.h"
#include "lib_run.h"

/* "deep N 200": recursion N deep, spin 200 ms at the bottom */
static struct meter_profile *deep_profile(const char *mode, const char *n,
					  char *out, size_t outlen,
					  char *json, size_t jsonlen,
					  int *status)
{
	char prog[64], label[64];
	const char *args[] = { "deep", n, "200", NULL };

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s-deep-%s", mode, n);
	snprintf(json, jsonlen, "%s/%s.json", scratch(), label);
	return run_profile(prog, "signal", args, out, outlen, label, NULL,
			   status);
}

FIXTURE(past_capacity) {
	struct meter_profile *p;
	char out[256], json[PATH_MAX];
};

FIXTURE_VARIANT(past_capacity) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(past_capacity, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(past_capacity, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(past_capacity, plugin) { .mode = "plugin" };

FIXTURE_SETUP(past_capacity)
{
	int status;

	self->p = deep_profile(variant->mode, "3000", self->out,
			       sizeof(self->out), self->json,
			       sizeof(self->json), &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(past_capacity)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(past_capacity, depth_back_to_main)
{
	EXPECT_EQ(1, printed_depth(self->out));
}

TEST_F(past_capacity, every_level_counted)
{
	EXPECT_EQ(3000, calls_of(self->p, "deep"));
}

TEST_F(past_capacity, samples_past_the_capacity_marked_truncated)
{
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_LT(0, self->p->truncated);
	EXPECT_EQ(0, self->p->invalid);
}

TEST_F(past_capacity, the_bottom_keeps_its_self_time)
{
	const struct meter_func *spin = func_named(self->p, "spin");

	ASSERT_NE(NULL, spin);
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_GE(spin->self_samples * 10, self->p->samples * 8);
}

/*
 * spin runs at depth 3000 only: its samples are truncated stacks that end
 * in it (compared with spin's own samples, not with all truncated ones:
 * the descent through the slow path takes its share of those, more on a
 * VM whose host is busy)
 */
TEST_F(past_capacity, the_leaf_past_the_capacity_is_the_running_function)
{
	const struct meter_func *spin = func_named(self->p, "spin");
	uint64_t leaf_spin, with_main, truncated;

	ASSERT_NE(NULL, spin);
	SKIP_IF_SIGNAL_STARVED(self->p);
	truncated_ends(self->p, "spin", "main", &truncated, &leaf_spin,
		       &with_main);
	ASSERT_LT(0, truncated);
	EXPECT_GE(leaf_spin * 10, spin->self_samples * 9);
	EXPECT_EQ(0, with_main) TH_LOG("the root is what is dropped");
}

TEST_F(past_capacity, the_running_function_keeps_its_caller)
{
	uint64_t at_spin, from_deep;

	SKIP_IF_SIGNAL_STARVED(self->p);
	leaf_callers(self->p, "spin", "deep", &at_spin, &from_deep);
	ASSERT_LT(0, at_spin);
	EXPECT_EQ(at_spin, from_deep);
}

/* "deepback 3000 200": the bottom burns its time after spin() returns */
FIXTURE(returns_past_capacity) {
	struct meter_profile *p;
	char out[256], json[PATH_MAX];
};

FIXTURE_VARIANT(returns_past_capacity) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(returns_past_capacity, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(returns_past_capacity, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(returns_past_capacity, plugin) { .mode = "plugin" };

FIXTURE_SETUP(returns_past_capacity)
{
	char prog[64], label[64];
	const char *args[] = { "deepback", "3000", "200", NULL };
	int status;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s-deepback", variant->mode);
	snprintf(self->json, sizeof(self->json), "%s/%s.json", scratch(),
		 label);
	self->p = run_profile(prog, "signal", args, self->out,
			      sizeof(self->out), label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(returns_past_capacity)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(returns_past_capacity, the_caller_is_current_again_after_a_return)
{
	const struct meter_func *bottom = func_named(self->p, "deepback");
	const struct meter_func *spin = func_named(self->p, "spin");

	ASSERT_NE(NULL, bottom);
	ASSERT_NE(NULL, spin);
	EXPECT_EQ(3000, bottom->calls);
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_GE(bottom->self_samples * 10, self->p->samples * 8);
	EXPECT_GE(self->p->samples, spin->self_samples * 10);
	EXPECT_EQ(1, printed_depth(self->out));
}

FIXTURE(leaf_kept) {
	struct meter_profile *p;
	char out[256], json[PATH_MAX];
};

FIXTURE_VARIANT(leaf_kept) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(leaf_kept, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(leaf_kept, plugin) { .mode = "plugin" };

FIXTURE_SETUP(leaf_kept)
{
	int status;

	self->p = deep_profile(variant->mode, "300", self->out,
			       sizeof(self->out), self->json,
			       sizeof(self->json), &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(leaf_kept)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

/* a sample taken on the way down may end in deep: spin runs 200 ms */
TEST_F(leaf_kept, deeper_stacks_end_in_the_running_function)
{
	uint64_t leaf_spin, with_main, truncated;

	SKIP_IF_SIGNAL_STARVED(self->p);
	truncated_ends(self->p, "spin", "main", &truncated, &leaf_spin,
		       &with_main);
	ASSERT_LT(0, truncated);
	ASSERT_NE(NULL, func_named(self->p, "spin"));
	EXPECT_GE(leaf_spin * 10, func_named(self->p, "spin")->self_samples * 9);
	EXPECT_EQ(0, with_main) TH_LOG("the root is what is dropped");
}

/*
 * The folded report gives each truncated stack as the profile has it,
 * its leaf kept: as many samples marked [truncated], as many of them
 * ending in spin.  (Not every deep stack ends in spin: a sample on the
 * way down ends in deep, in a run in some hundreds.)
 */
TEST_F(leaf_kept, folded_stacks_end_in_the_running_function_too)
{
	char cmd[PATH_MAX * 2], line[8192];
	uint64_t truncated, leaf_spin, with_main;
	uint64_t folded = 0, folded_spin = 0;
	FILE *f;

	SKIP_IF_SIGNAL_STARVED(self->p);
	truncated_ends(self->p, "spin", "main", &truncated, &leaf_spin,
		       &with_main);
	snprintf(cmd, sizeof(cmd),
		 "'%s/../../tools/meter-stat' -i '%s' -f folded --no-correction",
		 self_dir(), self->json);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');
		uint64_t n;

		if (!sp || strncmp(line, "[truncated];", 12))
			continue;
		n = strtoull(sp + 1, NULL, 10);
		folded += n;
		*sp = 0;
		if (sp - line >= 5 && !strcmp(sp - 5, ";spin"))
			folded_spin += n;
	}
	pclose(f);
	EXPECT_LT(0, folded_spin);
	EXPECT_EQ(truncated, folded);
	EXPECT_EQ(leaf_spin, folded_spin);
}

TEST_HARNESS_MAIN
