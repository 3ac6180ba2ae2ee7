// SPDX-License-Identifier: MIT
/*
 * A graphviz call graph: one node per function, filled by its share of
 * self time (white to red), labelled with self and total time and calls;
 * one edge per caller/callee pair seen in the sampled stacks, labelled
 * with the exact share of all samples whose stack holds that edge.
 * Hidden nodes (--hide-self / --hide-subs) and their edges are left out.
 * In a wall-clock profile each node also says how much of its self time
 * was off the CPU (runnable, blocked); a node mostly off it is drawn
 * dashed.
 */
#include <inttypes.h>

#include "report.h"

static void put_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s < ' ')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

int render_dot(const struct analysis *an, const struct report_opts *o,
	       FILE *out)
{
	const struct meter_profile *p = an->p;
	uint64_t max_self = 1;
	size_t i;

	(void)o;
	for (i = 0; i < an->n; i++)
		if (an->nodes[i].self > max_self)
			max_self = an->nodes[i].self;
	fprintf(out, "digraph meter {\n");
	fprintf(out, "  graph [label=\"meter: ");
	put_label(out, p->command ? p->command : "???");
	fprintf(out, " - %" PRIu64 " samples, %.3f s%s", an->samples,
		an_seconds(an, (double)an->samples),
		p->wall ? " of wall-clock time" : "");
	if (p->corrected)
		fprintf(out, " (instrumentation correction: %.3f s out)",
			an_seconds(an, p->corrected_samples));
	fprintf(out, "; edges: share of all samples\", labelloc=t, "
		"fontname=\"Helvetica\"];\n");
	fprintf(out, "  node [shape=box, style=filled, "
		"fontname=\"Helvetica\"];\n");
	fprintf(out, "  edge [fontname=\"Helvetica\", fontsize=10];\n");
	for (i = 0; i < an->n; i++) {
		size_t x = an->order[i];
		const struct an_node *nd = &an->nodes[x];
		double heat = (double)nd->self / (double)max_self;
		int gb = (int)(255.0 - 190.0 * heat);

		if (nd->hidden || (!nd->total && !nd->f->calls))
			continue;
		fprintf(out, "  n%zu [label=\"", x);
		put_label(out, an_name(an, x));
		fprintf(out, "\\nself %.1f%% (%.3f s)\\ntotal %.1f%% "
			"(%.3f s)\\n%" PRIu64 " call%s%s",
			an_percent(an, (double)nd->self),
			an_seconds(an, (double)nd->self),
			an_percent(an, (double)nd->total),
			an_seconds(an, (double)nd->total), nd->f->calls,
			nd->f->calls == 1 ? "" : "s",
			nd->recursive ? "\\nrecursive" : "");
		if (p->wall)
			fprintf(out, "\\nself off-cpu: runq %.3f s, blocked "
				"%.3f s", an_seconds(an, (double)
				nd->f->self_off[METER_OFF_RUNQ]),
				an_seconds(an, (double)
				nd->f->self_off[METER_OFF_BLOCKED]));
		fprintf(out, "\", fillcolor=\"#ff%02x%02x\"%s];\n", gb, gb,
			p->wall && nd->self && 2 * nd->self_off > nd->self ?
			", style=\"filled,dashed\"" : "");
	}
	for (i = 0; i < an->nedges; i++) {
		const struct an_edge *e = &an->edges[i];
		double pct = an_percent(an, (double)e->samples);

		if (e->caller == NODE_ROOT || an->nodes[e->caller].hidden ||
		    an->nodes[e->callee].hidden)
			continue;
		fprintf(out, "  n%zu -> n%zu [label=\"%.1f%%\", "
			"penwidth=%.2f];\n", e->caller, e->callee, pct,
			1.0 + 4.0 * pct / 100.0);
	}
	fprintf(out, "}\n");
	return ferror(out) ? -1 : 0;
}
