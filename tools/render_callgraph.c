// SPDX-License-Identifier: MIT
/*
 * The call graph, in the manner of gprof and Racket's text renderer: one
 * entry per function, labelled [N], with its total and self time; its
 * callers above and its callees below, each with the share of the
 * function's total time spent on that edge.  The shares come from the
 * sampled stacks (analysis.c), so a caller that makes the expensive calls
 * is charged for them, which gprof's apportioning by call counts cannot do.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"
#include "render_common.h"

static void print_ref(const struct analysis *an, FILE *out,
		      const struct an_line *l, double of_total)
{
	size_t node = l->node;
	double time = l->time;
	char ref[512];

	if (node == NODE_ROOT)
		snprintf(ref, sizeof(ref), "%s", an_name(an, node));
	else
		snprintf(ref, sizeof(ref), "%s [%u]", an_name(an, node),
			 an->nodes[node].label);
	fprintf(out, "%53s", "");
	put_padded(out, ref, 28);
	fprintf(out, " %6.1f%% %8.3f s", of_total > 0 ? 100.0 * time / of_total : 0.0,
		an_seconds(an, time));
	if (an->p->wall)
		fprintf(out, "  %5.1f%% off-cpu",
			time > 0 ? 100.0 * l->off / time : 0.0);
	fputc('\n', out);
}

static int print_lines(const struct analysis *an, FILE *out, size_t node,
		       bool callers, double of_total)
{
	struct an_line *l;
	size_t i, n;

	if (an_node_lines(an, node, callers, &l, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (l[i].node == NODE_ROOT || !an->nodes[l[i].node].hidden)
			print_ref(an, out, &l[i], of_total);
	free(l);
	return 0;
}

int render_callgraph(const struct analysis *an, const struct report_opts *o,
		     FILE *out)
{
	const char *rule = " -----------------------------------------------"
			   "-----------------------------------------------"
			   "-----\n";
	size_t i, shown = 0;

	(void)o;
	if (!an->stack_samples) {
		fprintf(out, "Call graph: no sampled stacks in this profile%s.\n",
			an->samples ? "" : " (no samples)");
		return ferror(out) ? -1 : 0;
	}
	/* alone, it has no header to say it (text has the flat one's) */
	if (o->format == FMT_CALLGRAPH)
		profile_correction_line(an->p, out, "");
	fprintf(out, "Call graph (exact: edge shares are measured from %" PRIu64
		" samples' stacks, not apportioned by call counts):\n",
		an->stack_samples);
	fprintf(out, "callers are listed above each function and callees "
		"below it, with the share\nof the function's total time "
		"spent on that edge; <recursive> marks recursion.\n\n");
	if (an->p->wall)
		fprintf(out, "Wall clock: off-cpu is the part of a total, or of "
			"an edge's time, when the\nthread was runnable but not "
			"running, or blocked.\n\n");
	fprintf(out, " %-7s %-15s %-15s %9s  %s%s\n", "index", "total (s)",
		"self (s)", "calls", an->p->wall ? "off-cpu  " : "", "name");
	fputs(rule, out);
	for (i = 0; i < an->n; i++) {
		size_t x = an->order[i];
		const struct an_node *nd = &an->nodes[x];
		char label[24], total[32], self[32], calls[24], off[24];

		if (nd->hidden)
			continue;
		if (!nd->total && !nd->nin && !nd->f->calls)
			continue;
		shown++;
		if (print_lines(an, out, x, true, (double)nd->total))
			return -1;
		snprintf(label, sizeof(label), "[%u]", nd->label);
		snprintf(total, sizeof(total), "%7.3f %5.1f%%",
			 an_seconds(an, (double)nd->total),
			 an_percent(an, (double)nd->total));
		snprintf(self, sizeof(self), "%7.3f %5.1f%%",
			 an_seconds(an, (double)nd->self),
			 an_percent(an, (double)nd->self));
		snprintf(calls, sizeof(calls), "%" PRIu64, nd->f->calls);
		off[0] = '\0';
		if (an->p->wall)
			snprintf(off, sizeof(off), "%6.1f%%  ", nd->total ?
				 100.0 * (double)nd->total_off /
				 (double)nd->total : 0.0);
		fprintf(out, " %-7s %-15s %-15s %9s  %s%s%s\n", label, total,
			self, calls, off, an_name(an, x),
			nd->recursive ? " <recursive>" : "");
		if (print_lines(an, out, x, false, (double)nd->total))
			return -1;
		fputs(rule, out);
	}
	{
		size_t hidden = 0;

		for (i = 0; i < an->n; i++)
			if (an->nodes[i].hidden)
				hidden++;
		if (hidden)
			fprintf(out, "%zu function%s hidden (--hide-self %g%%, "
				"--hide-subs %g%%).\n", hidden,
				hidden == 1 ? "" : "s", o->an.hide_self,
				o->an.hide_subs);
	}
	(void)shown;
	return ferror(out) ? -1 : 0;
}
