// SPDX-License-Identifier: MIT
/* Process trees and programs (tree.h). */
#include <stdlib.h>
#include <string.h>

#include "proctree.h"

struct cookie_key {
	uint64_t cookie;
	size_t i;
};

static int by_cookie(const void *a, const void *b)
{
	const struct cookie_key *x = a, *y = b;

	return x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
}

static int by_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

int meter_tree_parents(const struct meter_session_row *list, size_t n,
		       size_t *parent)
{
	struct cookie_key *keys = malloc((n ? n : 1) * sizeof(*keys)), *k;
	size_t i;

	if (!keys)
		return -1;
	for (i = 0; i < n; i++) {
		keys[i].cookie = list[i].cookie;
		keys[i].i = i;
	}
	qsort(keys, n, sizeof(*keys), by_cookie);
	for (i = 0; i < n; i++) {
		struct cookie_key want = { list[i].parent_cookie, 0 };

		parent[i] = n;
		if (!want.cookie)
			continue;
		k = bsearch(&want, keys, n, sizeof(*keys), by_cookie);
		if (k && k->i != i)
			parent[i] = k->i;
	}
	free(keys);
	return 0;
}

enum { MARK_UNKNOWN, MARK_IN, MARK_OUT, MARK_ON_PATH };

size_t meter_tree_mark(const struct meter_session_row *list, size_t n,
		       bool *in, const uint64_t *links, size_t nlinks)
{
	size_t *parent = malloc((n ? n : 1) * sizeof(*parent));
	size_t *path = malloc((n ? n : 1) * sizeof(*path));
	uint64_t *sorted = malloc((nlinks ? nlinks : 1) * sizeof(*sorted));
	unsigned char *mark = calloc(n ? n : 1, 1);
	size_t i, j, len, m = 0;

	if (!parent || !path || !sorted || !mark ||
	    meter_tree_parents(list, n, parent))
		goto out;
	if (nlinks)	/* links may be NULL then, which memcpy may not take */
		memcpy(sorted, links, nlinks * sizeof(*sorted));
	qsort(sorted, nlinks, sizeof(*sorted), by_u64);
	for (i = 0; i < n; i++)
		if (in[i])
			mark[i] = MARK_IN;
	/*
	 * Each session's chain of parents is walked up to the first whose
	 * answer is known, a link, or none; the answer is given to the whole
	 * path, so every session is walked once.  A cycle of cookies (bad
	 * input) is not in the tree.
	 */
	for (i = 0; i < n; i++) {
		unsigned char answer = MARK_OUT;

		for (j = i, len = 0; mark[j] == MARK_UNKNOWN;) {
			uint64_t pc = list[j].parent_cookie;

			mark[j] = MARK_ON_PATH;
			path[len++] = j;
			if (pc && bsearch(&pc, sorted, nlinks, sizeof(*sorted),
					  by_u64)) {
				answer = MARK_IN;
				break;
			}
			if (parent[j] == n)
				break;
			j = parent[j];
		}
		if (mark[j] == MARK_IN)
			answer = MARK_IN;
		while (len)
			mark[path[--len]] = answer;
	}
	for (i = 0; i < n; i++) {
		in[i] = mark[i] == MARK_IN;
		m += in[i];
	}
out:
	free(parent);
	free(path);
	free(sorted);
	free(mark);
	return m;
}

static int by_samples(const void *a, const void *b)
{
	const struct meter_program *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->command, y->command);
}

size_t meter_programs(const struct meter_profile *p,
		      struct meter_program **out)
{
	struct meter_program *g;
	size_t i, k, n = 0;

	*out = NULL;
	if (!p->nprocs)
		return 0;
	g = calloc(p->nprocs, sizeof(*g));
	if (!g)
		return 0;
	for (i = 0; i < p->nprocs; i++) {
		const struct meter_proc_row *r = &p->procs[i];
		const char *c = r->command && *r->command ? r->command : "?";

		for (k = 0; k < n && strcmp(g[k].command, c); k++)
			;
		if (k == n)
			g[n++].command = c;
		g[k].processes++;
		g[k].samples += r->samples;
		g[k].calls += r->calls;
	}
	qsort(g, n, sizeof(*g), by_samples);
	*out = g;
	return n;
}
