// SPDX-License-Identifier: MIT
/*
 * The samples given by address (addrs.h).  A sample's address is where
 * the thread was: on meter's own instructions (what the plugin adds, which
 * the line table puts on "<meter>"; libmeter), in another function of the
 * program than the one that was current (one inlined without a record, a
 * callee whose entry had not run yet, a caller's code after a return's
 * store), or in the current function.  The first are taken out of the
 * current function, as the correction takes its estimate out; the second
 * go to that function, as the innermost inline frame names it, a callee
 * of the current one in the stacks (unless, where a file built for meter
 * has no debug records, it is below the current one there: a flat copy
 * inlined into it, in a build without -g); the rest stay.  What meter counts
 * exactly stays: the calls, the stacks' shape, the totals of the header
 * and of the threads.
 *
 * A sample moves whole: each address row is counted samples of one
 * function at one address, so a function's new self time is an exact
 * count.  The stacks that end in a function are shared out in proportion
 * (rounded), as the correction scales them (correct.c).
 */
#include <stdlib.h>
#include <string.h>

#include "addrs.h"
#include "analysis.h"

/* The recorded functions a sample's function is inlined into, inside the
 * current one, that its stacks keep (the innermost ones, past this) */
#define GIVE_PATH_MAX 8

/* What one function gives: to meter, and to other functions. */
struct give {
	uint32_t from, to;	/* function indexes */
	uint32_t path[GIVE_PATH_MAX];	/* between them, outermost first */
	uint32_t npath;
	uint64_t n;
};

static int cmp_give(const void *a, const void *b)
{
	const struct give *x = a, *y = b;
	uint32_t i;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->npath != y->npath)
		return x->npath < y->npath ? -1 : 1;
	for (i = 0; i < x->npath; i++)
		if (x->path[i] != y->path[i])
			return x->path[i] < y->path[i] ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/*
 * Whether a record's name is the function found by name: the same, or,
 * for a name read without a linkage name (internal linkage: no mangled
 * name to demangle), the record's less its parameters and ABI tags.
 */
static bool name_is(const char *record, const char *found)
{
	size_t n = strlen(found);

	return !strncmp(record, found, n) &&
	       (!record[n] || record[n] == '(' || record[n] == '[');
}

/*
 * Whether a record is the innermost function at w: by its name, or, for
 * a clone named by its symbol, by the symbol whole (--patch names the
 * record of spin.constprop.0 so; its name cut, spin, is another
 * function's).
 */
static bool is_innermost(const char *record, const struct addr_where *w)
{
	return name_is(record, w->func) || (w->sym && !strcmp(record, w->sym));
}

/* The index of the row of the function found by name; false: none. */
static bool func_row(const struct meter_profile *p, const char *name,
		     uint32_t *idx)
{
	size_t i;

	for (i = 0; i < p->nfuncs; i++) {
		if (name_is(p->funcs[i].name, name)) {
			*idx = (uint32_t)i;
			return true;
		}
	}
	return false;
}

/* The row of a clone's record, named by its whole symbol; false: none. */
static bool sym_row(const struct meter_profile *p, const char *sym,
		    uint32_t *idx)
{
	size_t i;

	for (i = 0; sym && i < p->nfuncs; i++) {
		if (!strcmp(p->funcs[i].name, sym)) {
			*idx = (uint32_t)i;
			return true;
		}
	}
	return false;
}

/* A row for a function with no record (no calls): its index, or -1. */
static int func_row_made(struct meter_profile *p, const char *name,
			 uint32_t *idx)
{
	uint32_t max = 0;
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].id > max)
			max = p->funcs[i].id;
	if (max == UINT32_MAX || !meter_profile_add_func(p, max + 1, name))
		return -1;
	*idx = (uint32_t)(p->nfuncs - 1);
	return 0;
}

/*
 * The row a sample found in a function goes to: that function's; a row
 * made for it when it has no record but is in code the plugin built (its
 * tiny rule left it alone: the user asked for every function); else none
 * (TO_NONE): a library's function, or a helper the user did not
 * instrument in a build by hand, whose time is its caller's.  -1 on
 * ENOMEM.
 */
#define TO_NONE (UINT32_MAX - 1)
static int row_to(struct meter_profile *p, const char *name, bool plugin,
		  uint32_t *to)
{
	if (func_row(p, name, to))
		return 0;
	if (!plugin) {
		*to = TO_NONE;
		return 0;
	}
	return func_row_made(p, name, to);
}

/*
 * Where a sample of function f (an index) at w goes: g->to and the path
 * to it from f, the functions w's innermost one is inlined into inside
 * f that have rows, outermost first (an inlined copy that the plugin
 * counted keeps its host current).  TO_NONE: f's own code, or nothing
 * with a row.  -1 on ENOMEM.
 */
static int move_to(struct meter_profile *p, uint32_t f,
		   const struct addr_where *w, struct give *g)
{
	size_t m = w->nouter + 1, j, t;
	const char *name;
	uint32_t row;

	g->to = TO_NONE;
	g->npath = 0;
	/* frames outermost first: outer[nouter - 1] ... outer[0], func */
	for (j = m; j > 0; j--) {
		if (j == m ? is_innermost(p->funcs[f].name, w) :
		    name_is(p->funcs[f].name, w->outer[m - 1 - j]))
			break;
	}
	for (t = j; t < m; t++) {
		name = t == m - 1 ? w->func : w->outer[m - 2 - t];
		if ((t != m - 1 || !sym_row(p, w->sym, &row)) &&
		    row_to(p, name, w->plugin, &row))
			return -1;
		if (row == TO_NONE || row == f)
			continue;
		if (g->to != TO_NONE) {
			if (g->npath == GIVE_PATH_MAX) {
				memmove(g->path, g->path + 1,
					(GIVE_PATH_MAX - 1) * sizeof(*g->path));
				g->npath--;
			}
			g->path[g->npath++] = g->to;
		}
		g->to = row;
	}
	return 0;
}

/* The on-CPU stacks' leaf function's index, or SIZE_MAX. */
static size_t leaf_of(const struct meter_profile *p, size_t s)
{
	const struct meter_stack *st = &p->stacks[s];
	const struct meter_func *leaf;

	if (!st->depth || st->state != METER_STATE_ONCPU)
		return SIZE_MAX;
	leaf = meter_profile_find(p, st->frames[st->depth - 1]);
	return leaf ? (size_t)(leaf - p->funcs) : SIZE_MAX;
}

/* p's on-CPU stacks by leaf: function f's are ix[start[f] .. start[f + 1]) */
struct by_leaf {
	size_t nfuncs;
	size_t *ix, *start;
};

static int by_leaf_make(const struct meter_profile *p, struct by_leaf *b)
{
	size_t s, f, *fill;

	b->nfuncs = p->nfuncs;
	b->ix = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*b->ix));
	b->start = calloc(p->nfuncs + 1, sizeof(*b->start));
	fill = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*fill));
	if (!b->ix || !b->start || !fill) {
		free(fill);
		return -1;
	}
	for (s = 0; s < p->nstacks; s++)
		if ((f = leaf_of(p, s)) != SIZE_MAX)
			b->start[f + 1]++;
	for (f = 0; f < p->nfuncs; f++)
		b->start[f + 1] += b->start[f];
	for (s = 0; s < p->nstacks; s++)
		if ((f = leaf_of(p, s)) != SIZE_MAX)
			b->ix[b->start[f] + fill[f]++] = s;
	free(fill);
	return 0;
}

/*
 * The pairs (f, h) where row h is below leaf f in one of f's on-CPU stacks
 * with samples, sorted: made once, when the first address asks (a -g0
 * file's rows), so that each asking row costs a search, not a scan of
 * f's stacks.
 */
struct below_leaf {
	uint64_t *v;
	size_t n;
	bool made;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int below_leaf_make(const struct meter_profile *p,
			   struct below_leaf *bl)
{
	size_t s, n = 0, f;

	bl->made = true;
	for (s = 0; s < p->nstacks; s++)
		if (p->stacks[s].samples && leaf_of(p, s) != SIZE_MAX)
			n += p->stacks[s].depth - 1;
	bl->v = malloc((n ? n : 1) * sizeof(*bl->v));
	if (!bl->v)
		return -1;
	for (s = 0; s < p->nstacks; s++) {
		const struct meter_stack *st = &p->stacks[s];
		uint32_t k;

		if (!st->samples || (f = leaf_of(p, s)) == SIZE_MAX)
			continue;
		for (k = 0; k + 1 < st->depth; k++)
			bl->v[bl->n++] = (uint64_t)f << 32 | st->frames[k];
	}
	qsort(bl->v, bl->n, sizeof(*bl->v), cmp_u64);
	return 0;
}

/*
 * Whether row h is below f in one of f's on-CPU stacks with samples: where
 * a file built for meter has no debug records (-g0), so no inline ones,
 * f's samples at an address of h's are then on a copy of f inlined into
 * h, which made itself current, and they stay f's; else they would go to
 * h as f's callee, a call that never was.  (With the records, such an
 * address is h's own code: a recursion's callee not entered yet.)
 * -1 if the pairs could not be made.
 */
static int inlined_into(const struct meter_profile *p, struct below_leaf *bl,
			size_t f, uint32_t h)
{
	uint64_t key = (uint64_t)f << 32 | p->funcs[h].id;

	if (!bl->made && below_leaf_make(p, bl))
		return -1;
	return bsearch(&key, bl->v, bl->n, sizeof(key), cmp_u64) != NULL;
}

/*
 * The moves of p's address rows, sorted by giver; meter's own are to
 * UINT32_MAX.  Counts what it finds into r.
 */
static struct give *gives_of(struct meter_profile *p,
			     const struct addr_where *where, size_t *n,
			     struct byaddr_result *r)
{
	struct give *g = calloc(p->naddrs ? p->naddrs : 1, sizeof(*g));
	struct below_leaf bl = { 0 };
	size_t i, k;
	int into;

	*n = 0;
	if (!g)
		goto fail;
	for (i = 0; i < p->naddrs; i++) {
		const struct meter_addr *a = &p->addrs[i];
		const struct meter_func *f = meter_profile_find(p, a->func);
		struct give *to = &g[*n];

		to->to = UINT32_MAX;	/* meter's own */
		to->npath = 0;
		if (f && where[i].kind == ADDR_FUNC) {
			if (is_innermost(f->name, &where[i])) {
				r->resolved += a->samples;
				continue;
			}
			if (move_to(p, (uint32_t)(f - p->funcs), &where[i],
				    to))
				goto fail;
			/* a row made may have moved the array */
			f = meter_profile_find(p, a->func);
			into = to->to != TO_NONE && where[i].no_records ?
			       inlined_into(p, &bl, (size_t)(f - p->funcs),
					    to->to) : 0;
			if (into < 0)
				goto fail;
			if (into) {
				r->resolved += a->samples;
				continue;
			}
		}
		if (!f || where[i].kind == ADDR_UNRESOLVED ||
		    to->to == TO_NONE) {
			r->unresolved += a->samples;
			continue;
		}
		r->resolved += a->samples;
		to->from = (uint32_t)(f - p->funcs);
		to->n = a->samples;
		(*n)++;
	}
	qsort(g, *n, sizeof(*g), cmp_give);
	/* one move per giver and path: one new stack per move and stack */
	for (i = 0, k = 0; i < *n; i++) {
		if (k && !cmp_give(&g[k - 1], &g[i]))
			g[k - 1].n += g[i].n;
		else
			g[k++] = g[i];
	}
	*n = k;
	free(bl.v);
	return g;
fail:
	free(bl.v);
	free(g);
	return NULL;
}

/* s, ending in f, with g's path and then g's to as its callees: a new
 * stack of samples. */
static int stack_to(struct meter_profile *p, size_t s, const struct give *g,
		    uint64_t samples)
{
	struct meter_stack *st = &p->stacks[s], *d;
	uint32_t depth = st->depth + g->npath + 1, k;
	uint32_t *frames = malloc(depth * sizeof(*frames));
	uint32_t tid = st->tid, proc = st->proc;
	bool truncated = st->truncated;

	if (!frames)
		return -1;
	memcpy(frames, st->frames, st->depth * sizeof(*frames));
	for (k = 0; k < g->npath; k++)
		frames[st->depth + k] = p->funcs[g->path[k]].id;
	frames[depth - 1] = p->funcs[g->to].id;
	d = meter_profile_add_stack(p, frames, depth, samples);
	free(frames);
	if (!d)
		return -1;
	d->tid = tid;
	d->proc = proc;
	d->truncated = truncated;
	return 0;
}

/* a * b / c, floored, without overflow (c > 0) */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((unsigned __int128)a * b / c);
}

/*
 * One move of giver f, n of its on[f] self samples, out of its stacks
 * (ix[0..m), what each has left in left[]): in proportion to what each
 * has left, by cumulative rounding, so that the parts add up to the
 * move's share of the stacks exactly and none takes more than it has.
 */
static int move_out(struct meter_profile *p, const size_t *ix, size_t m,
		    uint64_t *left, uint64_t on, const struct give *g)
{
	uint64_t whole = 0, have = 0, target, cum = 0;
	size_t j;

	for (j = 0; j < m; j++) {
		whole += p->stacks[ix[j]].samples;
		have += left[ix[j]];
	}
	target = on ? muldiv(g->n, whole, on) : 0;
	if (target > have)
		target = have;
	for (j = 0; j < m && target; j++) {
		uint64_t prev = cum, part;

		cum += left[ix[j]];
		part = muldiv(cum, target, have) - muldiv(prev, target, have);
		left[ix[j]] -= part;
		if (part && g->to != UINT32_MAX &&
		    stack_to(p, ix[j], g, part))
			return -1;
	}
	return 0;
}

/*
 * The stacks that end in a giver, shared out as its self samples were
 * (on[f] its self samples before, g what each gave): a move to another
 * function becomes stacks with it as the leaf's callee, meter's own
 * leave them.
 */
static int share_stacks(struct meter_profile *p, const struct give *g,
			size_t ng, const uint64_t *on)
{
	size_t n0 = p->nstacks, s, f, k = 0;
	uint64_t *left = malloc((n0 ? n0 : 1) * sizeof(*left));
	struct by_leaf b = { 0 };
	int ret = -1;

	if (!left || by_leaf_make(p, &b))
		goto out;
	for (s = 0; s < n0; s++)
		left[s] = p->stacks[s].samples;
	for (f = 0; f < b.nfuncs && k < ng; f++) {
		size_t m = b.start[f + 1] - b.start[f];

		while (k < ng && g[k].from < f)
			k++;
		for (; k < ng && g[k].from == f; k++)
			if (m && move_out(p, b.ix + b.start[f], m, left, on[f],
					  &g[k]))
				goto out;
	}
	for (s = 0; s < n0; s++)
		p->stacks[s].samples = left[s];
	meter_profile_drop_empty_stacks(p);
	ret = 0;
out:
	free(b.ix);
	free(b.start);
	free(left);
	return ret;
}

int byaddr_apply(struct meter_profile *p, const struct addr_where *where,
		 struct byaddr_result *r)
{
	uint64_t *on = NULL;
	struct give *g;
	size_t ng, i;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	g = gives_of(p, where, &ng, r);
	if (!g)
		return -1;
	on = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*on));
	if (!on)
		goto out;
	for (i = 0; i < p->nfuncs; i++)
		on[i] = p->funcs[i].self_samples;
	for (i = 0; i < ng; i++) {
		struct meter_func *from = &p->funcs[g[i].from];
		uint64_t n = g[i].n < from->self_samples ? g[i].n :
			     from->self_samples;

		from->self_samples -= n;
		g[i].n = n;
		if (g[i].to == UINT32_MAX) {
			r->meter += n;
		} else {
			p->funcs[g[i].to].self_samples += n;
			r->moved += n;
		}
	}
	if (share_stacks(p, g, ng, on))
		goto out;
	meter_profile_compute_totals(p);
	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].total_samples < p->funcs[i].self_samples)
			p->funcs[i].total_samples = p->funcs[i].self_samples;
	p->corrected = true;
	p->by_address = true;
	p->corrected_samples = (double)r->meter;
	p->addr_moved = r->moved;
	p->addr_unresolved = r->unresolved;
	ret = 0;
out:
	free(on);
	free(g);
	return ret;
}
