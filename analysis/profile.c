// SPDX-License-Identifier: MIT
/*
 * The userspace profile model (common/profile.h, analysis/model.h): construction, look-up,
 * totals from stacks, and merging by function name.
 *
 * Functions are kept in the order they were added.  Look-up by id tries
 * the dense case first (ids 1..n in order, what libmeter and the kernel
 * produce), then a binary search (ids ascending), then a linear scan, so
 * that it is right for any order and fast for the usual ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct meter_profile *meter_profile_new(void)
{
	struct meter_profile *p = calloc(1, sizeof(*p));

	if (p)
		p->runs = 1;
	return p;
}

void meter_profile_free(struct meter_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nfuncs; i++)
		free(p->funcs[i].name);
	for (i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->funcs);
	free(p->stacks);
	free(p->threads);
	for (i = 0; i < p->nprocs; i++)
		free(p->procs[i].command);
	free(p->procs);
	free(p->command);
	free(p);
}

/* Grows *arr (elements of size sz) so that it holds at least need. */
static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > ((size_t)-1) / 2 / sz) {
			errno = ENOMEM;
			return -1;
		}
		ncap *= 2;
	}
	n = realloc(*arr, ncap * sz);
	if (!n)
		return -1;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* libstdc++'s demangler (the tools link it) */
char *__cxa_demangle(const char *mangled, char *out, size_t *len,
		     int *status);

/*
 * libmeter demangles a C++ name with the program's own libstdc++; a
 * program that has none loaded (C++ that uses only header templates)
 * sends its names mangled, and they are demangled here.
 */
static char *name_copy(const char *name)
{
	int status = -1;
	char *out;

	if (strncmp(name, "_Z", 2))
		return strdup(name);
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status || !out) {
		free(out);
		return strdup(name);
	}
	return out;
}

struct meter_func *meter_profile_add_func(struct meter_profile *p,
					  uint32_t id, const char *name)
{
	struct meter_func *f;
	char *copy;

	copy = name_copy(name ? name : "");
	if (!copy)
		return NULL;
	if (grow((void **)&p->funcs, &p->funcs_cap, p->nfuncs + 1,
		 sizeof(*p->funcs))) {
		free(copy);
		return NULL;
	}
	f = &p->funcs[p->nfuncs++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->name = copy;
	return f;
}

struct meter_stack *meter_profile_add_stack(struct meter_profile *p,
					    const uint32_t *frames,
					    uint32_t depth, uint64_t samples)
{
	struct meter_stack *s;
	uint32_t *copy;

	copy = malloc((depth ? depth : 1) * sizeof(*copy));
	if (!copy)
		return NULL;
	if (depth)
		memcpy(copy, frames, depth * sizeof(*copy));
	if (grow((void **)&p->stacks, &p->stacks_cap, p->nstacks + 1,
		 sizeof(*p->stacks))) {
		free(copy);
		return NULL;
	}
	s = &p->stacks[p->nstacks++];
	memset(s, 0, sizeof(*s));
	s->depth = depth;
	s->frames = copy;
	s->samples = samples;
	return s;
}

struct meter_thread_row *meter_profile_add_thread(struct meter_profile *p,
					      uint32_t tid, uint64_t samples)
{
	struct meter_thread_row *t;

	if (grow((void **)&p->threads, &p->threads_cap, p->nthreads + 1,
		 sizeof(*p->threads)))
		return NULL;
	t = &p->threads[p->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->samples = samples;
	return t;
}

struct meter_proc_row *meter_profile_add_proc(struct meter_profile *p,
					      int32_t pid, const char *command)
{
	struct meter_proc_row *r;
	char *copy = command ? strdup(command) : NULL;

	if ((command && !copy) ||
	    grow((void **)&p->procs, &p->procs_cap, p->nprocs + 1,
		 sizeof(*p->procs))) {
		free(copy);
		return NULL;
	}
	r = &p->procs[p->nprocs++];
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->command = copy;
	return r;
}

struct meter_func *meter_profile_find(const struct meter_profile *p,
				      uint32_t id)
{
	size_t lo, hi, i;

	if (!p || !p->nfuncs)
		return NULL;
	/* Dense ids, the common case. */
	if (id >= 1 && id <= p->nfuncs && p->funcs[id - 1].id == id)
		return &p->funcs[id - 1];
	/* Ascending ids. */
	lo = 0;
	hi = p->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->funcs[mid].id == id)
			return &p->funcs[mid];
		if (p->funcs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Any order. */
	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].id == id)
			return &p->funcs[i];
	return NULL;
}

void meter_profile_compute_totals(struct meter_profile *p)
{
	size_t *seen;		/* per function index: last stack + 1 */
	size_t i, k;

	for (i = 0; i < p->nfuncs; i++)
		p->funcs[i].total_samples = 0;
	seen = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*seen));
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		for (k = 0; k < s->depth; k++) {
			struct meter_func *f = meter_profile_find(p,
								  s->frames[k]);
			size_t idx;

			if (!f)
				continue;
			idx = (size_t)(f - p->funcs);
			if (seen) {
				if (seen[idx] == i + 1)
					continue;
				seen[idx] = i + 1;
			} else {
				/* Out of memory: a quadratic check instead. */
				size_t j;
				bool dup = false;

				for (j = 0; j < k; j++)
					if (s->frames[j] == s->frames[k])
						dup = true;
				if (dup)
					continue;
			}
			f->total_samples += s->samples;
		}
	}
	free(seen);
}

/* --- merging --- */

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

int meter_profile_merge(struct meter_profile *dst,
			const struct meter_profile *src)
{
	struct index_table names = { 0 }, stacks = { 0 };
	uint32_t *map = NULL;	/* src function index -> dst id */
	uint32_t *frames = NULL;
	size_t frames_cap = 0;
	uint32_t next_id;
	size_t i, k;
	int ret = -1;

	/* src's processes become dst's rows base + 1 ... (merge_procs) */
	size_t base = dst->nprocs;

	/* first, so that the stacks below find their process rows */
	if (merge_header(dst, src) || merge_procs(dst, src))
		return -1;
	dst->samples += src->samples;
	dst->ticks += src->ticks;
	dst->no_current += src->no_current;
	dst->invalid += src->invalid;
	dst->lost += src->lost;
	dst->truncated += src->truncated;
	dst->slow_entries += src->slow_entries;
	dst->unsampled_ns += src->unsampled_ns;
	for (k = 0; k < METER_OFF_KINDS; k++)
		dst->samples_off[k] += src->samples_off[k];

	if (table_init(&names, dst->nfuncs + src->nfuncs) ||
	    table_init(&stacks, dst->nstacks + src->nstacks))
		goto out;
	map = calloc(src->nfuncs ? src->nfuncs : 1, sizeof(*map));
	if (!map)
		goto out;
	for (i = 0; i < dst->nfuncs; i++)
		if (func_lookup(&names, dst, dst->funcs[i].name) ==
		    (size_t)-1)
			func_insert(&names, dst, i);
	for (i = 0; i < dst->nstacks; i++)
		if (stack_lookup(&stacks, dst, dst->stacks[i].frames,
				 dst->stacks[i].depth,
				 stack_tag(dst, &dst->stacks[i])) == (size_t)-1)
			stack_insert(&stacks, dst, i);

	next_id = next_free_id(dst);
	for (i = 0; i < src->nfuncs; i++) {
		const struct meter_func *sf = &src->funcs[i];
		struct meter_func *df;
		size_t idx = func_lookup(&names, dst, sf->name);

		if (idx == (size_t)-1) {
			df = meter_profile_add_func(dst, next_id++, sf->name);
			if (!df)
				goto out;
			idx = dst->nfuncs - 1;
			func_insert(&names, dst, idx);
		}
		df = &dst->funcs[idx];
		df->calls += sf->calls;
		df->self_samples += sf->self_samples;
		df->total_samples += sf->total_samples;
		df->alloc_calls += sf->alloc_calls;
		df->alloc_bytes += sf->alloc_bytes;
		for (k = 0; k < METER_OFF_KINDS; k++)
			df->self_off[k] += sf->self_off[k];
		df->flat = df->flat || sf->flat;
		map[i] = df->id;
	}

	for (i = 0; i < src->nstacks; i++) {
		const struct meter_stack *ss = &src->stacks[i];
		uint32_t proc = (uint32_t)(src->nprocs ?
			(ss->proc ? base + ss->proc : 0) : base + 1);
		/* src's own program, as dst's row proc names it */
		uint32_t prog = prog_key(dst, proc);
		struct meter_stack *ds;
		size_t idx;

		if (grow((void **)&frames, &frames_cap, ss->depth + 1,
			 sizeof(*frames)))
			goto out;
		for (k = 0; k < ss->depth; k++) {
			const struct meter_func *sf =
				meter_profile_find(src, ss->frames[k]);

			if (sf) {
				frames[k] = map[sf - src->funcs];
				continue;
			}
			/* An id src does not name: name it, keep the frame. */
			frames[k] = unnamed_id(dst, &names, ss->frames[k],
					       &next_id);
			if (!frames[k])
				goto out;
		}
		idx = stack_lookup(&stacks, dst, frames, ss->depth,
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
		stack_insert(&stacks, dst, dst->nstacks - 1);
	}

	for (i = 0; i < src->nthreads; i++) {
		struct meter_thread_row *t;

		t = meter_profile_add_thread(dst, src->threads[i].tid,
					     src->threads[i].samples);
		if (!t)
			goto out;
		t->exited = src->threads[i].exited;
		memcpy(t->name, src->threads[i].name, sizeof(t->name));
		t->pid = src->threads[i].pid ? src->threads[i].pid : src->pid;
	}
	ret = 0;
out:
	free(names.slot);
	free(stacks.slot);
	free(map);
	free(frames);
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

/* a + b, or UINT64_MAX when it would not fit */
static uint64_t sum_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int meter_profile_check_sums(const struct meter_profile *p, char *err,
			     size_t errlen)
{
	uint64_t stacks = 0, self = 0;
	size_t i;

	for (i = 0; i < p->nstacks; i++)
		stacks = sum_sat(stacks, p->stacks[i].samples);
	for (i = 0; i < p->nfuncs; i++)
		self = sum_sat(self, p->funcs[i].self_samples);
	if (stacks > p->samples) {
		snprintf(err, errlen, "the stacks hold %" PRIu64 " samples, "
			 "more than the profile's %" PRIu64, stacks,
			 p->samples);
		return -1;
	}
	if (self > p->samples) {
		snprintf(err, errlen, "the functions' self samples add up to "
			 "%" PRIu64 ", more than the profile's %" PRIu64, self,
			 p->samples);
		return -1;
	}
	return 0;
}
