// SPDX-License-Identifier: MIT
/* Process trees and programs (tree.h). */
#include <stdlib.h>
#include <string.h>

#include "tree.h"

size_t meter_tree_mark(struct meter_profile *const *list, size_t n, bool *in,
		       const uint64_t *links, size_t nlinks)
{
	bool more = true;
	size_t i, k, m = 0;

	for (i = 0; i < n; i++)
		for (k = 0; k < nlinks && list[i]->parent_cookie; k++)
			if (list[i]->parent_cookie == links[k])
				in[i] = true;
	/* a parent's session is listed before or after its child's */
	while (more) {
		more = false;
		for (i = 0; i < n; i++) {
			if (in[i] || !list[i]->parent_cookie)
				continue;
			for (k = 0; k < n; k++) {
				if (in[k] &&
				    list[k]->cookie == list[i]->parent_cookie) {
					in[i] = more = true;
					break;
				}
			}
		}
	}
	for (i = 0; i < n; i++)
		m += in[i];
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
