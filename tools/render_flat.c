// SPDX-License-Identifier: MIT
/*
 * The flat profile, as prof and gprof print it: % time, cumulative
 * seconds, self seconds, calls, self and total time a call, name.  Ticks that
 * found no current function or an invalid one are shown as rows of their
 * own so that the % time column adds up to 100.  A wall-clock profile
 * splits self seconds into on a CPU, runnable, and blocked.  Functions
 * with a source (a Python function's file and first line) are listed
 * with it after the table, as the table's name column is its last.
 */
#include <inttypes.h>

#include <stdlib.h>

#include "report.h"
#include "render_common.h"

/* The unit of the time-a-call columns: ms, us or ns. */
struct per_unit {
	const char *head;	/* "ms/call" */
	double per_s;		/* units a second */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The unit that shows the median function's total time a call with three
 * digits or more: C++ functions of a few hundred nanoseconds a call read
 * 0.0000 in ms (ninja's did).
 */
static struct per_unit per_unit(const struct analysis *an)
{
	static const struct per_unit units[] = {
		{ "ms/call", 1e3 }, { "us/call", 1e6 }, { "ns/call", 1e9 },
	};
	double *per = malloc((an->n ? an->n : 1) * sizeof(*per)), median;
	size_t i, n = 0, u = 0;

	for (i = 0; per && i < an->n; i++) {
		const struct an_node *x = &an->nodes[i];

		if (x->f->calls && x->total)
			per[n++] = an_seconds(an, (double)x->total) /
				   (double)x->f->calls;
	}
	if (n) {
		qsort(per, n, sizeof(*per), cmp_double);
		median = per[n / 2];
		while (u < 2 && median * units[u].per_s < 0.1)
			u++;
	}
	free(per);
	return units[u];
}

/* a time a call in 9 columns, as many decimals as fit */
static void put_per(FILE *out, double v)
{
	fprintf(out, v < 1e4 ? "%9.4f " : v < 1e7 ? "%9.1f " : "%9.0f ", v);
}

static void row(FILE *out, double pct, double cum, double self,
		const struct meter_func *f, const struct analysis *an,
		double per_s, const char *name)
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
		double per = per_s / (double)f->calls;

		fprintf(out, "%9" PRIu64 " ", f->calls);
		put_per(out, an_seconds(an, (double)f->self_samples) * per);
		put_per(out, an_seconds(an, (double)(f->total_samples >
						      f->self_samples ?
						      f->total_samples :
						      f->self_samples)) * per);
		fputc(' ', out);
	} else {
		fprintf(out, "%9s %9s %9s  ", "", "", "");
	}
	fprintf(out, "%s\n", name);
}

/* Where the rows' functions are defined, for those that say (Python's). */
static void render_sources(const struct analysis *an,
			   const struct report_opts *o, FILE *out)
{
	bool any = false;
	size_t i;

	for (i = 0; i < an->n; i++) {
		const struct an_node *x = &an->nodes[an->order[i]];

		if (!x->f->file || (o->threshold > 0 &&
				    an_percent(an, (double)x->self) <
				    o->threshold))
			continue;
		if (!any)
			fprintf(out, "\nWhere the functions above are "
				"defined:\n");
		any = true;
		fprintf(out, "  %s  %s", an_name(an, an->order[i]),
			x->f->file);
		if (x->f->line)
			fprintf(out, ":%" PRIu32, x->f->line);
		fputc('\n', out);
	}
}

int render_flat(const struct analysis *an, const struct report_opts *o,
		FILE *out)
{
	const struct meter_profile *p = an->p;
	struct per_unit unit = per_unit(an);
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
			"blocked", "calls", unit.head, unit.head, "name");
	} else {
		fprintf(out, "%6s %10s %9s %9s %9s %9s\n", "%", "cumulative",
			"self", "", "self", "total");
		fprintf(out, "%6s %10s %9s %9s %9s %9s  %s\n", "time",
			"seconds", "seconds", "calls", unit.head, unit.head,
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
		    unit.per_s, an_name(an, an->order[i]));
	}
	if (p->no_current) {
		cum += an_seconds(an, (double)p->no_current);
		row(out, an_percent(an, (double)p->no_current), cum,
		    an_seconds(an, (double)p->no_current), NULL, an,
		    unit.per_s, "<no current function>");
	}
	if (p->invalid) {
		cum += an_seconds(an, (double)p->invalid);
		row(out, an_percent(an, (double)p->invalid), cum,
		    an_seconds(an, (double)p->invalid), NULL, an,
		    unit.per_s, "<invalid>");
	}
	if (hidden)
		fprintf(out, "\n%zu function%s below %g%% not shown "
			"(--threshold).\n", hidden, hidden == 1 ? "" : "s",
			o->threshold);
	render_sources(an, o, out);
	return ferror(out) ? -1 : 0;
}
