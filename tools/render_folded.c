// SPDX-License-Identifier: MIT
/*
 * Folded stacks, one line per sampled stack: "root;...;leaf COUNT", the
 * input of flamegraph.pl and speedscope.  Names are made safe for the
 * format: spaces, semicolons and control characters become '_'.  In a
 * wall-clock profile a stack sampled off the CPU ends in one more frame,
 * "[runq]" (runnable, waiting for a CPU) or "[blocked]", so that one file
 * draws on-CPU and off-CPU time side by side, the wait above its waiter.
 * The profile keeps a stack once per thread; the format has no threads,
 * so a stack's threads are summed into one line (in the order of the
 * stack's first appearance), as flamegraph.pl would sum them anyway.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void put_name(FILE *out, const char *s)
{
	if (!s || !*s) {
		fputs("???", out);
		return;
	}
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		fputc(c <= ' ' || c == ';' || c == 0x7f ? '_' : c, out);
	}
}

/* The order that puts a stack's threads side by side, first seen first. */
static const struct meter_stack *sort_base;

static int same_path(const struct meter_stack *a, const struct meter_stack *b)
{
	return a->depth == b->depth && a->state == b->state &&
	       a->truncated == b->truncated &&
	       (!a->depth ||
		!memcmp(a->frames, b->frames, a->depth * sizeof(*a->frames)));
}

static int cmp_path(const void *pa, const void *pb)
{
	const struct meter_stack *a = &sort_base[*(const size_t *)pa];
	const struct meter_stack *b = &sort_base[*(const size_t *)pb];
	int c;

	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->state != b->state)
		return a->state < b->state ? -1 : 1;
	if (a->truncated != b->truncated)
		return a->truncated < b->truncated ? -1 : 1;
	c = a->depth ? memcmp(a->frames, b->frames,
			      a->depth * sizeof(*a->frames)) : 0;
	if (c)
		return c;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static void put_stack(const struct meter_profile *p,
		      const struct meter_stack *s, uint64_t samples, FILE *out)
{
	size_t k;

	if (!s->depth)
		fputs("[unknown]", out);
	/* The kernel keeps the leaf-most frames: the root is not real. */
	else if (s->truncated)
		fputs("[truncated];", out);
	for (k = 0; k < s->depth; k++) {
		const struct meter_func *f = meter_profile_find(p, s->frames[k]);

		if (k)
			fputc(';', out);
		put_name(out, f ? f->name : NULL);
	}
	if (s->state != METER_STATE_ONCPU)
		fputs(s->state == 1 + METER_OFF_RUNQ ? ";[runq]" : ";[blocked]",
		      out);
	fprintf(out, " %" PRIu64 "\n", samples);
}

int render_folded(const struct analysis *an, const struct report_opts *o,
		  FILE *out)
{
	const struct meter_profile *p = an->p;
	uint64_t *sum = NULL;
	size_t *order = NULL, i, j;
	int ret = -1;

	(void)o;
	order = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*order));
	sum = calloc(p->nstacks ? p->nstacks : 1, sizeof(*sum));
	if (!order || !sum)
		goto out;
	for (i = 0; i < p->nstacks; i++)
		order[i] = i;
	sort_base = p->stacks;
	qsort(order, p->nstacks, sizeof(*order), cmp_path);
	/* Each run of one path sums into its first stack. */
	for (i = 0; i < p->nstacks; i = j) {
		for (j = i; j < p->nstacks &&
		     same_path(&p->stacks[order[i]], &p->stacks[order[j]]); j++)
			sum[order[i]] += p->stacks[order[j]].samples;
	}
	for (i = 0; i < p->nstacks; i++)
		if (sum[i])
			put_stack(p, &p->stacks[i], sum[i], out);
	ret = ferror(out) ? -1 : 0;
out:
	free(order);
	free(sum);
	return ret;
}
