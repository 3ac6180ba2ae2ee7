// SPDX-License-Identifier: MIT
/*
 * Merging profiles by function name (model.h): two runs, a process tree,
 * a session's records of one name.  Ids are renumbered in the destination;
 * identical stacks (frames, thread, program, state) add up; an id a stack
 * names but no function does is named "[id N]" and kept.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * What besides the frames keeps two stacks apart: thread, state, cut, and
 * program (prog: a hash of its command, 0: not known), which an exec
 * changes under the same tid.  Runs of one program merged add up.
 */
static uint64_t tag_of(uint32_t tid, uint32_t prog, bool truncated,
		       uint8_t state)
{
	return (uint64_t)tid << 32 | (uint64_t)(prog & 0xffffff) << 8 |
	       (unsigned)truncated | (unsigned)state << 1;
}

/* The program key of p's process row proc (from 1); 0: none. */
static uint32_t prog_key(const struct meter_profile *p, uint32_t proc)
{
	const char *c;

	if (!proc || proc > p->nprocs)
		return 0;
	c = p->procs[proc - 1].command;
	return c ? (uint32_t)hash_str(c) | 1 : 1;
}

static uint64_t stack_tag(const struct meter_profile *p,
			  const struct meter_stack *s)
{
	return tag_of(s->tid, prog_key(p, s->proc), s->truncated, s->state);
}

static uint64_t hash_stack(const uint32_t *frames, uint32_t depth,
			   uint64_t tag)
{
	uint64_t h = 1469598103934665603ULL ^ (tag * 0x9e3779b97f4a7c15ULL);
	uint32_t i;

	for (i = 0; i < depth; i++) {
		h ^= frames[i];
		h *= 1099511628211ULL;
	}
	h ^= depth;
	return h * 1099511628211ULL;
}

/* Open-addressing table of indices (SIZE_MAX: empty). */
struct index_table {
	size_t *slot;
	size_t mask;
	size_t used;
};

static int table_init(struct index_table *t, size_t expect)
{
	size_t n = 64, i;

	while (n < expect * 2 + 2)
		n *= 2;
	t->slot = malloc(n * sizeof(*t->slot));
	if (!t->slot)
		return -1;
	for (i = 0; i < n; i++)
		t->slot[i] = (size_t)-1;
	t->mask = n - 1;
	t->used = 0;
	return 0;
}

static bool stack_equal(const struct meter_profile *p,
			const struct meter_stack *s, const uint32_t *frames,
			uint32_t depth, uint64_t tag)
{
	return s->depth == depth && stack_tag(p, s) == tag &&
	       (!depth || !memcmp(s->frames, frames, depth * sizeof(*frames)));
}

/* The index of dst's function named name, or SIZE_MAX. */
static size_t func_lookup(const struct index_table *t,
			  const struct meter_profile *dst, const char *name)
{
	size_t h = (size_t)hash_str(name) & t->mask;

	while (t->slot[h] != (size_t)-1) {
		if (!strcmp(dst->funcs[t->slot[h]].name, name))
			return t->slot[h];
		h = (h + 1) & t->mask;
	}
	return (size_t)-1;
}

static void func_insert(struct index_table *t,
			const struct meter_profile *dst, size_t idx)
{
	size_t h = (size_t)hash_str(dst->funcs[idx].name) & t->mask;

	while (t->slot[h] != (size_t)-1)
		h = (h + 1) & t->mask;
	t->slot[h] = idx;
	t->used++;
}

static size_t stack_lookup(const struct index_table *t,
			   const struct meter_profile *dst,
			   const uint32_t *frames, uint32_t depth,
			   uint64_t tag)
{
	size_t h = (size_t)hash_stack(frames, depth, tag) & t->mask;

	while (t->slot[h] != (size_t)-1) {
		if (stack_equal(dst, &dst->stacks[t->slot[h]], frames, depth,
				tag))
			return t->slot[h];
		h = (h + 1) & t->mask;
	}
	return (size_t)-1;
}

static void stack_insert(struct index_table *t,
			 const struct meter_profile *dst, size_t idx)
{
	const struct meter_stack *s = &dst->stacks[idx];
	size_t h = (size_t)hash_stack(s->frames, s->depth,
				      stack_tag(dst, s)) & t->mask;

	while (t->slot[h] != (size_t)-1)
		h = (h + 1) & t->mask;
	t->slot[h] = idx;
	t->used++;
}

/* A profile that was only created: merging into it copies src's fields. */
static bool profile_is_blank(const struct meter_profile *p)
{
	return !p->command && !p->backend[0] && !p->nfuncs && !p->nstacks &&
	       !p->nthreads && !p->nprocs && !p->samples && !p->pid &&
	       !p->cookie;
}

static uint32_t next_free_id(const struct meter_profile *p)
{
	uint32_t max = 0;
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].id > max)
			max = p->funcs[i].id;
	return max + 1;
}

static int merge_header(struct meter_profile *dst,
			const struct meter_profile *src)
{
	if (profile_is_blank(dst)) {
		if (src->command && !(dst->command = strdup(src->command)))
			return -1;
		memcpy(dst->backend, src->backend, sizeof(dst->backend));
		dst->backend[sizeof(dst->backend) - 1] = '\0';
		dst->pid = src->pid;
		dst->uid = src->uid;
		dst->cookie = src->cookie;
		dst->parent_cookie = src->parent_cookie;
		dst->exited = src->exited;
		dst->runs = src->runs;
		dst->period_ns = src->period_ns;
		dst->start_ns = src->start_ns;
		dst->end_ns = src->end_ns;
		dst->call_cost_ps = src->call_cost_ps;
		dst->flat_call_cost_ps = src->flat_call_cost_ps;
		dst->wall = src->wall;
		return 0;
	}
	if (dst->wall != src->wall) {
		/* periods of CPU time and of wall time do not add up */
		errno = EINVAL;
		return -1;
	}
	if (!dst->command && src->command &&
	    !(dst->command = strdup(src->command)))
		return -1;
	if (!dst->backend[0]) {
		memcpy(dst->backend, src->backend, sizeof(dst->backend));
		dst->backend[sizeof(dst->backend) - 1] = '\0';
	} else if (src->backend[0] &&
		   strncmp(dst->backend, src->backend, sizeof(dst->backend))) {
		strcpy(dst->backend, "mixed");
	}
	dst->exited = dst->exited && src->exited;
	dst->runs += src->runs;
	if (!dst->period_ns)
		dst->period_ns = src->period_ns;
	if (src->start_ns && (!dst->start_ns || src->start_ns < dst->start_ns))
		dst->start_ns = src->start_ns;
	if (!src->end_ns || !dst->end_ns)
		dst->end_ns = 0;	/* one of them still live */
	else if (src->end_ns > dst->end_ns)
		dst->end_ns = src->end_ns;
	if (!dst->call_cost_ps)
		dst->call_cost_ps = src->call_cost_ps;
	if (!dst->flat_call_cost_ps)
		dst->flat_call_cost_ps = src->flat_call_cost_ps;
	return 0;
}

/* The name of an id that no function record names. */
static void unnamed_name(char *buf, size_t len, uint32_t id)
{
	snprintf(buf, len, "[id %" PRIu32 "]", id);
}

/* dst's id for src's unnamed id: a function "[id N]", added once. */
static uint32_t unnamed_id(struct meter_profile *dst,
			   struct index_table *names, uint32_t src_id,
			   uint32_t *next_id)
{
	char name[32];
	size_t idx;

	unnamed_name(name, sizeof(name), src_id);
	idx = func_lookup(names, dst, name);
	if (idx != (size_t)-1)
		return dst->funcs[idx].id;
	if (names->used * 2 + 2 > names->mask) {
		/* Rebuild larger: unnamed ids were not counted. */
		size_t i;

		free(names->slot);
		if (table_init(names, dst->nfuncs + 64))
			return 0;
		for (i = 0; i < dst->nfuncs; i++)
			if (func_lookup(names, dst, dst->funcs[i].name) ==
			    (size_t)-1)
				func_insert(names, dst, i);
	}
	if (!meter_profile_add_func(dst, (*next_id)++, name))
		return 0;
	func_insert(names, dst, dst->nfuncs - 1);
	return dst->funcs[dst->nfuncs - 1].id;
}

size_t meter_profile_name_unknown_ids(struct meter_profile *p)
{
	size_t first = p->nfuncs, i, k, j, added = 0;

	for (i = 0; i < p->nstacks; i++) {
		for (k = 0; k < p->stacks[i].depth; k++) {
			uint32_t id = p->stacks[i].frames[k];
			char name[32];

			if (!id || meter_profile_find(p, id))
				continue;
			unnamed_name(name, sizeof(name), id);
			if (meter_profile_add_func(p, id, name))
				added++;
		}
	}
	/* Their samples, from the stacks (the kernel had no record). */
	for (i = 0; added && i < p->nstacks; i++) {
		const struct meter_stack *st = &p->stacks[i];

		for (j = first; j < p->nfuncs; j++) {
			struct meter_func *f = &p->funcs[j];
			bool on = false;

			for (k = 0; k < st->depth; k++)
				if (st->frames[k] == f->id)
					on = true;
			if (on)
				f->total_samples += st->samples;
			if (st->depth && st->frames[st->depth - 1] == f->id)
				f->self_samples += st->samples;
		}
	}
	return added;
}

/* src's process rows, or one row for src when it is one process. */
static int merge_procs(struct meter_profile *dst,
		       const struct meter_profile *src)
{
	struct meter_proc_row *r;
	size_t i;

	for (i = 0; i < src->nprocs; i++) {
		const struct meter_proc_row *s = &src->procs[i];

		r = meter_profile_add_proc(dst, s->pid, s->command);
		if (!r)
			return -1;
		r->cookie = s->cookie;
		r->parent_cookie = s->parent_cookie;
		r->samples = s->samples;
		r->calls = s->calls;
	}
	if (src->nprocs)
		return 0;
	r = meter_profile_add_proc(dst, src->pid, src->command);
	if (!r)
		return -1;
	r->cookie = src->cookie;
	r->parent_cookie = src->parent_cookie;
	r->samples = src->samples;
	for (i = 0; i < src->nfuncs; i++)
		r->calls += src->funcs[i].calls;
	return 0;
}

const char *meter_profile_merge_strerror(int err)
{
	return err == EINVAL ? "cannot merge a CPU-time profile with a wall-clock one" :
			       "out of memory";
}

/* src's counters added to dst's. */
static void merge_counters(struct meter_profile *dst,
			   const struct meter_profile *src)
{
	size_t k;

	dst->samples += src->samples;
	dst->ticks += src->ticks;
	dst->no_current += src->no_current;
	dst->invalid += src->invalid;
	dst->lost += src->lost;
	dst->truncated += src->truncated;
	dst->slow_entries += src->slow_entries;
	dst->stretched_ticks += src->stretched_ticks;
	dst->unsampled_ns += src->unsampled_ns;
	dst->addrs_lost += src->addrs_lost;
	for (k = 0; k < METER_OFF_KINDS; k++)
		dst->samples_off[k] += src->samples_off[k];
}

/* The index tables of dst's names and stacks, as they are. */
static int merge_tables(struct meter_profile *dst, size_t more_funcs,
			size_t more_stacks, struct index_table *names,
			struct index_table *stacks)
{
	size_t i;

	if (table_init(names, dst->nfuncs + more_funcs) ||
	    table_init(stacks, dst->nstacks + more_stacks))
		return -1;
	for (i = 0; i < dst->nfuncs; i++)
		if (func_lookup(names, dst, dst->funcs[i].name) == (size_t)-1)
			func_insert(names, dst, i);
	for (i = 0; i < dst->nstacks; i++)
		if (stack_lookup(stacks, dst, dst->stacks[i].frames,
				 dst->stacks[i].depth,
				 stack_tag(dst, &dst->stacks[i])) == (size_t)-1)
			stack_insert(stacks, dst, i);
	return 0;
}

/*
 * The cost of a call of df once sf's calls are added: the mean over both
 * sides' calls, each at its own profile's cost (a record whose bodies all
 * became leaves beside one of the same name that pushes, two processes
 * calibrated apart), kept as df's own when the two differ.
 */
static void merge_cost(const struct meter_profile *dst, struct meter_func *df,
		       const struct meter_profile *src,
		       const struct meter_func *sf)
{
	uint64_t d = meter_func_call_cost_ps(dst, df);
	uint64_t s = meter_func_call_cost_ps(src, sf);
	double n = (double)df->calls + (double)sf->calls;

	if (!df->calls && !sf->calls) {
		if (!df->cost_ps)
			df->cost_ps = sf->cost_ps;
	} else if (d != s || sf->cost_ps) {
		df->cost_ps = (uint64_t)(((double)df->calls * (double)d +
					  (double)sf->calls * (double)s) / n +
					 0.5);
	}
}

/* src's functions into dst's by name; map[i]: src's i-th as dst's id. */
static int merge_funcs(struct meter_profile *dst,
		       const struct meter_profile *src,
		       struct index_table *names, uint32_t *map,
		       uint32_t *next_id)
{
	size_t i, k;

	for (i = 0; i < src->nfuncs; i++) {
		const struct meter_func *sf = &src->funcs[i];
		struct meter_func *df;
		size_t idx = func_lookup(names, dst, sf->name);

		if (idx == (size_t)-1) {
			df = meter_profile_add_func(dst, (*next_id)++,
						    sf->name);
			if (!df)
				return -1;
			idx = dst->nfuncs - 1;
			func_insert(names, dst, idx);
		}
		df = &dst->funcs[idx];
		if (meter_func_set_source(df, sf->file, sf->line))
			return -1;
		merge_cost(dst, df, src, sf);
		df->calls += sf->calls;
		df->self_samples += sf->self_samples;
		df->total_samples += sf->total_samples;
		df->alloc_calls += sf->alloc_calls;
		df->alloc_bytes += sf->alloc_bytes;
		for (k = 0; k < METER_OFF_KINDS; k++)
			df->self_off[k] += sf->self_off[k];
		df->flat = df->flat || sf->flat;
		if (sf->refused && !df->refused) {
			df->refused = strdup(sf->refused);
			if (!df->refused)
				return -1;
		}
		map[i] = df->id;
	}
	return 0;
}

/* src's process row proc (0: none) as dst numbers it. */
static uint32_t proc_in_dst(const struct meter_profile *src, uint32_t proc,
			    size_t base)
{
	return (uint32_t)(src->nprocs ? (proc ? base + proc : 0) : base + 1);
}

/*
 * src's function id as dst numbers it (map: src's function index -> dst
 * id); an id src does not name is named in dst.  0 on ENOMEM.
 */
static uint32_t id_in_dst(struct meter_profile *dst,
			  const struct meter_profile *src,
			  struct index_table *names, const uint32_t *map,
			  uint32_t id, uint32_t *next_id)
{
	const struct meter_func *sf = meter_profile_find(src, id);

	if (sf)
		return map[sf - src->funcs];
	return unnamed_id(dst, names, id, next_id);
}

/*
 * src's addresses into dst's, their functions renamed through map and
 * their process as dst numbers it: an address means something only in
 * its own process, so none adds up with another's.
 */
static int merge_addrs(struct meter_profile *dst,
		       const struct meter_profile *src, size_t base,
		       struct index_table *names, const uint32_t *map,
		       uint32_t *next_id)
{
	size_t i;

	for (i = 0; i < src->naddrs; i++) {
		const struct meter_addr *sa = &src->addrs[i];
		uint32_t id = id_in_dst(dst, src, names, map, sa->func,
					next_id);
		struct meter_addr *da;

		if (!id)
			return -1;
		da = meter_profile_add_addr(dst, sa->ip, id, sa->samples);
		if (!da)
			return -1;
		da->proc = proc_in_dst(src, sa->proc, base);
	}
	return 0;
}

/* src's mappings into dst's, with their process as dst numbers it. */
static int merge_maps(struct meter_profile *dst,
		      const struct meter_profile *src, size_t base)
{
	size_t i;

	for (i = 0; i < src->nmaps; i++) {
		const struct meter_map_row *sm = &src->maps[i];
		struct meter_map_row *dm;

		dm = meter_profile_add_map(dst, sm->start, sm->end, sm->pgoff,
					   sm->path);
		if (!dm)
			return -1;
		dm->proc = proc_in_dst(src, sm->proc, base);
	}
	return 0;
}

/*
 * src's stacks into dst's, their frames renamed through map; identical
 * stacks (same frames, thread, program, state) add up.  base: dst's
 * process rows before src's were added.
 */
static int merge_stacks(struct meter_profile *dst,
			const struct meter_profile *src, size_t base,
			struct index_table *names, struct index_table *stacks,
			const uint32_t *map, uint32_t *next_id)
{
	uint32_t *frames = NULL;
	size_t frames_cap = 0, i, k;
	int ret = -1;

	for (i = 0; i < src->nstacks; i++) {
		const struct meter_stack *ss = &src->stacks[i];
		uint32_t proc = proc_in_dst(src, ss->proc, base);
		/* src's own program, as dst's row proc names it */
		uint32_t prog = prog_key(dst, proc);
		struct meter_stack *ds;
		size_t idx;

		if (meter_array_grow((void **)&frames, &frames_cap, ss->depth + 1,
			 sizeof(*frames)))
			goto out;
		for (k = 0; k < ss->depth; k++) {
			/* an id src does not name is named, the frame kept */
			frames[k] = id_in_dst(dst, src, names, map,
					      ss->frames[k], next_id);
			if (!frames[k])
				goto out;
		}
		idx = stack_lookup(stacks, dst, frames, ss->depth,
				   tag_of(ss->tid, prog, ss->truncated,
					  ss->state));
		if (idx != (size_t)-1) {
			dst->stacks[idx].samples += ss->samples;
			continue;
		}
		ds = meter_profile_add_stack(dst, frames, ss->depth,
					     ss->samples);
		if (!ds)
			goto out;
		ds->truncated = ss->truncated;
		ds->state = ss->state;
		ds->tid = ss->tid;
		ds->proc = proc;
		stack_insert(stacks, dst, dst->nstacks - 1);
	}
	ret = 0;
out:
	free(frames);
	return ret;
}

static int merge_threads(struct meter_profile *dst,
			 const struct meter_profile *src)
{
	size_t i;

	for (i = 0; i < src->nthreads; i++) {
		struct meter_thread_row *t;

		t = meter_profile_add_thread(dst, src->threads[i].tid,
					     src->threads[i].samples);
		if (!t)
			return -1;
		t->exited = src->threads[i].exited;
		t->folded = src->threads[i].folded;
		memcpy(t->name, src->threads[i].name, sizeof(t->name));
		t->pid = src->threads[i].pid ? src->threads[i].pid : src->pid;
	}
	return 0;
}

int meter_profile_merge(struct meter_profile *dst,
			const struct meter_profile *src)
{
	struct index_table names = { 0 }, stacks = { 0 };
	uint32_t *map = NULL;	/* src function index -> dst id */
	uint32_t next_id;
	int ret = -1;

	/* src's processes become dst's rows base + 1 ... (merge_procs) */
	size_t base = dst->nprocs;

	/* first, so that the stacks below find their process rows */
	if (merge_header(dst, src) || merge_procs(dst, src))
		return -1;
	merge_counters(dst, src);
	if (merge_tables(dst, src->nfuncs, src->nstacks, &names, &stacks))
		goto out;
	map = calloc(src->nfuncs ? src->nfuncs : 1, sizeof(*map));
	if (!map)
		goto out;
	next_id = next_free_id(dst);
	if (merge_funcs(dst, src, &names, map, &next_id) ||
	    merge_stacks(dst, src, base, &names, &stacks, map, &next_id) ||
	    merge_addrs(dst, src, base, &names, map, &next_id) ||
	    merge_maps(dst, src, base) ||
	    merge_threads(dst, src))
		goto out;
	ret = 0;
out:
	free(names.slot);
	free(stacks.slot);
	free(map);
	return ret;
}

struct meter_profile *meter_profile_by_name(const struct meter_profile *p,
					    bool *failed)
{
	struct index_table names = { 0 };
	struct meter_profile *c = NULL;
	bool unique = true;
	size_t i;

	*failed = true;
	if (table_init(&names, p->nfuncs))
		return NULL;
	for (i = 0; i < p->nfuncs && unique; i++) {
		if (func_lookup(&names, p, p->funcs[i].name) != (size_t)-1)
			unique = false;
		else
			func_insert(&names, p, i);
	}
	free(names.slot);
	*failed = false;
	if (unique)
		return NULL;
	c = meter_profile_new();
	if (!c || meter_profile_merge(c, p)) {
		meter_profile_free(c);
		*failed = true;
		return NULL;
	}
	return c;
}
