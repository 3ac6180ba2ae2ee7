// SPDX-License-Identifier: MIT
/*
 * meter-stat watch's top-like view: the session's totals and, for each
 * function, the samples and calls of the last interval beside the totals,
 * sorted by the interval's self samples (interval.h).  On a terminal the
 * caller redraws it in place and passes the window's height; piped, every
 * function with anything to show prints, as plain lines.  Samples are as
 * taken (no instrumentation correction): an interval is too short to
 * subtract an estimate from.
 */
#include <inttypes.h>

#include "interval.h"
#include "render_common.h"
#include "report.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* --threads: each thread's samples in the interval beside its total */
static void top_threads(const struct interval *iv, FILE *out)
{
	size_t i;

	fprintf(out, "\nThreads:\n%6s %8s  %6s %10s %10s  %-8s %s\n",
		"%", "samples", "%", "samples", "tid", "state", "name");
	for (i = 0; i < iv->nthreads; i++) {
		const struct interval_thread *r = &iv->threads[i];
		const struct meter_thread_row *t = r->t;
		char buf[32];
		const char *label = thread_label(t, buf);

		fprintf(out, "%6.2f %8" PRIu64 "  %6.2f %10" PRIu64 " %10"
			PRIu32 "  %-*s%s\n", pct(r->samples, iv->samples),
			r->samples, pct(t->samples, iv->now->samples),
			t->samples, t->tid, label[0] ? 8 : 0,
			t->exited ? "exited" : "running", label);
	}
	if (!iv->nthreads)
		fprintf(out, "(no threads recorded)\n");
}

int render_top(const struct interval *iv, const struct report_opts *o,
	       size_t max_rows, FILE *out)
{
	const struct meter_profile *p = iv->now;
	uint64_t calls = 0;
	size_t i, shown = 0, hidden = 0;

	for (i = 0; i < p->nfuncs; i++)
		calls += p->funcs[i].calls;
	fprintf(out, "%s (pid %" PRId32 ", %s): %" PRIu64 " samples "
		"(+%" PRIu64 "), %" PRIu64 " calls (+%" PRIu64 "), "
		"%zu thread%s\n", p->command ? p->command : "???", p->pid,
		p->exited ? "exited" : "running", p->samples, iv->samples,
		calls, iv->calls, p->nthreads, p->nthreads == 1 ? "" : "s");
	fprintf(out, "%-26s  %s\n", iv->whole ? "since the start" :
		"last interval", "total");
	fprintf(out, "%6s %8s %10s  %6s %10s %14s  %s\n", "%self", "samples",
		"calls", "%self", "samples", "calls", "name");
	for (i = 0; i < iv->n; i++) {
		const struct interval_row *r = &iv->rows[i];
		const struct meter_func *f = r->f;
		double share = pct(f->self_samples, p->samples);

		/* piped: only what the interval had; on a terminal, all */
		if ((!r->self && !r->calls &&
		     (!max_rows || (!f->self_samples && !f->calls))) ||
		    (o->threshold > 0 && share < o->threshold &&
		     pct(r->self, iv->samples) < o->threshold) ||
		    (max_rows && shown >= max_rows)) {
			hidden++;
			continue;
		}
		fprintf(out, "%6.2f %8" PRIu64 " %10" PRIu64 "  %6.2f %10"
			PRIu64 " %14" PRIu64 "  %s\n",
			pct(r->self, iv->samples), r->self, r->calls, share,
			f->self_samples, f->calls,
			f->name && f->name[0] ? f->name : "???");
		shown++;
	}
	if (hidden && (o->threshold > 0 || max_rows))
		fprintf(out, "(%zu more function%s)\n", hidden,
			hidden == 1 ? "" : "s");
	if (o->threads)
		top_threads(iv, out);
	return ferror(out) ? -1 : 0;
}
