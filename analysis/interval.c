// SPDX-License-Identifier: MIT
/*
 * The interval between two snapshots of a session (interval.h).  Function
 * ids are the session's, stable between snapshots, so rows are matched by
 * id.
 */
#include <stdlib.h>
#include <string.h>

#include "interval.h"

static int by_id(const void *a, const void *b)
{
	const struct meter_func *x = *(const struct meter_func *const *)a;
	const struct meter_func *y = *(const struct meter_func *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t since(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}

static enum render_order sort_key;

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

int interval_build(struct interval *iv, const struct meter_profile *now,
		   const struct meter_profile *prev, enum render_order order)
{
	const struct meter_func **old = NULL;
	size_t i, nold = prev ? prev->nfuncs : 0;

	memset(iv, 0, sizeof(*iv));
	iv->now = now;
	iv->whole = !prev;
	iv->rows = calloc(now->nfuncs ? now->nfuncs : 1, sizeof(*iv->rows));
	if (nold)
		old = malloc(nold * sizeof(*old));
	if (!iv->rows || (nold && !old)) {
		free(old);
		free(iv->rows);
		iv->rows = NULL;
		return -1;
	}
	for (i = 0; i < nold; i++)
		old[i] = &prev->funcs[i];
	if (nold)	/* qsort's base may not be NULL, even for 0 */
		qsort(old, nold, sizeof(*old), by_id);
	for (i = 0; i < now->nfuncs; i++) {
		const struct meter_func *f = &now->funcs[i], *key = f;
		const struct meter_func **o = nold ?
			bsearch(&key, old, nold, sizeof(*old), by_id) : NULL;
		struct interval_row *r = &iv->rows[iv->n++];

		r->f = f;
		r->self = o ? since(f->self_samples, (*o)->self_samples) :
			      f->self_samples;
		r->calls = o ? since(f->calls, (*o)->calls) : f->calls;
		iv->calls += r->calls;
	}
	iv->samples = prev ? since(now->samples, prev->samples) :
			     now->samples;
	free(old);
	sort_key = order;
	qsort(iv->rows, iv->n, sizeof(*iv->rows), by_order);
	return 0;
}

void interval_free(struct interval *iv)
{
	free(iv->rows);
	memset(iv, 0, sizeof(*iv));
}
