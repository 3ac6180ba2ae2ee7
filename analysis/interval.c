// SPDX-License-Identifier: MIT
/*
 * The interval between two snapshots of a session (interval.h).  A row is
 * a name, as in every report (meter_profile_by_name): records of one name
 * are summed in each snapshot, and rows are matched by name.
 */
#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "model.h"

static int by_name(const void *a, const void *b)
{
	const struct meter_func *x = *(const struct meter_func *const *)a;
	const struct meter_func *y = *(const struct meter_func *const *)b;

	return strcmp(x->name, y->name);
}

static uint64_t since(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}

static enum an_order sort_key;

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int by_order(const void *a, const void *b)
{
	const struct interval_row *x = a, *y = b;
	int c = 0;

	switch (sort_key) {
	case ORDER_SELF:
		c = cmp_u64_desc(x->f->self_samples, y->f->self_samples);
		break;
	case ORDER_TOTAL:
		c = cmp_u64_desc(x->f->total_samples, y->f->total_samples);
		break;
	case ORDER_CALLS:
		c = cmp_u64_desc(x->f->calls, y->f->calls);
		break;
	case ORDER_NAME:
		break;
	default:
		c = cmp_u64_desc(x->self, y->self);
		if (!c)
			c = cmp_u64_desc(x->calls, y->calls);
		if (!c)
			c = cmp_u64_desc(x->f->self_samples,
					 y->f->self_samples);
		break;
	}
	if (!c)
		c = strcmp(x->f->name ? x->f->name : "",
			   y->f->name ? y->f->name : "");
	return c;
}

/* prev's row of t's thread, or NULL */
static const struct meter_thread_row *
thread_in(const struct meter_profile *prev, const struct meter_thread_row *t)
{
	size_t i;

	for (i = 0; prev && i < prev->nthreads; i++)
		if (prev->threads[i].tid == t->tid &&
		    prev->threads[i].pid == t->pid)
			return &prev->threads[i];
	return NULL;
}

static int threads_build(struct interval *iv,
			 const struct meter_profile *prev)
{
	const struct meter_profile *now = iv->now;
	size_t i;

	iv->threads = calloc(now->nthreads ? now->nthreads : 1,
			     sizeof(*iv->threads));
	if (!iv->threads)
		return -1;
	for (i = 0; i < now->nthreads; i++) {
		const struct meter_thread_row *t = &now->threads[i];
		const struct meter_thread_row *o = thread_in(prev, t);

		iv->threads[i].t = t;
		iv->threads[i].samples = o ? since(t->samples, o->samples) :
					     t->samples;
	}
	iv->nthreads = now->nthreads;
	return 0;
}

int interval_build(struct interval *iv, const struct meter_profile *now,
		   const struct meter_profile *prev, enum an_order order)
{
	struct meter_profile *prev_copy = NULL;
	const struct meter_func **old = NULL;
	size_t i, nold;
	bool failed;

	memset(iv, 0, sizeof(*iv));
	iv->own = meter_profile_by_name(now, &failed);
	if (!failed && prev)
		prev_copy = meter_profile_by_name(prev, &failed);
	if (failed)
		goto fail;
	now = iv->own ? iv->own : now;
	prev = prev_copy ? prev_copy : prev;
	nold = prev ? prev->nfuncs : 0;
	iv->now = now;
	iv->whole = !prev;
	iv->rows = calloc(now->nfuncs ? now->nfuncs : 1, sizeof(*iv->rows));
	if (nold)
		old = malloc(nold * sizeof(*old));
	if (!iv->rows || (nold && !old))
		goto fail;
	for (i = 0; i < nold; i++)
		old[i] = &prev->funcs[i];
	if (nold)	/* qsort's base may not be NULL, even for 0 */
		qsort(old, nold, sizeof(*old), by_name);
	for (i = 0; i < now->nfuncs; i++) {
		const struct meter_func *f = &now->funcs[i], *key = f;
		const struct meter_func **o = nold ?
			bsearch(&key, old, nold, sizeof(*old), by_name) : NULL;
		struct interval_row *r = &iv->rows[iv->n++];

		r->f = f;
		r->self = o ? since(f->self_samples, (*o)->self_samples) :
			      f->self_samples;
		r->calls = o ? since(f->calls, (*o)->calls) : f->calls;
		iv->calls += r->calls;
	}
	iv->samples = prev ? since(now->samples, prev->samples) :
			     now->samples;
	if (threads_build(iv, prev))
		goto fail;
	free(old);
	meter_profile_free(prev_copy);
	sort_key = order;
	qsort(iv->rows, iv->n, sizeof(*iv->rows), by_order);
	return 0;
fail:
	free(old);
	meter_profile_free(prev_copy);
	interval_free(iv);
	return -1;
}

void interval_free(struct interval *iv)
{
	free(iv->rows);
	free(iv->threads);
	meter_profile_free(iv->own);
	memset(iv, 0, sizeof(*iv));
}
