// SPDX-License-Identifier: MIT
/*
 * METERING's table (Kantrowitz, CMU-CS-91-143): per function the time,
 * its percentage, calls, seconds per call and, when allocation was
 * recorded, bytes ("cons") and bytes per call; then the totals and the
 * estimated monitoring overhead, calls x the calibrated cost of one call.
 * :exclusive (the default) charges each function its self samples,
 * :inclusive its total samples (callees included).  A wall-clock profile
 * adds the share of each function's time spent off the CPU.
 */
#include <inttypes.h>
#include <string.h>

#include "report.h"
#include "render_common.h"

/* The three layouts of the table: with allocations, wall clock, CPU. */
enum metering_layout { METERING_CPU, METERING_WALL, METERING_CONS };

/* Width of each layout's columns after the name, for the rule. */
static const int metering_cols[] = {
	[METERING_CPU] = 40, [METERING_WALL] = 49, [METERING_CONS] = 73,
};

static void metering_head(enum metering_layout l, int width, FILE *out)
{
	switch (l) {
	case METERING_CONS:
		fprintf(out, "%-*s %7s %7s %10s %10s %10s %10s %12s\n", width,
			"", "%", "%", "", "", "Cons", "Total", "Total");
		fprintf(out, "%-*s %7s %7s %10s %10s %10s %10s %12s\n", width,
			"Function", "Time", "Cons", "Calls", "Sec/Call",
			"Per Call", "Time", "Cons");
		break;
	case METERING_WALL:
		fprintf(out, "%-*s %7s %10s %10s %10s %8s\n", width, "", "%",
			"", "", "Total", "%");
		fprintf(out, "%-*s %7s %10s %10s %10s %8s\n", width,
			"Function", "Time", "Calls", "Sec/Call", "Time",
			"Off-CPU");
		break;
	case METERING_CPU:
		fprintf(out, "%-*s %7s %10s %10s %10s\n", width, "", "%", "",
			"", "Total");
		fprintf(out, "%-*s %7s %10s %10s %10s\n", width, "Function",
			"Time", "Calls", "Sec/Call", "Time");
		break;
	}
}

/* One function's row; s is its samples (self or total, as asked). */
static void metering_row(const struct analysis *an, const struct report_opts *o,
			 enum metering_layout l, size_t x, uint64_t s,
			 uint64_t all_bytes, FILE *out)
{
	const struct an_node *nd = &an->nodes[x];
	const struct meter_func *f = nd->f;
	double secs = an_seconds(an, (double)s);
	double per_call = f->calls ? secs / (double)f->calls : 0;
	double pct = an_percent(an, (double)s);
	uint64_t off;

	if (l == METERING_CONS) {
		fprintf(out, " %7.2f %7.2f %10" PRIu64 " %10.6f %10" PRIu64
			" %10.6f %12" PRIu64 "\n", pct, all_bytes ? 100.0 *
			(double)f->alloc_bytes / (double)all_bytes : 0,
			f->calls, per_call,
			f->calls ? f->alloc_bytes / f->calls : 0, secs,
			f->alloc_bytes);
		return;
	}
	fprintf(out, " %7.2f %10" PRIu64 " %10.6f %10.6f", pct, f->calls,
		per_call, secs);
	if (l == METERING_WALL) {
		off = o->an.inclusive ? nd->total_off : nd->self_off;
		fprintf(out, " %7.2f%%",
			s ? 100.0 * (double)off / (double)s : 0.0);
	}
	fputc('\n', out);
}

/* TOTAL, the monitoring overhead and the notes under the table. */
static void metering_foot(const struct analysis *an,
			  const struct report_opts *o, enum metering_layout l,
			  int width, uint64_t calls, uint64_t bytes,
			  double time, size_t hidden, FILE *out)
{
	const struct meter_profile *p = an->p;
	double ns = profile_call_cost_ns(p);

	if (l == METERING_CONS)
		fprintf(out, "%-*s %7s %7s %10" PRIu64 " %10s %10s %10.6f %12"
			PRIu64 "\n", width, "TOTAL:", "", "", calls, "", "",
			time, bytes);
	else
		fprintf(out, "%-*s %7s %10" PRIu64 " %10s %10.6f\n", width,
			"TOTAL:", "", calls, "", time);
	if (p->call_cost_ps)
		fprintf(out, "Estimated total monitoring overhead: %.6f seconds "
			"(%" PRIu64 " calls x %.3f ns)\n",
			(double)calls * ns / 1e9, calls, ns);
	else
		fprintf(out, "Estimated total monitoring overhead: unknown "
			"(the cost of a call was not calibrated)\n");
	if (hidden)
		fprintf(out, "%zu function%s not shown (below %g%% or never "
			"called).\n", hidden, hidden == 1 ? "" : "s",
			o->threshold);
	if (o->an.inclusive)
		fprintf(out, "Inclusive times overlap: a function's time "
			"includes its callees', so the column does not add "
			"up;\nTOTAL is the profile's %s time.\n",
			p->wall ? "wall-clock" : "CPU");
}

int render_metering(const struct analysis *an, const struct report_opts *o,
		    FILE *out)
{
	enum metering_layout l = an->has_alloc ? METERING_CONS :
				 an->p->wall ? METERING_WALL : METERING_CPU;
	uint64_t calls = 0, bytes = 0, all_bytes = 0;
	double time = 0;
	size_t i, hidden = 0;
	int width = 24;
	char rule[160];

	render_header(an, out);
	render_threads(an, o, out);
	for (i = 0; i < an->n; i++) {
		int w = (int)strlen(an_name(an, i)) + 1;

		if (w > width && w < 60)
			width = w;
		all_bytes += an->nodes[i].f->alloc_bytes;
	}
	fprintf(out, "\nMETERING table (%s: %s)\n\n",
		o->an.inclusive ? "inclusive" : "exclusive",
		o->an.inclusive ? "time includes callees" :
			       "time excludes callees");
	metering_head(l, width, out);
	memset(rule, '-', sizeof(rule));
	rule[width + metering_cols[l]] = '\0';
	fprintf(out, "%s\n", rule);
	for (i = 0; i < an->n; i++) {
		size_t x = an->order[i];
		const struct an_node *nd = &an->nodes[x];
		uint64_t s = o->an.inclusive ? nd->total : nd->self;
		double pct = an_percent(an, (double)s);
		char name[80];

		calls += nd->f->calls;
		bytes += nd->f->alloc_bytes;
		if (!o->an.inclusive)
			time += an_seconds(an, (double)s);
		if ((o->threshold > 0 && pct < o->threshold) ||
		    (!s && !nd->f->calls)) {
			hidden++;
			continue;
		}
		snprintf(name, sizeof(name), "%s:", an_name(an, x));
		put_padded(out, name, width);
		metering_row(an, o, l, x, s, all_bytes, out);
	}
	fprintf(out, "%s\n", rule);
	if (o->an.inclusive)
		time = an_seconds(an, (double)an->samples);
	metering_foot(an, o, l, width, calls, bytes, time, hidden, out);
	return ferror(out) ? -1 : 0;
}
