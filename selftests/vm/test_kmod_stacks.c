// SPDX-License-Identifier: MIT
/*
 * What the tick does with what it reads from the page: deep recursion is
 * kept as truncated stacks and counted once per sample in the inclusive
 * total; ids the session never named, a bad magic and a bad frame count
 * as invalid; a current function without a shadow stack still counts; a
 * full stack table counts lost stacks whose samples still count as self.
 */
#include "kmod_util.h"

/* f2 -> f1 recursing 2000 deep (past METER_STACK_CAP), 0.2 s at 5 kHz */
FIXTURE(deep) {
	struct meter_profile *p;
};

FIXTURE_SETUP(deep)
{
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie;
	int d;

	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 200000);
	ku_funcs(nl, 2);
	ku_enter(pg, 2);
	for (d = 0; d < 2000; d++)
		ku_enter(pg, 1);
	ku_burn(200000000);
	for (d = 0; d < 2000; d++)
		ku_leave(pg);
	ku_leave(pg);
	self->p = ku_profile(nl, cookie, 0);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(deep)
{
	meter_profile_free(self->p);
}

TEST_F(deep, recursion_counts_once_per_sample_in_the_total)
{
	const struct meter_func *f1 = meter_profile_find(self->p, 1);
	uint64_t self_samples = ku_self(self->p, 1);

	ASSERT_NE(NULL, f1);
	ASSERT_LT(500, self_samples);
	EXPECT_LE(self_samples, f1->total_samples);
	EXPECT_GE(self->p->samples, f1->total_samples);
}

TEST_F(deep, deep_stacks_are_kept_truncated)
{
	size_t i, truncated = 0;

	for (i = 0; i < self->p->nstacks; i++)
		truncated += self->p->stacks[i].truncated &&
			self->p->stacks[i].depth <= METER_SAMPLE_DEPTH_MAX;
	EXPECT_LT(0, truncated) TH_LOG("no stack truncated to %d frames",
				       METER_SAMPLE_DEPTH_MAX);
	EXPECT_LE(ku_self(self->p, 1) * 9 / 10, self->p->truncated);
}

/* the page set wrong for 50 ms of CPU at 5 kHz, by each test */
FIXTURE(page) {
	struct meter_nl *nl;
	struct meter_page *pg;
	uint64_t cookie;
};

FIXTURE_SETUP(page)
{
	self->nl = ku_open();
	self->pg = ku_page();
	self->cookie = ku_register(self->nl, self->pg, 200000);
	ku_funcs(self->nl, 3);
}

FIXTURE_TEARDOWN(page)
{
	meter_nl_close(self->nl);
}

static uint64_t invalid(FIXTURE_DATA(page) *self)
{
	struct meter_profile *p = ku_profile(self->nl, self->cookie, 0);
	uint64_t n = p->invalid;

	meter_profile_free(p);
	return n;
}

TEST_F(page, an_unnamed_id_counts_as_invalid_not_as_a_function)
{
	uint64_t inv0 = invalid(self);
	struct meter_profile *p;

	self->pg->current_id = 999;	/* above every named id */
	ku_burn(50000000);
	self->pg->current_id = 0;
	p = ku_profile(self->nl, self->cookie, 0);
	EXPECT_LT(inv0 + 100, p->invalid);
	EXPECT_EQ(NULL, meter_profile_find(p, 999));
	meter_profile_free(p);
}

TEST_F(page, a_bad_magic_counts_as_invalid)
{
	uint64_t inv0 = invalid(self);

	self->pg->magic = 0;
	self->pg->current_id = 1;
	ku_burn(50000000);
	self->pg->current_id = 0;
	self->pg->magic = METER_PAGE_MAGIC;
	EXPECT_LT(inv0 + 100, invalid(self));
}

TEST_F(page, a_stack_frame_out_of_range_counts_as_invalid)
{
	uint64_t inv0 = invalid(self);

	self->pg->stack[0] = 5000;
	self->pg->depth = 1;
	self->pg->current_id = 1;
	ku_burn(50000000);
	self->pg->current_id = 0;
	self->pg->depth = 0;
	EXPECT_LT(inv0 + 100, invalid(self));
}

TEST_F(page, a_current_function_without_a_shadow_stack_counts)
{
	const struct meter_func *f3;
	struct meter_profile *p;

	self->pg->current_id = 3;
	ku_burn(50000000);
	self->pg->current_id = 0;
	p = ku_profile(self->nl, self->cookie, 0);
	f3 = meter_profile_find(p, 3);
	ASSERT_NE(NULL, f3);
	EXPECT_LT(100, f3->self_samples);
	EXPECT_EQ(f3->self_samples, f3->total_samples);
	meter_profile_free(p);
}

/*
 * meter.ko reloaded with a 16-entry stack table: 200 distinct stacks
 * overflow it.  The teardown loads the defaults back.
 */
FIXTURE(full_table) {
	struct meter_profile *p;
	uint64_t self_samples;	/* of the 200 functions */
	bool reloaded;
};

FIXTURE_SETUP(full_table)
{
	struct meter_nl_func f[200];
	char names[200][16];
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie;
	uint32_t i;

	memset(f, 0, sizeof(f));	/* no file, no line */
	self->reloaded = false;
	if (!getenv("METER_MODULE"))
		SKIP(return, "not in the VM (METER_MODULE)");
	ASSERT_EQ(0, ku_rmmod());
	self->reloaded = true;
	ASSERT_EQ(0, ku_insmod("stack_entries=16"));
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 100000);
	for (i = 0; i < 200; i++) {
		snprintf(names[i], sizeof(names[i]), "g%u", i + 1);
		f[i].id = i + 1;
		f[i].name = names[i];
	}
	ASSERT_EQ(0, meter_nl_add_funcs(nl, f, 200, NULL, 0));
	for (i = 1; i <= 200; i++) {
		ku_enter(pg, i);
		ku_burn(2000000);
		ku_leave(pg);
	}
	self->p = ku_profile(nl, cookie, 0);
	self->self_samples = 0;
	for (i = 1; i <= 200; i++)
		self->self_samples += ku_self(self->p, i);
	TH_LOG("%zu stacks kept, %llu samples lost, %llu self of %llu",
	       self->p->nstacks, (unsigned long long)self->p->lost,
	       (unsigned long long)self->self_samples,
	       (unsigned long long)self->p->samples);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(full_table)
{
	meter_profile_free(self->p);
	if (self->reloaded) {
		EXPECT_EQ(0, ku_rmmod());
		EXPECT_EQ(0, ku_insmod("")) TH_LOG("meter.ko reloads with its defaults");
	}
}

TEST_F(full_table, a_full_stack_table_counts_lost_stacks)
{
	if (!self->p)
		return;	/* skipped in the set-up */
	EXPECT_GE(16, self->p->nstacks);
	EXPECT_LT(1000, self->p->lost);
}

TEST_F(full_table, samples_whose_stack_was_lost_still_count_as_self)
{
	if (!self->p)
		return;
	EXPECT_EQ(self->p->samples - self->p->no_current - self->p->invalid,
		  self->self_samples);
}

TEST_HARNESS_MAIN
