// SPDX-License-Identifier: MIT
/*
 * The signal backend works with no module: a CPU-bound run takes samples
 * and attributes them to the function that burnt the time, through the
 * right callers (per mode: the variants).  Manual, automatic, plugin and
 * explicit-API instrumentation of the same program give the same
 * profile: same functions, same call counts.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

/* "spin 300": main;a;b;spin and main;c;spin, 300 ms each, 1 ms period */
static struct meter_profile *spin_profile(const char *mode, int *status)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "spin", "300", NULL };

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s spin", mode);
	return run_profile(prog, "signal", args, out, sizeof(out), label,
			   "METER_PERIOD_NS=1000000", status);
}

FIXTURE(modes) {
	struct meter_profile *p;
};

FIXTURE_VARIANT(modes) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(modes, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(modes, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(modes, api) { .mode = "api" };
FIXTURE_VARIANT_ADD(modes, plugin) { .mode = "plugin" };

FIXTURE_SETUP(modes)
{
	int status;

	self->p = spin_profile(variant->mode, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(modes)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(modes, profile_written_by_the_signal_backend)
{
	EXPECT_STREQ("signal", self->p->backend);
}

/* 600 ms of CPU at a 1 ms period; late signals weigh the periods that
 * passed (timer overruns), and what no signal covered is counted */
TEST_F(modes, about_600_samples_without_meter_ko)
{
	EXPECT_LE(510, accounted_ms(self->p));
	EXPECT_GE(720, accounted_ms(self->p));
	/* and most of it sampled, unless the backend says it was starved */
	if (self->p->unsampled_ns * 4 <= self->p->samples * self->p->period_ns)
		EXPECT_LE(300, self->p->samples);
}

TEST_F(modes, spin_has_90_percent_self_time)
{
	const struct meter_func *spin = func_named(self->p, "spin");

	ASSERT_NE(NULL, spin);
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_GE(spin->self_samples * 10, self->p->samples * 9)
		TH_LOG("spin %llu of %llu samples",
		       (unsigned long long)spin->self_samples,
		       (unsigned long long)self->p->samples);
}

TEST_F(modes, each_caller_path_holds_30_percent)
{
	uint64_t ab = samples_of_stack(self->p, "main;a;b;spin");
	uint64_t c = samples_of_stack(self->p, "main;c;spin");

	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_GE(ab * 10, self->p->samples * 3);
	EXPECT_GE(c * 10, self->p->samples * 3);
}

TEST_F(modes, no_invalid_samples)
{
	EXPECT_EQ(0, self->p->invalid);
}

TEST(all_modes_count_the_same_calls)
{
	static const char *const modes[] = { "manual", "auto", "api", "plugin" };
	struct meter_profile *p[4];
	int status;
	size_t i;

	for (i = 0; i < 4; i++) {
		p[i] = spin_profile(modes[i], &status);
		ASSERT_NE(NULL, p[i]);
	}
	/* manual against auto, api and plugin */
	EXPECT_TRUE(same_spin_calls(p[0], p[1]));
	EXPECT_TRUE(same_spin_calls(p[0], p[2]));
	EXPECT_TRUE(same_spin_calls(p[0], p[3]));
	for (i = 0; i < 4; i++)
		meter_profile_free(p[i]);
	scratch_cleanup();
}

TEST_HARNESS_MAIN
