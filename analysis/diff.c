// SPDX-License-Identifier: MIT
/* Two profiles compared function by function: analysis/diff.h. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static double share(double s, double n)
{
	return n > 0 ? s / n : 0.0;
}

double diff_sigmas(size_t m)
{
	/* each share's chance, so that none of m is marked but DIFF_FALSE_MARK */
	double each = m > 1 ? -expm1(log1p(-DIFF_FALSE_MARK) / (double)m) :
		      DIFF_FALSE_MARK;
	double lo = 0.0, hi = 40.0;
	int i;

	/* P(|Z| > z) = erfc(z / sqrt 2) falls with z: bisect for each */
	for (i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (erfc(mid / M_SQRT2) > each)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double diff_band(const struct analysis *base, double a,
		 const struct analysis *new, double b, double sigmas)
{
	double sa = an_share_se(base, a), sb = an_share_se(new, b);

	return sigmas * sqrt(sa * sa + sb * sb);
}

static void fill_share(struct diff_share *sh, const struct diff *d,
		       double base, double new)
{
	/* of the program's own time when corrected (analysis.h) */
	double nb = d->base->share_base, nn = d->new->share_base;

	sh->base = share(base, nb);
	sh->new = share(new, nn);
	sh->change = sh->new - sh->base;
	sh->band = diff_band(d->base, base, d->new, new, d->sigmas);
	sh->seconds = an_seconds(d->new, new) - an_seconds(d->base, base);
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double ca, cb;

	if (a->real != b->real)
		return a->real ? -1 : 1;
	if (a->excess != b->excess)
		return a->excess > b->excess ? -1 : 1;
	ca = fmax(fabs(a->self.change), fabs(a->total.change));
	cb = fmax(fabs(b->self.change), fabs(b->total.change));
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static bool empty_node(const struct an_node *nd)
{
	return !nd->self && !nd->total && !nd->f->calls;
}

/*
 * A profile's nodes sorted by name, then by record id: functions of one
 * name (a static inline function of a header, one record per translation
 * unit that uses it) pair up in id order, which the same binary gives
 * every run.
 */
struct name_ix {
	const char *name;
	uint32_t id;
	size_t node;
};

static int cmp_ix(const void *a, const void *b)
{
	const struct name_ix *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

static struct name_ix *sorted_names(const struct analysis *an)
{
	struct name_ix *ix = calloc(an->n ? an->n : 1, sizeof(*ix));
	size_t i;

	if (!ix)
		return NULL;
	for (i = 0; i < an->n; i++) {
		ix[i].name = an_name(an, i);
		ix[i].id = an->nodes[i].f->id;
		ix[i].node = i;
	}
	qsort(ix, an->n, sizeof(*ix), cmp_ix);
	return ix;
}

static void add_row(struct diff *d, const char *name, size_t base_node,
		    size_t new_node)
{
	struct diff_row *r;

	if ((base_node == SIZE_MAX ||
	     empty_node(&d->base->nodes[base_node])) &&
	    (new_node == SIZE_MAX || empty_node(&d->new->nodes[new_node])))
		return;
	r = &d->rows[d->n++];
	r->name = name;
	r->base_node = base_node;
	r->new_node = new_node;
	r->presence = base_node == SIZE_MAX ? DIFF_NEW_ONLY :
		      new_node == SIZE_MAX ? DIFF_BASE_ONLY : DIFF_BOTH;
}

/* Pairs base's and new's nodes by name (the k-th of a name with the k-th). */
static void pair_rows(struct diff *d, const struct name_ix *bx,
		      const struct name_ix *nx)
{
	size_t i = 0, k = 0;

	while (i < d->base->n || k < d->new->n) {
		int c = i == d->base->n ? 1 : k == d->new->n ? -1 :
			strcmp(bx[i].name, nx[k].name);

		if (c < 0) {
			add_row(d, bx[i].name, bx[i].node, SIZE_MAX);
			i++;
		} else if (c > 0) {
			add_row(d, nx[k].name, SIZE_MAX, nx[k].node);
			k++;
		} else {
			add_row(d, bx[i].name, bx[i].node, nx[k].node);
			i++;
			k++;
		}
	}
}

static void row_nodes(const struct diff *d, const struct diff_row *r,
		      const struct an_node **b, const struct an_node **n)
{
	*b = r->base_node != SIZE_MAX ? &d->base->nodes[r->base_node] : NULL;
	*n = r->new_node != SIZE_MAX ? &d->new->nodes[r->new_node] : NULL;
}

/*
 * The shares that could be marked: a self or total with samples on either
 * side.  A total that is its self on both sides is the same test, once.
 */
static size_t shares_compared(const struct diff *d)
{
	size_t i, m = 0;

	for (i = 0; i < d->n; i++) {
		const struct an_node *b, *n;
		bool self, total, same;

		row_nodes(d, &d->rows[i], &b, &n);
		self = (b && b->self) || (n && n->self);
		total = (b && b->total) || (n && n->total);
		same = (!b || b->total == b->self) &&
		       (!n || n->total == n->self);
		m += self + (total && !(self && same));
	}
	return m;
}

static void finish_row(struct diff *d, struct diff_row *r)
{
	const struct an_node *b, *n;
	double xs, xt;

	row_nodes(d, r, &b, &n);
	fill_share(&r->self, d, b ? (double)b->self : 0,
		   n ? (double)n->self : 0);
	fill_share(&r->total, d, b ? (double)b->total : 0,
		   n ? (double)n->total : 0);
	r->base_calls = b ? b->f->calls : 0;
	r->new_calls = n ? n->f->calls : 0;
	xs = fabs(r->self.change) - r->self.band;
	xt = fabs(r->total.change) - r->total.band;
	r->excess = fmax(xs, xt);
	r->real = r->excess > 0;
	if (r->real)
		d->real++;
}


int diff_build(struct diff *d, const struct meter_profile *base,
	       const struct meter_profile *new, const struct an_opts *o,
	       enum attribution how)
{
	struct an_opts ro = *o;
	struct name_ix *bx = NULL, *nx = NULL;
	bool failed = false;
	size_t i, cap;

	memset(d, 0, sizeof(*d));
	d->base_c = profile_attributed_copy(base, how, &failed);
	if (!failed)
		d->new_c = profile_attributed_copy(new, how, &failed);
	if (failed)
		goto nomem;
	/* every function, whatever the thresholds say */
	ro.hide_self = ro.hide_subs = 0;
	d->base = analysis_new(d->base_c ? d->base_c : base, &ro, ORDER_NAME);
	d->new = analysis_new(d->new_c ? d->new_c : new, &ro, ORDER_NAME);
	cap = (d->base ? d->base->n : 0) + (d->new ? d->new->n : 0);
	d->rows = calloc(cap ? cap : 1, sizeof(*d->rows));
	if (!d->base || !d->new || !d->rows)
		goto nomem;
	bx = sorted_names(d->base);
	nx = sorted_names(d->new);
	if (!bx || !nx)
		goto nomem;
	pair_rows(d, bx, nx);
	free(bx);
	free(nx);
	d->compared = shares_compared(d);
	d->sigmas = diff_sigmas(d->compared);
	for (i = 0; i < d->n; i++)
		finish_row(d, &d->rows[i]);
	qsort(d->rows, d->n, sizeof(*d->rows), cmp_rows);
	return 0;
nomem:
	free(bx);
	free(nx);
	errno = ENOMEM;
	return -1;
}

void diff_free(struct diff *d)
{
	analysis_free(d->base);
	analysis_free(d->new);
	meter_profile_free(d->base_c);
	meter_profile_free(d->new_c);
	free(d->rows);
	memset(d, 0, sizeof(*d));
}
