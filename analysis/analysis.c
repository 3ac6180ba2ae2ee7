// SPDX-License-Identifier: MIT
/*
 * The call graph from sampled stacks, orderings and hiding (analysis.h),
 * and the option parsers the two tools share.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "addrs.h"
#include "analysis.h"
#include "names.h"

/* --- edges: an open-addressing map from (caller, callee) --- */

struct edge_map {
	size_t *slot;		/* edge index + 1; 0: empty */
	size_t mask;
};

static size_t edge_hash(size_t caller, size_t callee)
{
	uint64_t h = (uint64_t)caller * 0x9e3779b97f4a7c15ULL;

	h ^= (uint64_t)callee + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ULL;
	return (size_t)(h ^ (h >> 31));
}

static int edge_map_grow(struct analysis *an, struct edge_map *m)
{
	size_t n = m->mask ? (m->mask + 1) * 2 : 256, i;
	size_t *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return -1;
	for (i = 0; i < an->nedges; i++) {
		size_t h = edge_hash(an->edges[i].caller,
				     an->edges[i].callee) & (n - 1);

		while (slot[h])
			h = (h + 1) & (n - 1);
		slot[h] = i + 1;
	}
	free(m->slot);
	m->slot = slot;
	m->mask = n - 1;
	return 0;
}

static struct an_edge *edge_get(struct analysis *an, struct edge_map *m,
				size_t *cap, size_t caller, size_t callee)
{
	size_t h;

	if (!m->slot || an->nedges * 2 >= m->mask) {
		if (edge_map_grow(an, m))
			return NULL;
	}
	h = edge_hash(caller, callee) & m->mask;
	while (m->slot[h]) {
		struct an_edge *e = &an->edges[m->slot[h] - 1];

		if (e->caller == caller && e->callee == callee)
			return e;
		h = (h + 1) & m->mask;
	}
	if (an->nedges == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct an_edge *ne = realloc(an->edges, ncap * sizeof(*ne));

		if (!ne)
			return NULL;
		an->edges = ne;
		*cap = ncap;
	}
	m->slot[h] = an->nedges + 1;
	memset(&an->edges[an->nedges], 0, sizeof(an->edges[0]));
	an->edges[an->nedges].caller = caller;
	an->edges[an->nedges].callee = callee;
	return &an->edges[an->nedges++];
}

static int build_edges(struct analysis *an)
{
	const struct meter_profile *p = an->p;
	struct edge_map map = { 0 };
	size_t cap = 0, i, k;
	size_t *idx = NULL, idx_cap = 0;
	uint32_t *occ;		/* per node: occurrences in this stack */
	size_t *seen;		/* per node: last stack counted off, + 1 */
	int ret = -1;

	occ = calloc(an->n ? an->n : 1, sizeof(*occ));
	seen = calloc(an->n ? an->n : 1, sizeof(*seen));
	if (!occ || !seen)
		goto out;
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];
		size_t d = s->depth;

		if (!s->samples || !d)
			continue;
		an->stack_samples += s->samples;
		if (d > idx_cap) {
			size_t *n = realloc(idx, d * sizeof(*idx));

			if (!n)
				goto out;
			idx = n;
			idx_cap = d;
		}
		for (k = 0; k < d; k++) {
			const struct meter_func *f =
				meter_profile_find(p, s->frames[k]);

			idx[k] = f ? (size_t)(f - p->funcs) : NODE_ROOT;
			if (f)
				occ[idx[k]]++;
		}
		for (k = 0; k < d; k++) {
			/* An unknown id is skipped; after it, the root. */
			size_t x = idx[k], caller = k ? idx[k - 1] : NODE_ROOT;
			double share;
			struct an_edge *e;

			if (x == NODE_ROOT)
				continue;
			if (occ[x] > 1)
				an->nodes[x].recursive = true;
			share = (double)s->samples / (double)occ[x];
			e = edge_get(an, &map, &cap, caller, x);
			if (!e)
				goto out;
			e->callee_time += share;
			if (s->state != METER_STATE_ONCPU) {
				e->callee_off += share;
				if (caller != NODE_ROOT)
					e->caller_off += (double)s->samples /
							 (double)occ[caller];
				if (seen[x] != i + 1) {
					seen[x] = i + 1;
					an->nodes[x].total_off += s->samples;
				}
			}
			/* samples: once per stack for each distinct pair. */
			if (e->stamp != i + 1) {
				e->stamp = i + 1;
				e->samples += s->samples;
			}
			/* The caller's side of the same edge. */
			if (caller != NODE_ROOT)
				e->caller_time += (double)s->samples /
						  (double)occ[caller];
			if (k == d - 1)
				an->nodes[x].leaf_time += share;
		}
		for (k = 0; k < d; k++)
			if (idx[k] != NODE_ROOT)
				occ[idx[k]] = 0;
	}
	ret = 0;
out:
	free(occ);
	free(seen);
	free(idx);
	free(map.slot);
	return ret;
}

static int link_edges(struct analysis *an)
{
	size_t i;

	/* Count, allocate once, fill. */
	for (i = 0; i < an->nedges; i++) {
		const struct an_edge *e = &an->edges[i];

		an->nodes[e->callee].nin++;
		if (e->caller != NODE_ROOT)
			an->nodes[e->caller].nout++;
	}
	for (i = 0; i < an->n; i++) {
		struct an_node *x = &an->nodes[i];

		x->in = malloc((x->nin ? x->nin : 1) * sizeof(*x->in));
		x->out = malloc((x->nout ? x->nout : 1) * sizeof(*x->out));
		if (!x->in || !x->out)
			return -1;
		x->nin = x->nout = 0;
	}
	for (i = 0; i < an->nedges; i++) {
		const struct an_edge *e = &an->edges[i];
		struct an_node *d = &an->nodes[e->callee];

		d->in[d->nin++] = i;
		if (e->caller != NODE_ROOT) {
			struct an_node *c = &an->nodes[e->caller];

			c->out[c->nout++] = i;
		}
	}
	return 0;
}

/* --- ordering --- */

static const struct analysis *sort_an;
static bool sort_inclusive;
static enum an_order sort_key;

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_nodes(const void *pa, const void *pb)
{
	const struct an_node *a = &sort_an->nodes[*(const size_t *)pa];
	const struct an_node *b = &sort_an->nodes[*(const size_t *)pb];
	int c = 0;

	switch (sort_key) {
	case ORDER_SELF:
		c = sort_inclusive ? cmp_u64_desc(a->total, b->total) :
				     cmp_u64_desc(a->self, b->self);
		if (!c)
			c = cmp_u64_desc(a->f->calls, b->f->calls);
		break;
	case ORDER_TOTAL:
	case ORDER_TOPOLOGICAL:
		c = cmp_u64_desc(a->total, b->total);
		if (!c)
			c = cmp_u64_desc(a->self, b->self);
		break;
	case ORDER_CALLS:
		c = cmp_u64_desc(a->f->calls, b->f->calls);
		if (!c)
			c = cmp_u64_desc(a->self, b->self);
		break;
	default:
		break;
	}
	if (!c)
		c = strcmp(a->f->name, b->f->name);
	if (!c)
		c = a->f->id < b->f->id ? -1 : a->f->id > b->f->id;
	return c;
}

/* A min-heap of ranks (positions in the by-weight order). */
static void heap_push(size_t *h, size_t *n, size_t v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n)
{
	size_t top = h[0], v = h[--(*n)], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
	return top;
}

/*
 * Topological order, roughly (the graph may have cycles): callers before
 * callees; among the nodes ready, the largest total first; a cycle is
 * broken at its largest remaining node.  Nodes never seen in a stack come
 * last, by total, self and name.  O(E + N log N).
 */
static void sort_topological(struct analysis *an)
{
	size_t n = an->n ? an->n : 1;
	size_t *pending = calloc(n, sizeof(*pending));
	size_t *byweight = malloc(n * sizeof(*byweight));
	size_t *rank = malloc(n * sizeof(*rank));
	size_t *heap = malloc(2 * n * sizeof(*heap));
	bool *done = calloc(n, sizeof(*done));
	size_t i, placed = 0, cursor = 0, nheap = 0;

	sort_key = ORDER_TOTAL;
	if (!pending || !done || !byweight || !rank || !heap) {
		/* Out of memory: by total instead. */
		qsort(an->order, an->n, sizeof(*an->order), cmp_nodes);
		goto out;
	}
	for (i = 0; i < an->n; i++)
		byweight[i] = i;
	qsort(byweight, an->n, sizeof(*byweight), cmp_nodes);
	for (i = 0; i < an->n; i++)
		rank[byweight[i]] = i;
	for (i = 0; i < an->nedges; i++) {
		const struct an_edge *e = &an->edges[i];

		if (e->caller != NODE_ROOT && e->caller != e->callee)
			pending[e->callee]++;
	}
	for (i = 0; i < an->n; i++)
		if (!pending[i])
			heap_push(heap, &nheap, rank[i]);
	while (placed < an->n) {
		size_t pick = NODE_ROOT, k;

		/* The heaviest ready node... */
		while (nheap && pick == NODE_ROOT) {
			size_t x = byweight[heap_pop(heap, &nheap)];

			if (!done[x])
				pick = x;
		}
		/* ...or, in a cycle, the heaviest not yet placed. */
		while (pick == NODE_ROOT) {
			if (!done[byweight[cursor]])
				pick = byweight[cursor];
			cursor++;
		}
		done[pick] = true;
		an->order[placed++] = pick;
		for (k = 0; k < an->nodes[pick].nout; k++) {
			const struct an_edge *e =
				&an->edges[an->nodes[pick].out[k]];

			if (e->callee == pick || !pending[e->callee])
				continue;
			if (!--pending[e->callee] && !done[e->callee])
				heap_push(heap, &nheap, rank[e->callee]);
		}
	}
out:
	free(pending);
	free(byweight);
	free(rank);
	free(heap);
	free(done);
}

void analysis_sort(struct analysis *an, enum an_order order,
		   bool inclusive)
{
	size_t i;

	for (i = 0; i < an->n; i++)
		an->order[i] = i;
	sort_an = an;
	sort_inclusive = inclusive;
	sort_key = order;
	if (order == ORDER_TOPOLOGICAL)
		sort_topological(an);
	else
		qsort(an->order, an->n, sizeof(*an->order), cmp_nodes);
}

/* --- hiding (Racket's hide-self / hide-subs) --- */

static void apply_hiding(struct analysis *an, double hide_self,
			 double hide_subs)
{
	size_t i, k;

	for (i = 0; i < an->n; i++) {
		struct an_node *x = &an->nodes[i];
		bool small = true;

		if (an_percent(an, (double)x->self) >= hide_self)
			continue;
		/* As a callee, in each caller's entry. */
		for (k = 0; k < x->nin && small; k++) {
			const struct an_edge *e = &an->edges[x->in[k]];

			if (e->caller == NODE_ROOT)
				continue;
			if (an->nodes[e->caller].total &&
			    100.0 * e->caller_time /
			    (double)an->nodes[e->caller].total >= hide_subs)
				small = false;
		}
		/* As a caller, in each callee's entry. */
		for (k = 0; k < x->nout && small; k++) {
			const struct an_edge *e = &an->edges[x->out[k]];

			if (an->nodes[e->callee].total &&
			    100.0 * e->callee_time /
			    (double)an->nodes[e->callee].total >= hide_subs)
				small = false;
		}
		x->hidden = small;
	}
}

/* Periods per tick as the profile was taken (a correction keeps the
 * profile's samples as measured). */
static double sample_weight(const struct meter_profile *p)
{
	double taken = (double)p->samples;

	return p->ticks && (double)p->ticks < taken ?
	       taken / (double)p->ticks : 1.0;
}

/* an->names: the rows' short names */
static int short_names(struct analysis *an)
{
	const char **whole = malloc((an->n ? an->n : 1) * sizeof(*whole));
	size_t i;
	int ret = -1;

	an->names = calloc(an->n ? an->n : 1, sizeof(*an->names));
	if (!whole || !an->names)
		goto out;
	for (i = 0; i < an->n; i++)
		whole[i] = an->nodes[i].f->name ? an->nodes[i].f->name : "";
	ret = names_short(an->names, whole, an->n);
out:
	free(whole);
	if (ret) {
		free(an->names);
		an->names = NULL;
	}
	return ret;
}

struct analysis *analysis_new(const struct meter_profile *p,
			      const struct an_opts *o,
			      enum an_order default_order)
{
	struct analysis *an = calloc(1, sizeof(*an));
	uint64_t self_sum = 0;
	size_t i;

	if (!an)
		return NULL;
	an->p = p;
	an->n = p->nfuncs;
	an->nodes = calloc(an->n ? an->n : 1, sizeof(*an->nodes));
	an->order = calloc(an->n ? an->n : 1, sizeof(*an->order));
	if (!an->nodes || !an->order)
		goto fail;
	for (i = 0; i < an->n; i++) {
		const struct meter_func *f = &p->funcs[i];

		an->nodes[i].f = f;
		an->nodes[i].self = f->self_samples;
		an->nodes[i].self_off = f->self_off[METER_OFF_RUNQ] +
					f->self_off[METER_OFF_BLOCKED];
		an->nodes[i].total = f->total_samples > f->self_samples ?
				     f->total_samples : f->self_samples;
		self_sum += f->self_samples;
		an->calls += f->calls;
		if (f->alloc_calls || f->alloc_bytes)
			an->has_alloc = true;
	}
	an->samples = p->samples;
	an->weight = sample_weight(p);
	if (self_sum + p->no_current + p->invalid > an->samples)
		an->samples = self_sum + p->no_current + p->invalid;
	an->share_base = (double)an->samples;
	if (p->corrected && p->corrected_samples < an->share_base)
		an->share_base -= p->corrected_samples;
	if (build_edges(an) || link_edges(an) ||
	    (!o->whole_names && short_names(an)))
		goto fail;
	analysis_sort(an, o->order == ORDER_DEFAULT ? default_order : o->order,
		      o->inclusive);
	apply_hiding(an, o->hide_self, o->hide_subs);
	/* Labels follow the display order. */
	{
		unsigned label = 1;

		for (i = 0; i < an->n; i++)
			if (!an->nodes[an->order[i]].hidden)
				an->nodes[an->order[i]].label = label++;
	}
	return an;
fail:
	analysis_free(an);
	return NULL;
}

void analysis_free(struct analysis *an)
{
	size_t i;

	if (!an)
		return;
	for (i = 0; an->nodes && i < an->n; i++) {
		free(an->nodes[i].in);
		free(an->nodes[i].out);
	}
	for (i = 0; an->names && i < an->n; i++)
		free(an->names[i]);
	free(an->names);
	free(an->nodes);
	free(an->edges);
	free(an->order);
	free(an);
}

double an_seconds(const struct analysis *an, double samples)
{
	return samples * (double)an->p->period_ns / 1e9;
}

/*
 * The rate the sampler's ticks came at when it was well below the rate
 * asked for (each late tick weighs the periods since the last: the signal
 * backend's timer fires on the scheduler tick); 0 when it was not, or
 * the ticks are unknown.
 */
double an_delivered_hz(const struct analysis *an)
{
	const struct meter_profile *p = an->p;

	if (!p->period_ns || !p->ticks || !p->samples ||
	    p->ticks * 5 >= p->samples * 4)
		return 0.0;
	return 1e9 / (double)p->period_ns * (double)p->ticks /
	       (double)p->samples;
}

/*
 * The CPU time no sample covered (threads of the signal backend shorter
 * than its tick), when it is more than 5 % of the time sampled: 0 when
 * it is not.
 */
double an_unsampled_seconds(const struct analysis *an)
{
	const struct meter_profile *p = an->p;
	double sampled = (double)p->samples * (double)p->period_ns;

	if ((double)p->unsampled_ns * 20 <= sampled)
		return 0.0;
	return (double)p->unsampled_ns / 1e9;
}

double an_percent(const struct analysis *an, double samples)
{
	return an->share_base > 0 ? 100.0 * samples / an->share_base : 0.0;
}

double an_measured_percent(const struct analysis *an, double samples)
{
	return an->samples ? 100.0 * samples / (double)an->samples : 0.0;
}

const char *an_whole_name(const struct analysis *an, size_t node)
{
	if (node == NODE_ROOT)
		return "<spontaneous>";
	return an->nodes[node].f->name && an->nodes[node].f->name[0] ?
	       an->nodes[node].f->name : "???";
}

const char *an_name(const struct analysis *an, size_t node)
{
	if (node == NODE_ROOT || !an->names || !an->names[node][0])
		return an_whole_name(an, node);
	return an->names[node];
}


static int cmp_lines(const void *pa, const void *pb)
{
	const struct an_line *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

int an_node_lines(const struct analysis *an, size_t node, bool callers,
		  struct an_line **lines, size_t *n)
{
	const struct an_node *nd = &an->nodes[node];
	const size_t *edges = callers ? nd->in : nd->out;
	size_t i;

	*n = callers ? nd->nin : nd->nout;
	*lines = calloc(*n ? *n : 1, sizeof(**lines));
	if (!*lines)
		return -1;
	for (i = 0; i < *n; i++) {
		const struct an_edge *e = &an->edges[edges[i]];

		(*lines)[i].node = callers ? e->caller : e->callee;
		(*lines)[i].time = callers ? e->callee_time : e->caller_time;
		(*lines)[i].off = callers ? e->callee_off : e->caller_off;
	}
	qsort(*lines, *n, sizeof(**lines), cmp_lines);
	return 0;
}

double an_share_se(const struct analysis *an, double s)
{
	/* the shares' own base: with --correct, fewer samples than taken */
	double n = an->share_base, p;

	if (n <= 0)
		return 0.0;
	p = s / n;
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	return sqrt(p * (1.0 - p) * an->weight / n);
}


/* --- correction --- */

/* c's samples by address (c: a copy); 0, or -1 on ENOMEM */
static int by_address(struct meter_profile *c)
{
	struct addr_where *w = calloc(c->naddrs, sizeof(*w));
	struct byaddr_result r;
	int ret;

	if (!w)
		return -1;
	ret = addr_resolve(c, w);
	if (!ret)
		ret = byaddr_apply(c, w, &r);
	addr_where_free(w, c->naddrs);
	free(w);
	return ret;
}

struct meter_profile *profile_attributed_copy(const struct meter_profile *p,
					      enum attribution how,
					      bool *failed)
{
	struct meter_profile *c;
	int ret;

	*failed = false;
	if (how == ATTRIB_AS_TAKEN || !p->period_ns || !p->samples)
		return NULL;
	if (how == ATTRIB_CORRECTED && !p->call_cost_ps)
		return NULL;
	if (how == ATTRIB_BY_ADDRESS && (!p->naddrs || !p->nmaps))
		return NULL;
	c = meter_profile_new();
	if (!c || meter_profile_merge(c, p))
		goto nomem;
	ret = how == ATTRIB_CORRECTED ? profile_correct(c) : by_address(c);
	if (ret)
		goto nomem;
	return c;
nomem:
	meter_profile_free(c);
	*failed = true;
	return NULL;
}
