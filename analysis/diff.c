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

double diff_band(const struct analysis *base, double a,
		 const struct analysis *new, double b)
{
	double sa = an_share_se(base, a), sb = an_share_se(new, b);

	return DIFF_BAND_SIGMAS * sqrt(sa * sa + sb * sb);
}

static void fill_share(struct diff_share *sh, const struct diff *d,
		       double base, double new)
{
	double nb = (double)d->base->samples, nn = (double)d->new->samples;

	sh->base = share(base, nb);
	sh->new = share(new, nn);
	sh->change = sh->new - sh->base;
	sh->band = diff_band(d->base, base, d->new, new);
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

/* new's node index by name: a sorted index of new's names */
struct name_ix {
	const char *name;
	size_t node;
	bool matched;
};

static int cmp_ix(const void *a, const void *b)
{
	return strcmp(((const struct name_ix *)a)->name,
		      ((const struct name_ix *)b)->name);
}

static void finish_row(struct diff *d, struct diff_row *r)
{
	const struct an_node *b = r->base_node != SIZE_MAX ?
		&d->base->nodes[r->base_node] : NULL;
	const struct an_node *n = r->new_node != SIZE_MAX ?
		&d->new->nodes[r->new_node] : NULL;
	double xs, xt;

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

static bool empty_node(const struct an_node *nd)
{
	return !nd->self && !nd->total && !nd->f->calls;
}

int diff_build(struct diff *d, const struct meter_profile *base,
	       const struct meter_profile *new, const struct render_opts *o)
{
	struct render_opts ro = *o;
	struct name_ix *ix = NULL;
	bool failed = false;
	size_t i, cap;

	memset(d, 0, sizeof(*d));
	if (o->correct) {
		d->base_c = profile_corrected_copy(base, &failed);
		if (!failed)
			d->new_c = profile_corrected_copy(new, &failed);
		if (failed)
			goto nomem;
	}
	/* every function, whatever the thresholds say */
	ro.threshold = 0;
	ro.hide_self = ro.hide_subs = 0;
	d->base = analysis_new(d->base_c ? d->base_c : base, &ro, ORDER_NAME);
	d->new = analysis_new(d->new_c ? d->new_c : new, &ro, ORDER_NAME);
	cap = (d->base ? d->base->n : 0) + (d->new ? d->new->n : 0);
	d->rows = calloc(cap ? cap : 1, sizeof(*d->rows));
	ix = calloc(d->new && d->new->n ? d->new->n : 1, sizeof(*ix));
	if (!d->base || !d->new || !d->rows || !ix)
		goto nomem;
	for (i = 0; i < d->new->n; i++) {
		ix[i].name = an_name(d->new, i);
		ix[i].node = i;
	}
	qsort(ix, d->new->n, sizeof(*ix), cmp_ix);
	for (i = 0; i < d->base->n; i++) {
		struct name_ix key = { an_name(d->base, i), 0, false }, *hit;
		struct diff_row *r;

		hit = bsearch(&key, ix, d->new->n, sizeof(*ix), cmp_ix);
		if (empty_node(&d->base->nodes[i]) &&
		    (!hit || empty_node(&d->new->nodes[hit->node])))
			continue;
		r = &d->rows[d->n++];
		r->name = key.name;
		r->base_node = i;
		r->new_node = hit ? hit->node : SIZE_MAX;
		r->presence = hit ? DIFF_BOTH : DIFF_BASE_ONLY;
		if (hit)
			hit->matched = true;
	}
	for (i = 0; i < d->new->n; i++) {
		struct diff_row *r;

		if (ix[i].matched || empty_node(&d->new->nodes[ix[i].node]))
			continue;
		r = &d->rows[d->n++];
		r->name = ix[i].name;
		r->base_node = SIZE_MAX;
		r->new_node = ix[i].node;
		r->presence = DIFF_NEW_ONLY;
	}
	free(ix);
	for (i = 0; i < d->n; i++)
		finish_row(d, &d->rows[i]);
	qsort(d->rows, d->n, sizeof(*d->rows), cmp_rows);
	return 0;
nomem:
	free(ix);
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
