// SPDX-License-Identifier: MIT
/*
 * meter.ko samples what libmeter publishes: a CPU-bound run is charged to
 * the function that burnt the time, through the right callers, at the
 * requested rate (per mode: the variants); manual, automatic, plugin and
 * explicit-API instrumentation give the same calls; the signal backend,
 * run side by side, gives the same functions, calls and stack shares (at
 * its lower rate).
 */
#include "lib_kernel.h"

/* "spin 300": main;a;b;spin and main;c;spin, 300 ms of CPU each */
static void spin_run(struct backend_run *r, const char *mode)
{
	char prog[64];
	const char *args[] = { "spin", "300", NULL };

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	kernel_run(r, prog, args, "spin", NULL);
}

FIXTURE(spin) {
	struct backend_run r;
};

FIXTURE_VARIANT(spin) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(spin, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(spin, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(spin, api) { .mode = "api" };
FIXTURE_VARIANT_ADD(spin, plugin) { .mode = "plugin" };

FIXTURE_SETUP(spin)
{
	spin_run(&self->r, variant->mode);
	ASSERT_BACKEND_RUN(&self->r);
}

FIXTURE_TEARDOWN(spin)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

/* 600 ms of CPU at the default 1 kHz */
TEST_F(spin, samples_at_the_requested_rate)
{
	EXPECT_LE(400, self->r.p->samples);
}

/* of the samples charged to a function: a slower kernel (the debug one)
 * stretches start-up and exit, not spin */
TEST_F(spin, time_charged_to_the_function_that_burnt_it)
{
	const struct meter_func *s = func_named(self->r.p, "spin");
	struct meter_profile *p = self->r.p;

	ASSERT_NE(NULL, s);
	EXPECT_GE(s->self_samples * 10, (p->samples - p->no_current) * 9)
		TH_LOG("spin %llu of %llu samples, %llu with no current function",
		       (unsigned long long)s->self_samples,
		       (unsigned long long)p->samples,
		       (unsigned long long)p->no_current);
}

TEST_F(spin, through_the_right_callers)
{
	struct meter_profile *p = self->r.p;

	EXPECT_GE(samples_of_stack(p, "main;a;b;spin") * 10, p->samples * 3);
	EXPECT_GE(samples_of_stack(p, "main;c;spin") * 10, p->samples * 3);
}

TEST_F(spin, no_invalid_samples)
{
	EXPECT_EQ(0, self->r.p->invalid);
}

TEST(all_modes_count_the_same_calls)
{
	static const char *const modes[] = { "manual", "auto", "api", "plugin" };
	struct backend_run r[4];
	size_t i;

	for (i = 0; i < 4; i++) {
		spin_run(&r[i], modes[i]);
		ASSERT_BACKEND_RUN(&r[i]);
	}
	/* manual against auto, api and plugin */
	EXPECT_TRUE(same_spin_calls(r[0].p, r[1].p));
	EXPECT_TRUE(same_spin_calls(r[0].p, r[2].p));
	EXPECT_TRUE(same_spin_calls(r[0].p, r[3].p));
	for (i = 0; i < 4; i++)
		meter_profile_free(r[i].p);
	scratch_cleanup();
}

TEST(signal_backend_side_by_side_same_calls_and_shares)
{
	char out[256], env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { "spin", "300", NULL };
	struct meter_profile *p;
	struct backend_run k;
	double ks, ss;

	spin_run(&k, "manual");
	ASSERT_BACKEND_RUN(&k);
	snprintf(path, sizeof(path), "%s/signal.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ASSERT_EQ(0, run_prog("../host/lib_workload_manual", env, args, out,
			      sizeof(out)));
	p = load_profile(path);
	ASSERT_NE(NULL, p);
	ASSERT_LT(0, p->samples);
	ASSERT_LT(0, k.p->samples);
	EXPECT_TRUE(same_spin_calls(k.p, p));
	ks = (double)samples_of_stack(k.p, "main;a;b;spin") / (double)k.p->samples;
	ss = (double)samples_of_stack(p, "main;a;b;spin") / (double)p->samples;
	EXPECT_GT(0.15, ks - ss) TH_LOG("kernel %.2f, signal %.2f", ks, ss);
	EXPECT_GT(0.15, ss - ks) TH_LOG("kernel %.2f, signal %.2f", ks, ss);
	meter_profile_free(p);
	meter_profile_free(k.p);
	scratch_cleanup();
}

TEST_HARNESS_MAIN
