// SPDX-License-Identifier: MIT
/*
 * Unit tests of the samples given by address (analysis/byaddr.c), on
 * profiles whose addresses' places are given: meter's own taken out, a
 * function inlined without a record given its samples as a callee, a
 * library's left with its caller, a name read without its parameters
 * matched to its record, the functions an address is inlined into kept in
 * its stacks.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "addrs.h"
#include "analysis.h"

/* main (1) calls f (2); f current for 100 samples, main for 10 */
static struct meter_profile *two(void)
{
	struct meter_profile *p = meter_profile_new();
	const uint32_t s1[] = { 1, 2 }, s2[] = { 1 };

	strcpy(p->backend, "kernel");
	p->period_ns = 1000000;
	p->samples = 110;
	meter_profile_add_func(p, 1, "main")->calls = 1;
	meter_profile_add_func(p, 2, "f(int)")->calls = 1000;
	meter_profile_find(p, 1)->self_samples = 10;
	meter_profile_find(p, 2)->self_samples = 100;
	meter_profile_add_stack(p, s1, 2, 100);
	meter_profile_add_stack(p, s2, 1, 10);
	meter_profile_compute_totals(p);
	return p;
}

static const struct meter_func *named(const struct meter_profile *p,
				      const char *name)
{
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, name))
			return &p->funcs[i];
	return NULL;
}

/* the samples of the stacks of these frames (the model allows repeats) */
static uint64_t stack_samples(const struct meter_profile *p,
			      const uint32_t *frames, uint32_t depth)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].depth == depth &&
		    !memcmp(p->stacks[i].frames, frames,
			    depth * sizeof(*frames)))
			n += p->stacks[i].samples;
	return n;
}

/* an address row of f at the place given, in code the plugin built or not */
static void at(struct meter_profile *p, struct addr_where *w, uint32_t func,
	       uint64_t n, enum addr_kind kind, const char *name, bool plugin)
{
	meter_profile_add_addr(p, 0x1000 + p->naddrs, func, n);
	/* every field the resolver sets, not set here, as it leaves them */
	memset(&w[p->naddrs - 1], 0, sizeof(w[0]));
	w[p->naddrs - 1].kind = kind;
	w[p->naddrs - 1].func = name ? strdup(name) : NULL;
	w[p->naddrs - 1].plugin = plugin;
}

/* the same in code the plugin built, name inlined into outer[0], which
 * is inlined into outer[1]... (innermost first, NULL-terminated) */
static void at_inlined(struct meter_profile *p, struct addr_where *w,
		       uint32_t func, uint64_t n, const char *name,
		       const char *const *outer)
{
	struct addr_where *x = &w[p->naddrs];

	at(p, w, func, n, ADDR_FUNC, name, true);
	while (outer[x->nouter])
		x->nouter++;
	x->outer = calloc(x->nouter, sizeof(*x->outer));
	for (size_t k = 0; k < x->nouter; k++)
		x->outer[k] = strdup(outer[k]);
}

TEST(meter_own_samples_are_taken_out_and_an_inlined_function_gets_its_own)
{
	struct meter_profile *p = two();
	struct addr_where w[3];
	struct byaddr_result r;
	const struct meter_func *f, *g;
	uint32_t fg[3] = { 1, 2, 0 }, f1[2] = { 1, 2 };

	at(p, w, 2, 30, ADDR_METER, NULL, true);
	at(p, w, 2, 50, ADDR_FUNC, "f", true);
	at(p, w, 2, 20, ADDR_FUNC, "g", true);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	f = named(p, "f(int)");
	g = named(p, "g");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, g);
	EXPECT_EQ(50, f->self_samples);
	EXPECT_EQ(20, g->self_samples);
	EXPECT_EQ(0, g->calls);
	EXPECT_EQ(1000, f->calls);
	EXPECT_EQ(30, r.meter);
	EXPECT_EQ(20, r.moved);
	EXPECT_EQ(100, r.resolved);
	EXPECT_TRUE(p->by_address);
	EXPECT_EQ(30, (uint64_t)p->corrected_samples);
	/* the totals as measured */
	EXPECT_EQ(110, p->samples);
	/* g a callee of f in the stacks, f's stack what f kept */
	fg[2] = g->id;
	EXPECT_EQ(50, stack_samples(p, f1, 2));
	EXPECT_EQ(20, stack_samples(p, fg, 3));
	EXPECT_EQ(70, f->total_samples);
	EXPECT_EQ(20, g->total_samples);
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

TEST(a_library_function_leaves_its_samples_with_its_caller)
{
	struct meter_profile *p = two();
	struct addr_where w[2];
	struct byaddr_result r;

	at(p, w, 2, 60, ADDR_FUNC, "f", true);
	/* libc: not built with the plugin, no record of memcpy */
	at(p, w, 2, 40, ADDR_FUNC, "memcpy", false);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	EXPECT_EQ(NULL, named(p, "memcpy"));
	EXPECT_EQ(100, named(p, "f(int)")->self_samples);
	EXPECT_EQ(40, r.unresolved);
	EXPECT_EQ(0, r.moved);
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

/* a build by hand (METER_FUNCTION): the helper's time is its caller's */
TEST(an_uninstrumented_helper_outside_the_plugin_s_code_keeps_to_its_caller)
{
	struct meter_profile *p = two();
	struct addr_where w[1];
	struct byaddr_result r;

	at(p, w, 2, 100, ADDR_FUNC, "helper", false);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	EXPECT_EQ(NULL, named(p, "helper"));
	EXPECT_EQ(100, named(p, "f(int)")->self_samples);
	EXPECT_EQ(100, r.unresolved);
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

TEST(a_recorded_function_found_at_another_current_one_takes_the_sample)
{
	struct meter_profile *p = two();
	struct addr_where w[2];
	struct byaddr_result r;
	const uint32_t main_f[2] = { 1, 2 };

	/* f's inlined copy in main, before f's entry made it current */
	at(p, w, 1, 4, ADDR_FUNC, "f", true);
	at(p, w, 1, 6, ADDR_FUNC, "main", true);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	EXPECT_EQ(6, named(p, "main")->self_samples);
	EXPECT_EQ(104, named(p, "f(int)")->self_samples);
	EXPECT_EQ(2, p->nfuncs);	/* no row made */
	EXPECT_EQ(104, stack_samples(p, main_f, 2));
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

TEST(unread_addresses_stay_with_the_current_function)
{
	struct meter_profile *p = two();
	struct addr_where w[2];
	struct byaddr_result r;

	at(p, w, 2, 70, ADDR_UNRESOLVED, NULL, false);
	at(p, w, 2, 30, ADDR_FUNC, "f", true);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	EXPECT_EQ(100, named(p, "f(int)")->self_samples);
	EXPECT_EQ(70, r.unresolved);
	EXPECT_EQ(30, r.resolved);
	EXPECT_EQ(0, (uint64_t)p->corrected_samples);
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

/*
 * A copy the plugin counted without making it current (c, inlined into
 * f): its samples, and those of m (tiny, no record) inlined into it, hang
 * under f through it, not from f directly.
 */
TEST(a_counted_copy_stays_between_its_host_and_what_is_inlined_into_it)
{
	struct meter_profile *p = two();
	static const char *const in_c[] = { "c", "f", NULL };
	static const char *const in_f[] = { "f", NULL };
	struct addr_where w[3];
	struct byaddr_result r;
	const struct meter_func *c, *m;
	uint32_t fc[3] = { 1, 2, 3 }, fcm[4] = { 1, 2, 3, 0 };
	const uint32_t f1[2] = { 1, 2 };

	meter_profile_add_func(p, 3, "c")->calls = 500;
	at_inlined(p, w, 2, 40, "m", in_c);
	at_inlined(p, w, 2, 30, "c", in_f);
	at(p, w, 2, 30, ADDR_FUNC, "f", true);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	c = named(p, "c");
	m = named(p, "m");
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, m);
	fcm[3] = m->id;
	EXPECT_EQ(30, c->self_samples);
	EXPECT_EQ(40, m->self_samples);
	EXPECT_EQ(30, named(p, "f(int)")->self_samples);
	EXPECT_EQ(70, r.moved);
	EXPECT_EQ(30, stack_samples(p, f1, 2));
	EXPECT_EQ(30, stack_samples(p, fc, 3));
	EXPECT_EQ(40, stack_samples(p, fcm, 4));
	EXPECT_EQ(70, c->total_samples);
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

/*
 * A counted copy in a function the plugin left without a record (t, a
 * tiny one), called from the current one: under it, through t's row.
 */
TEST(a_counted_copy_in_a_function_without_a_record_hangs_under_it)
{
	struct meter_profile *p = two();
	static const char *const in_t[] = { "t", NULL };
	struct addr_where w[1];
	struct byaddr_result r;
	const struct meter_func *c, *t;
	uint32_t ftc[4] = { 1, 2, 0, 3 };

	meter_profile_add_func(p, 3, "c")->calls = 500;
	at_inlined(p, w, 2, 100, "c", in_t);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	c = named(p, "c");
	t = named(p, "t");
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, t);
	ftc[2] = t->id;
	EXPECT_EQ(100, c->self_samples);
	EXPECT_EQ(0, t->self_samples);
	EXPECT_EQ(100, t->total_samples);
	EXPECT_EQ(100, stack_samples(p, ftc, 4));
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

/*
 * Many one-sample stacks (one per thread): the moves come out of them in
 * proportion, each whole, and the stacks add up to the rows exactly.
 */
TEST(many_small_stacks_share_out_exactly)
{
	struct meter_profile *p = meter_profile_new();
	struct addr_where w[3];
	struct byaddr_result r;
	uint64_t to_f = 0, to_h = 0;
	uint32_t fr[2] = { 1, 2 }, t;
	const struct meter_func *h;
	size_t i;

	p->period_ns = 1000000;
	p->samples = 100;
	meter_profile_add_func(p, 1, "main");
	meter_profile_add_func(p, 2, "f")->self_samples = 100;
	for (t = 1; t <= 100; t++)
		meter_profile_add_stack(p, fr, 2, 1)->tid = t;
	at(p, w, 2, 60, ADDR_FUNC, "h", true);
	at(p, w, 2, 5, ADDR_METER, NULL, true);
	at(p, w, 2, 35, ADDR_FUNC, "f", true);
	ASSERT_EQ(0, byaddr_apply(p, w, &r));
	h = named(p, "h");
	ASSERT_NE(NULL, h);
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		if (s->frames[s->depth - 1] == 2)
			to_f += s->samples;
		else if (s->frames[s->depth - 1] == h->id)
			to_h += s->samples;
	}
	EXPECT_EQ(35, named(p, "f")->self_samples);
	EXPECT_EQ(60, h->self_samples);
	EXPECT_EQ(35, to_f);
	EXPECT_EQ(60, to_h);
	EXPECT_EQ(60, h->total_samples);
	EXPECT_EQ(95, named(p, "f")->total_samples);
	addr_where_free(w, p->naddrs);
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
