// SPDX-License-Identifier: MIT
/*
 * The flat profile, as prof and gprof print it: % time, cumulative
 * seconds, self seconds, calls, self and total ms/call, name.  Ticks that
 * found no current function or an invalid one are shown as rows of their
 * own so that the % time column adds up to 100.  A wall-clock profile
 * splits self seconds into on a CPU, runnable, and blocked.
 */
#include <inttypes.h>

#include "analysis.h"
#include "render_common.h"

static void row(FILE *out, double pct, double cum, double self,
		const struct meter_func *f, const struct analysis *an,
		const char *name)
{
	fprintf(out, "%6.2f %10.3f %9.3f ", pct, cum, self);
	if (an->p->wall && f) {
		double runq = (double)f->self_off[METER_OFF_RUNQ];
		double blocked = (double)f->self_off[METER_OFF_BLOCKED];

		fprintf(out, "%9.3f %9.3f %9.3f ",
			self - an_seconds(an, runq + blocked),
			an_seconds(an, runq), an_seconds(an, blocked));
	} else if (an->p->wall) {
		fprintf(out, "%9s %9s %9s ", "", "", "");
	}
	if (f && f->calls) {
		double per = 1e3 / (double)f->calls;

		fprintf(out, "%9" PRIu64 " %9.4f %9.4f  ", f->calls,
			an_seconds(an, (double)f->self_samples) * per,
			an_seconds(an, (double)(f->total_samples >
						 f->self_samples ?
						 f->total_samples :
						 f->self_samples)) * per);
	} else {
		fprintf(out, "%9s %9s %9s  ", "", "", "");
	}
	fprintf(out, "%s\n", name);
}

int render_flat(const struct analysis *an, const struct render_opts *o,
		FILE *out)
{
	const struct meter_profile *p = an->p;
	double cum = 0;
	size_t i, hidden = 0;
	char per[32];

	render_header(an, out);
	render_threads(an, o, out);
	format_duration(p->period_ns, per, sizeof(per));
	fprintf(out, "\nFlat profile:\n\n");
	if (p->period_ns)
		fprintf(out, "Each sample counts as %g seconds (period %s).\n",
			(double)p->period_ns / 1e9, per);
	if (p->wall) {
		fprintf(out, "Wall clock: self seconds split into on a CPU, "
			"runnable waiting for one, and blocked.\n");
		fprintf(out, "%6s %10s %9s %9s %9s %9s %9s %9s %9s\n", "%",
			"cumulative", "self", "self", "self", "self", "", "self",
			"total");
		fprintf(out, "%6s %10s %9s %9s %9s %9s %9s %9s %9s  %s\n",
			"time", "seconds", "seconds", "on-cpu", "runq",
			"blocked", "calls", "ms/call", "ms/call", "name");
	} else {
		fprintf(out, "%6s %10s %9s %9s %9s %9s\n", "%", "cumulative",
			"self", "", "self", "total");
		fprintf(out, "%6s %10s %9s %9s %9s %9s  %s\n", "time",
			"seconds", "seconds", "calls", "ms/call", "ms/call",
			"name");
	}
	for (i = 0; i < an->n; i++) {
		const struct an_node *x = &an->nodes[an->order[i]];
		double pct = an_percent(an, (double)x->self);

		if (o->threshold > 0 && pct < o->threshold) {
			hidden++;
			cum += an_seconds(an, (double)x->self);
			continue;
		}
		cum += an_seconds(an, (double)x->self);
		row(out, pct, cum, an_seconds(an, (double)x->self), x->f, an,
		    an_name(an, an->order[i]));
	}
	if (p->no_current) {
		cum += an_seconds(an, (double)p->no_current);
		row(out, an_percent(an, (double)p->no_current), cum,
		    an_seconds(an, (double)p->no_current), NULL, an,
		    "<no current function>");
	}
	if (p->invalid) {
		cum += an_seconds(an, (double)p->invalid);
		row(out, an_percent(an, (double)p->invalid), cum,
		    an_seconds(an, (double)p->invalid), NULL, an,
		    "<invalid>");
	}
	if (hidden)
		fprintf(out, "\n%zu function%s below %g%% not shown "
			"(--threshold).\n", hidden, hidden == 1 ? "" : "s",
			o->threshold);
	return ferror(out) ? -1 : 0;
}
