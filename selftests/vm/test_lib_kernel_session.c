// SPDX-License-Identifier: MIT
/*
 * What libmeter hands meter.ko reaches the session whole: the counts of
 * 8 threads and of 300 short-lived ones, flushed as each ends (in each
 * mode, the variants), allocation accounting, every module's records,
 * the names threads give themselves and long function names.  One
 * process's exact counts are test_lib_counts's, on both machines.
 */
#include "lib_kernel.h"

FIXTURE(threads) {
	struct backend_run r;
};

FIXTURE_VARIANT(threads) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(threads, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(threads, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(threads, plugin) { .mode = "plugin" };

FIXTURE_SETUP(threads)
{
	char prog[64];
	const char *args[] = { "threads", "8", "100000", NULL };

	snprintf(prog, sizeof(prog), "lib_workload_%s", variant->mode);
	kernel_run(&self->r, prog, args, "threads", NULL);
	ASSERT_BACKEND_RUN(&self->r);
}

FIXTURE_TEARDOWN(threads)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(threads, eight_threads_counts_flushed_exactly)
{
	EXPECT_EQ(800000, calls_of(self->r.p, "leaf"));
	EXPECT_EQ(8, calls_of(self->r.p, "worker"));
	EXPECT_EQ(9, self->r.p->nthreads);
}

TEST(short_lived_threads_all_registered_all_counts_flushed)
{
	const char *args[] = { "churn", "300", "1000", NULL };
	struct backend_run r;

	kernel_run(&r, "lib_workload_manual", args, "churn", NULL);
	ASSERT_BACKEND_RUN(&r);
	EXPECT_EQ(300000, calls_of(r.p, "leaf"));
	EXPECT_EQ(301, r.p->nthreads);
	meter_profile_free(r.p);
	scratch_cleanup();
}

/* what meter-run --alloc sets: libmeter-alloc.so and METER_ALLOC=1 */
TEST(allocation_calls_and_bytes_reach_the_session)
{
	const char *args[] = { "alloc", "1000", NULL };
	char preload[PATH_MAX + 16];
	const struct meter_func *f;
	struct backend_run r;

	snprintf(preload, sizeof(preload),
		 "LD_PRELOAD=%s/../../lib/libmeter-alloc.so", self_dir());
	setenv("METER_ALLOC", "1", 1);
	kernel_run(&r, "lib_workload_manual", args, "alloc", preload);
	unsetenv("METER_ALLOC");
	ASSERT_BACKEND_RUN(&r);
	f = func_named(r.p, "allocator");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(3000, f->alloc_calls);
	EXPECT_EQ(400000, f->alloc_bytes);
	meter_profile_free(r.p);
	scratch_cleanup();
}

TEST(every_module_names_its_functions_in_the_session)
{
	char dso[PATH_MAX];
	const char *args[] = { dso, NULL };
	struct backend_run r;

	snprintf(dso, sizeof(dso), "%s/../host/liblibtest_opened.so",
		 self_dir());
	kernel_run(&r, "lib_modules", args, "modules", NULL);
	ASSERT_BACKEND_RUN(&r);
	EXPECT_EQ(10, calls_of(r.p, "exe_func"));
	EXPECT_EQ(10, calls_of(r.p, "linked_func"));
	/* a library opened with dlopen during the run */
	EXPECT_EQ(7, calls_of(r.p, "opened_func"));
	meter_profile_free(r.p);
	scratch_cleanup();
}

/*
 * "short 300 2": threads of 2 ms each.  The kernel's tick runs on each
 * thread's own CPU time, so every whole period is sampled: at most the
 * last partial period of each thread is not.
 */
TEST(short_threads_are_sampled_but_for_their_last_partial_period)
{
	const char *args[] = { "short", "300", "2", NULL };
	uint64_t used, sampled;
	struct backend_run r;
	const char *c;

	kernel_run(&r, "lib_workload_manual", args, "short", NULL);
	ASSERT_BACKEND_RUN(&r);
	c = strstr(r.out, "threads_cpu_us=");
	ASSERT_NE(NULL, c);
	used = strtoull(c + 15, NULL, 10);
	sampled = r.p->samples * r.p->period_ns / 1000;
	EXPECT_EQ(300, calls_of(r.p, "spinner"));
	EXPECT_LE(used, sampled + 300 * r.p->period_ns / 1000)
		TH_LOG("used %llu us, sampled %llu us",
		       (unsigned long long)used, (unsigned long long)sampled);
	meter_profile_free(r.p);
	scratch_cleanup();
}

/* names set after the first profiled call come with the thread's end */
TEST(threads_keep_the_names_they_gave_themselves)
{
	const char *args[] = { "named", "3", NULL };
	struct backend_run r;
	char want[16];
	int i, found = 0;
	size_t k;

	kernel_run(&r, "lib_workload_manual", args, "named", NULL);
	ASSERT_BACKEND_RUN(&r);
	EXPECT_EQ(4, r.p->nthreads);
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "worker-%d", i);
		for (k = 0; k < r.p->nthreads; k++)
			found += !strcmp(r.p->threads[k].name, want);
	}
	EXPECT_EQ(3, found);
	meter_profile_free(r.p);
	scratch_cleanup();
}

/*
 * Names differing at their end: of 300 bytes, kept whole (3 and 5 calls);
 * of 3000, past the 2047 bytes meter.ko keeps, two rows each its first
 * bytes and a hash of the whole name (7 and 11 calls)
 */
TEST(long_names_whole_or_cut_apart_for_the_kernel)
{
	const char *args[] = { "longnames", NULL };
	const char *name[2] = { NULL, NULL };
	uint64_t calls[2] = { 0, 0 }, whole[2] = { 0, 0 };
	struct backend_run r;
	size_t i;
	int n = 0;

	kernel_run(&r, "lib_workload_manual", args, "longnames", NULL);
	ASSERT_BACKEND_RUN(&r);
	for (i = 0; i < r.p->nfuncs; i++) {
		const struct meter_func *f = &r.p->funcs[i];
		size_t len = strlen(f->name);

		if (strncmp(f->name, "xxxxxxxxxx", 10))
			continue;
		if (len == 302) {
			whole[f->name[301] - 'a'] = f->calls;
			continue;
		}
		EXPECT_EQ(METER_FUNC_NAME_MAX - 1, len);
		EXPECT_EQ(0, strncmp(f->name + len - 18, "~#", 2))
			TH_LOG("%s", f->name + len - 30);
		ASSERT_GT(2, n);
		calls[n] = f->calls;
		name[n++] = f->name;
	}
	EXPECT_EQ(3, whole[0]);
	EXPECT_EQ(5, whole[1]);
	ASSERT_EQ(2, n);
	EXPECT_NE(0, strcmp(name[0], name[1]));
	EXPECT_EQ(18, calls[0] + calls[1]);
	EXPECT_EQ(77, calls[0] * calls[1]) TH_LOG("7 and 11 calls");
	meter_profile_free(r.p);
	scratch_cleanup();
}

/*
 * A ninja-sized C++ program on meter.ko: 1000 functions whose 300-character
 * names differ only at their end (255 bytes used to merge them into one
 * row): 1000 rows, whole, each with its own calls, and 1000 distinct names
 * in the reports.
 */
TEST(cxx_program_no_two_functions_merged)
{
	const char *args[] = { NULL };
	struct backend_run r;
	struct cxx_rows rows;

	kernel_run(&r, "lib_cxx_names", args, "cxx_names", NULL);
	ASSERT_BACKEND_RUN(&r);
	rows = cxx_names_rows(r.p);
	EXPECT_EQ(1000, rows.rows);
	EXPECT_EQ(0, rows.cut);
	EXPECT_EQ(0, rows.bad_calls);
	EXPECT_EQ(1000, rows.report_names);
	meter_profile_free(r.p);
	scratch_cleanup();
}

TEST_HARNESS_MAIN
