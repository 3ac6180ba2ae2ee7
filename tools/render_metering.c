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

int render_metering(const struct analysis *an, const struct report_opts *o,
		    FILE *out)
{
	const struct meter_profile *p = an->p;
	uint64_t calls = 0, bytes = 0, all_bytes = 0;
	double time = 0;
	size_t i, hidden = 0;
	int width = 24;
	bool cons = an->has_alloc;
	char rule[160];

	render_header(an, out);
	render_threads(an, o, out);
	for (i = 0; i < an->n; i++) {
		int l = (int)strlen(an_name(an, i)) + 1;

		if (l > width && l < 60)
			width = l;
		all_bytes += an->nodes[i].f->alloc_bytes;
	}
	fprintf(out, "\nMETERING table (%s: %s)\n\n",
		o->an.inclusive ? "inclusive" : "exclusive",
		o->an.inclusive ? "time includes callees" :
			       "time excludes callees");
	if (cons) {
		fprintf(out, "%-*s %7s %7s %10s %10s %10s %10s %12s\n", width,
			"", "%", "%", "", "", "Cons", "Total", "Total");
		fprintf(out, "%-*s %7s %7s %10s %10s %10s %10s %12s\n", width,
			"Function", "Time", "Cons", "Calls", "Sec/Call",
			"Per Call", "Time", "Cons");
	} else if (p->wall) {
		fprintf(out, "%-*s %7s %10s %10s %10s %8s\n", width, "", "%",
			"", "", "Total", "%");
		fprintf(out, "%-*s %7s %10s %10s %10s %8s\n", width,
			"Function", "Time", "Calls", "Sec/Call", "Time",
			"Off-CPU");
	} else {
		fprintf(out, "%-*s %7s %10s %10s %10s\n", width, "", "%", "",
			"", "Total");
		fprintf(out, "%-*s %7s %10s %10s %10s\n", width, "Function",
			"Time", "Calls", "Sec/Call", "Time");
	}
	memset(rule, '-', sizeof(rule));
	rule[width + (cons ? 73 : p->wall ? 49 : 40)] = '\0';
	fprintf(out, "%s\n", rule);
	for (i = 0; i < an->n; i++) {
		size_t x = an->order[i];
		const struct an_node *nd = &an->nodes[x];
		const struct meter_func *f = nd->f;
		uint64_t s = o->an.inclusive ? nd->total : nd->self;
		double secs = an_seconds(an, (double)s);
		double pct = an_percent(an, (double)s);
		char name[80];

		calls += f->calls;
		bytes += f->alloc_bytes;
		if (!o->an.inclusive)
			time += secs;
		if ((o->threshold > 0 && pct < o->threshold) ||
		    (!s && !f->calls)) {
			hidden++;
			continue;
		}
		snprintf(name, sizeof(name), "%s:", an_name(an, x));
		put_padded(out, name, width);
		if (cons)
			fprintf(out, " %7.2f %7.2f %10" PRIu64 " %10.6f %10"
				PRIu64 " %10.6f %12" PRIu64 "\n",
				pct, all_bytes ? 100.0 *
				(double)f->alloc_bytes / (double)all_bytes : 0,
				f->calls, f->calls ? secs / (double)f->calls : 0,
				f->calls ? f->alloc_bytes / f->calls : 0, secs,
				f->alloc_bytes);
		else
			fprintf(out, " %7.2f %10" PRIu64 " %10.6f %10.6f",
				pct, f->calls,
				f->calls ? secs / (double)f->calls : 0, secs);
		if (!cons && p->wall)
			fprintf(out, " %7.2f%%", s ? 100.0 * (double)
				(o->an.inclusive ? nd->total_off : nd->self_off) /
				(double)s : 0.0);
		if (!cons)
			fputc('\n', out);
	}
	fprintf(out, "%s\n", rule);
	if (o->an.inclusive)
		time = an_seconds(an, (double)an->samples);
	if (cons)
		fprintf(out, "%-*s %7s %7s %10" PRIu64 " %10s %10s %10.6f %12"
			PRIu64 "\n", width, "TOTAL:", "", "", calls, "", "",
			time, bytes);
	else
		fprintf(out, "%-*s %7s %10" PRIu64 " %10s %10.6f\n", width,
			"TOTAL:", "", calls, "", time);
	if (p->call_cost_ps)
		fprintf(out, "Estimated total monitoring overhead: %.6f seconds "
			"(%" PRIu64 " calls x %.3f ns)\n",
			(double)calls * (double)p->call_cost_ps / 1e12, calls,
			(double)p->call_cost_ps / 1e3);
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
	return ferror(out) ? -1 : 0;
}
