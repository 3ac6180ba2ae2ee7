// SPDX-License-Identifier: MIT
/*
 * Folded stacks, one line per sampled stack: "root;...;leaf COUNT", the
 * input of flamegraph.pl and speedscope.  Names are made safe for the
 * format: spaces, semicolons and control characters become '_'.  In a
 * wall-clock profile a stack sampled off the CPU ends in one more frame,
 * "[runq]" (runnable, waiting for a CPU) or "[blocked]", so that one file
 * draws on-CPU and off-CPU time side by side, the wait above its waiter.
 */
#include <inttypes.h>

#include "analysis.h"

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

int render_folded(const struct analysis *an, const struct render_opts *o,
		  FILE *out)
{
	const struct meter_profile *p = an->p;
	size_t i, k;

	(void)o;
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		if (!s->samples)
			continue;
		if (!s->depth)
			fputs("[unknown]", out);
		/* The kernel keeps the leaf-most frames: the root is not real. */
		else if (s->truncated)
			fputs("[truncated];", out);
		for (k = 0; k < s->depth; k++) {
			const struct meter_func *f =
				meter_profile_find(p, s->frames[k]);

			if (k)
				fputc(';', out);
			put_name(out, f ? f->name : NULL);
		}
		if (s->state != METER_STATE_ONCPU)
			fputs(s->state == 1 + METER_OFF_RUNQ ? ";[runq]" :
			      ";[blocked]", out);
		fprintf(out, " %" PRIu64 "\n", s->samples);
	}
	return ferror(out) ? -1 : 0;
}
