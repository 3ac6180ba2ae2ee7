// SPDX-License-Identifier: MIT
/*
 * meter-stat watch's interval (analysis/interval.c) sees a function as
 * every report does: a name.  A static inline function copied into two
 * translation units is two records of one name in the kernel's session;
 * show reports it as one row (meter_profile_by_name), so the watch's rows,
 * their interval and its count of functions must too.  Threads' interval
 * samples are matched by thread.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "interval.h"
#include "model.h"

/* A session's snapshot: main, and read32 as records 2 and 3. */
static struct meter_profile *snapshot(uint64_t scale, bool second_copy)
{
	struct meter_profile *p = meter_profile_new();
	struct meter_func *f;

	p->period_ns = 1000000;
	p->samples = 100 * scale;
	f = meter_profile_add_func(p, 1, "main");
	f->calls = 1;
	f->self_samples = 10 * scale;
	f = meter_profile_add_func(p, 2, "read32");
	f->calls = 1000 * scale;
	f->self_samples = 60 * scale;
	if (second_copy) {
		f = meter_profile_add_func(p, 3, "read32");
		f->calls = 500 * scale;
		f->self_samples = 30 * scale;
	}
	meter_profile_add_thread(p, 41, 70 * scale);
	meter_profile_add_thread(p, 42, 30 * scale);
	return p;
}

static const struct interval_row *row(const struct interval *iv,
				      const char *name, size_t *n)
{
	const struct interval_row *r = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < iv->n; i++)
		if (!strcmp(iv->rows[i].f->name, name)) {
			r = &iv->rows[i];
			(*n)++;
		}
	return r;
}

TEST(one_row_a_name_with_the_records_summed)
{
	struct meter_profile *now = snapshot(1, true);
	const struct interval_row *r;
	struct interval iv;
	size_t n;

	ASSERT_EQ(0, interval_build(&iv, now, NULL, ORDER_DEFAULT));
	EXPECT_EQ(2, iv.n);
	r = row(&iv, "read32", &n);
	EXPECT_EQ(1, n);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(1500, r->calls);
	EXPECT_EQ(90, r->self);
	EXPECT_EQ(1500, r->f->calls);
	interval_free(&iv);
	meter_profile_free(now);
}

TEST(interval_is_the_change_of_the_names_sums)
{
	struct meter_profile *prev = snapshot(1, true);
	struct meter_profile *now = snapshot(3, true);
	const struct interval_row *r;
	struct interval iv;
	size_t n;

	ASSERT_EQ(0, interval_build(&iv, now, prev, ORDER_DEFAULT));
	r = row(&iv, "read32", &n);
	EXPECT_EQ(1, n);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(3000, r->calls);	/* 4500 - 1500 */
	EXPECT_EQ(180, r->self);	/* 270 - 90 */
	EXPECT_EQ(200, iv.samples);
	interval_free(&iv);
	meter_profile_free(prev);
	meter_profile_free(now);
}

/* A second copy first called during the interval: its counts are new. */
TEST(record_new_in_the_interval_adds_to_its_name)
{
	struct meter_profile *prev = snapshot(1, false);
	struct meter_profile *now = snapshot(2, true);
	const struct interval_row *r;
	struct interval iv;
	size_t n;

	ASSERT_EQ(0, interval_build(&iv, now, prev, ORDER_DEFAULT));
	r = row(&iv, "read32", &n);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(2000, r->calls);	/* 2000 + 1000 - 1000 */
	EXPECT_EQ(120, r->self);	/* 120 + 60 - 60 */
	interval_free(&iv);
	meter_profile_free(prev);
	meter_profile_free(now);
}

TEST(threads_interval_matched_by_thread)
{
	struct meter_profile *prev = snapshot(1, true);
	struct meter_profile *now = snapshot(4, true);
	struct interval iv;

	ASSERT_EQ(0, interval_build(&iv, now, prev, ORDER_DEFAULT));
	ASSERT_EQ(2, iv.nthreads);
	EXPECT_EQ(41, iv.threads[0].t->tid);
	EXPECT_EQ(210, iv.threads[0].samples);	/* 280 - 70 */
	EXPECT_EQ(42, iv.threads[1].t->tid);
	EXPECT_EQ(90, iv.threads[1].samples);	/* 120 - 30 */
	interval_free(&iv);
	meter_profile_free(prev);
	meter_profile_free(now);
}

TEST_HARNESS_MAIN
