// SPDX-License-Identifier: MIT
/*
 * Call counts stay exact under threads: 8 threads calling leaf() 100000
 * times each report 800000, in each mode and backend (the variants); with
 * the signal backend every thread gets its own timer and shows up in the
 * profile.  300 threads one after the other are each set up and torn
 * down cleanly, their calls kept.
 */
#include <inttypes.h>

#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(threads) {
	struct meter_profile *p;
};

FIXTURE_VARIANT(threads) {
	const char *mode, *backend;
};

FIXTURE_VARIANT_ADD(threads, manual_off) { "manual", "off" };
FIXTURE_VARIANT_ADD(threads, automatic_off) { "auto", "off" };
FIXTURE_VARIANT_ADD(threads, api_off) { "api", "off" };
FIXTURE_VARIANT_ADD(threads, manual_signal) { "manual", "signal" };
FIXTURE_VARIANT_ADD(threads, automatic_signal) { "auto", "signal" };
FIXTURE_VARIANT_ADD(threads, plugin_signal) { "plugin", "signal" };

/* "threads 8 100000": 8 workers at once, each calling leaf 100000 times */
FIXTURE_SETUP(threads)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "threads", "8", "100000", NULL };
	int status;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s-%s threads", variant->mode,
		 variant->backend);
	self->p = run_profile(prog, variant->backend, args, out, sizeof(out),
			      label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(threads)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(threads, calls_exact_across_eight_threads)
{
	EXPECT_EQ(800000, calls_of(self->p, "leaf"));
	EXPECT_EQ(8, calls_of(self->p, "worker"));
}

TEST_F(threads, every_thread_listed)
{
	EXPECT_EQ(9, self->p->nthreads);
}

TEST_F(threads, threads_first_calling_at_once_make_one_record)
{
	size_t i, n = 0;

	for (i = 0; i < self->p->nfuncs; i++)
		n += same_name(self->p->funcs[i].name, "leaf");
	EXPECT_EQ(1, n);
}

/* "churn 300 1000": 300 threads one after the other, 1000 leaf calls each */
FIXTURE(churn) {
	struct meter_profile *p;
};

FIXTURE_VARIANT(churn) {
	const char *mode, *backend;
};

FIXTURE_VARIANT_ADD(churn, manual_signal) { "manual", "signal" };
FIXTURE_VARIANT_ADD(churn, automatic_off) { "auto", "off" };
FIXTURE_VARIANT_ADD(churn, plugin_signal) { "plugin", "signal" };

FIXTURE_SETUP(churn)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "churn", "300", "1000", NULL };
	int status;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s-%s churn", variant->mode,
		 variant->backend);
	self->p = run_profile(prog, variant->backend, args, out, sizeof(out),
			      label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(churn)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(churn, every_exited_thread_keeps_its_calls)
{
	EXPECT_EQ(300000, calls_of(self->p, "leaf"));
	EXPECT_EQ(300, calls_of(self->p, "worker"));
	EXPECT_EQ(301, self->p->nthreads);
}

/*
 * "short 300 2": 300 threads one after the other, each spinning 2 ms of
 * its CPU time, shorter than the signal backend's tick: what the samples
 * miss is counted, and with them it makes the threads' CPU time.
 */
FIXTURE(short_threads) {
	struct meter_profile *p;
	char out[256];
};

FIXTURE_VARIANT(short_threads) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(short_threads, manual) { "manual" };
FIXTURE_VARIANT_ADD(short_threads, plugin) { "plugin" };

FIXTURE_SETUP(short_threads)
{
	char prog[64], label[64];
	const char *args[] = { "short", "300", "2", NULL };
	int status;

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	snprintf(label, sizeof(label), "%s short", variant->mode);
	self->p = run_profile(prog, "signal", args, self->out,
			      sizeof(self->out), label, NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(short_threads)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(short_threads, the_time_between_ticks_is_counted_not_lost)
{
	const char *c = strstr(self->out, "threads_cpu_us=");
	uint64_t used, sampled, missed = self->p->unsampled_ns / 1000;

	ASSERT_NE(NULL, c);
	used = strtoull(c + 15, NULL, 10);
	sampled = self->p->samples * self->p->period_ns / 1000;
	EXPECT_EQ(300, calls_of(self->p, "spinner"));
	EXPECT_LT(0, missed);
	EXPECT_LE(used * 95 / 100, sampled + missed)
		TH_LOG("used %" PRIu64 " us, sampled %" PRIu64 " us, missed %"
		       PRIu64 " us", used, sampled, missed);
}

/* "named 3": threads that name themselves worker-0..2 */
TEST(threads_keep_the_names_they_gave_themselves)
{
	const char *args[] = { "named", "3", NULL };
	char out[256], want[16];
	struct meter_profile *p;
	int status, i, found = 0;
	size_t k;

	p = run_profile("lib_workload_manual", "signal", args, out,
			sizeof(out), "named", NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(4, p->nthreads);
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "worker-%d", i);
		for (k = 0; k < p->nthreads; k++)
			found += !strcmp(p->threads[k].name, want);
	}
	EXPECT_EQ(3, found);
	for (k = 0; k < p->nthreads; k++)
		found += !strcmp(p->threads[k].name, "lib_workload_ma");
	EXPECT_EQ(4, found) TH_LOG("main keeps the program's name");
	meter_profile_free(p);
	scratch_cleanup();
}

TEST_HARNESS_MAIN
