// SPDX-License-Identifier: MIT
/*
 * The userspace profile model (common/profile.h, analysis/model.h):
 * construction, look-up, totals from stacks and the sums' check (merging
 * by function name: merge.c).
 *
 * Functions are kept in the order they were added.  Look-up by id tries
 * the dense case first (ids 1..n in order, what libmeter and the kernel
 * produce), then a binary search (ids ascending), then, only if some id
 * was added out of order (funcs_unordered), a linear scan, so that it is
 * right for any order and fast for the usual ones.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
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
	for (i = 0; i < p->nfuncs; i++) {
		free(p->funcs[i].name);
		free(p->funcs[i].file);
		free(p->funcs[i].refused);
	}
	for (i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->funcs);
	free(p->stacks);
	free(p->threads);
	for (i = 0; i < p->nprocs; i++)
		free(p->procs[i].command);
	free(p->procs);
	free(p->addrs);
	for (i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	free(p->maps);
	free(p->command);
	free(p);
}

int meter_array_grow(void **arr, size_t *cap, size_t need, size_t sz)
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

typedef char *(*demangler)(const char *mangled, char *out, size_t *len,
			   int *status);

/*
 * libstdc++'s demangler, loaded at the first mangled name: a profile of C
 * has none, and the tools do not pay for loading and relocating
 * libstdc++ at every start.  NULL without libstdc++ (names stay mangled).
 */
static demangler cxa_demangle_fn;

static void cxa_demangle_load(void)
{
	void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (lib)
		cxa_demangle_fn = (demangler)dlsym(lib, "__cxa_demangle");
}

static demangler cxa_demangle(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, cxa_demangle_load);
	return cxa_demangle_fn;
}

/*
 * libmeter demangles a C++ name with the program's own libstdc++; a
 * program that has none loaded (C++ that uses only header templates)
 * sends its names mangled, and they are demangled here.
 */
char *meter_name_demangled(const char *name)
{
	demangler fn;
	int status = -1;
	char *out;

	if (strncmp(name, "_Z", 2) || !(fn = cxa_demangle()))
		return strdup(name);
	out = fn(name, NULL, NULL, &status);
	if (status || !out) {
		free(out);
		return strdup(name);
	}
	return out;
}

int meter_func_set_source(struct meter_func *f, const char *file,
			  uint32_t line)
{
	if (!f->line)
		f->line = line;
	if (f->file || !file)
		return 0;
	f->file = strdup(file);
	return f->file ? 0 : -1;
}

struct meter_func *meter_profile_add_func(struct meter_profile *p,
					  uint32_t id, const char *name)
{
	struct meter_func *f;
	char *copy;

	copy = meter_name_demangled(name ? name : "");
	if (!copy)
		return NULL;
	if (meter_array_grow((void **)&p->funcs, &p->funcs_cap, p->nfuncs + 1,
		 sizeof(*p->funcs))) {
		free(copy);
		return NULL;
	}
	if (p->nfuncs && id <= p->funcs[p->nfuncs - 1].id)
		p->funcs_unordered = true;
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
	if (meter_array_grow((void **)&p->stacks, &p->stacks_cap, p->nstacks + 1,
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

struct meter_addr *meter_profile_add_addr(struct meter_profile *p,
					  uint64_t ip, uint32_t func,
					  uint64_t samples)
{
	struct meter_addr *a;

	if (meter_array_grow((void **)&p->addrs, &p->addrs_cap,
			     p->naddrs + 1, sizeof(*p->addrs)))
		return NULL;
	a = &p->addrs[p->naddrs++];
	memset(a, 0, sizeof(*a));
	a->ip = ip;
	a->func = func;
	a->samples = samples;
	return a;
}

struct meter_map_row *meter_profile_add_map(struct meter_profile *p,
					   uint64_t start, uint64_t end,
					   uint64_t pgoff, const char *path)
{
	struct meter_map_row *m;
	char *copy = strdup(path);

	if (!copy || meter_array_grow((void **)&p->maps, &p->maps_cap,
				      p->nmaps + 1, sizeof(*p->maps))) {
		free(copy);
		return NULL;
	}
	m = &p->maps[p->nmaps++];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->path = copy;
	return m;
}

struct meter_thread_row *meter_profile_add_thread(struct meter_profile *p,
					      uint32_t tid, uint64_t samples)
{
	struct meter_thread_row *t;

	if (meter_array_grow((void **)&p->threads, &p->threads_cap, p->nthreads + 1,
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
	    meter_array_grow((void **)&p->procs, &p->procs_cap, p->nprocs + 1,
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

uint64_t meter_func_call_cost_ps(const struct meter_profile *p,
				 const struct meter_func *f)
{
	if (f->cost_ps)
		return f->cost_ps;
	if (f->flat && p->flat_call_cost_ps)
		return p->flat_call_cost_ps;
	return p->call_cost_ps;
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
	/*
	 * Any order.  An ascending table ends here: a reader's check that
	 * each new id is not there yet would make reading n rows n^2 / 2
	 * comparisons (1.9 million instructions of meter-run's 19 for a
	 * profile of 772 functions).
	 */
	if (!p->funcs_unordered)
		return NULL;
	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].id == id)
			return &p->funcs[i];
	return NULL;
}

void meter_profile_drop_empty_stacks(struct meter_profile *p)
{
	size_t i, kept = 0;

	for (i = 0; i < p->nstacks; i++) {
		if (p->stacks[i].samples)
			p->stacks[kept++] = p->stacks[i];
		else
			free(p->stacks[i].frames);
	}
	p->nstacks = kept;
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

/* a + b, or UINT64_MAX when it would not fit */
static uint64_t sum_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int meter_profile_check_sums(const struct meter_profile *p, char *err,
			     size_t errlen)
{
	uint64_t stacks = 0, self = 0, addrs = 0;
	size_t i;

	for (i = 0; i < p->nstacks; i++)
		stacks = sum_sat(stacks, p->stacks[i].samples);
	for (i = 0; i < p->naddrs; i++)
		addrs = sum_sat(addrs, p->addrs[i].samples);
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
	if (addrs > p->samples) {
		snprintf(err, errlen, "the addresses hold %" PRIu64 " samples, "
			 "more than the profile's %" PRIu64, addrs, p->samples);
		return -1;
	}
	return 0;
}
