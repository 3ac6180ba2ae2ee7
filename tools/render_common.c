// SPDX-License-Identifier: MIT
/* The header every text report starts with. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "idle.h"
#include "render_common.h"
#include "report.h"
#include "proctree.h"

/* Wall clock: where the threads' time went, on the CPU or off it. */
static void render_wall_split(const struct analysis *an, FILE *out)
{
	const struct meter_profile *p = an->p;
	double runq = (double)p->samples_off[METER_OFF_RUNQ];
	double blocked = (double)p->samples_off[METER_OFF_BLOCKED];
	double on = (double)an->samples - runq - blocked;

	fprintf(out, "wall clock: %.1f%% on a CPU (%.3f s), %.1f%% runnable "
		"waiting for a CPU (%.3f s), %.1f%% blocked or sleeping "
		"(%.3f s)\n", an_measured_percent(an, on), an_seconds(an, on),
		an_measured_percent(an, runq), an_seconds(an, runq),
		an_measured_percent(an, blocked), an_seconds(an, blocked));
}

/*
 * A merged profile of several processes (a tree, runs merged): each
 * program's processes, CPU seconds, calls and samples, as measured (the
 * instrumentation correction applies to the functions below).
 */
static void render_programs(const struct analysis *an, FILE *out)
{
	const struct meter_profile *p = an->p;
	struct meter_program *g;
	size_t i, n;

	if (p->nprocs < 2)
		return;
	n = meter_programs(p, &g);
	fprintf(out, "%zu processes of %zu program%s:\n%-20s %9s %10s %12s "
		"%10s\n", p->nprocs, n, n == 1 ? "" : "s", "program",
		"processes", "seconds", "calls", "samples");
	for (i = 0; i < n; i++) {
		put_padded(out, g[i].command, 20);
		fprintf(out, " %9zu %10.3f %12" PRIu64 " %10" PRIu64 "\n",
			g[i].processes, p->period_ns ?
			(double)g[i].samples * (double)p->period_ns / 1e9 : 0.0,
			g[i].calls, g[i].samples);
	}
	free(g);
}

/*
 * meter-run --patch: the functions left unpatched, which counted nothing,
 * named so that no reader takes their absence (or a zero) for no calls.
 */
static void render_refused(const struct meter_profile *p, FILE *out)
{
	size_t i, n = 0, shown = 0;

	for (i = 0; i < p->nfuncs; i++)
		n += p->funcs[i].refused != NULL;
	if (!n)
		return;
	fprintf(out, "%zu function%s left unpatched by --patch, not counted:",
		n, n == 1 ? "" : "s");
	for (i = 0; i < p->nfuncs && shown < 5; i++)
		if (p->funcs[i].refused)
			fprintf(out, "%s %s (%s)", shown++ ? ";" : "",
				p->funcs[i].name, p->funcs[i].refused);
	if (n > shown)
		fprintf(out, "; and %zu more (meter-run --patch-list, or the "
			"JSON profile's \"refused\", names them)", n - shown);
	fprintf(out, "\n");
}

void render_header(const struct analysis *an, FILE *out)
{
	const struct meter_profile *p = an->p;
	char per[32];

	format_duration(p->period_ns, per, sizeof(per));
	fprintf(out, "meter profile of %s", p->command ? p->command : "???");
	if (p->pid)
		fprintf(out, " (pid %" PRId32 ")", p->pid);
	fprintf(out, ": backend %s", p->backend[0] ? p->backend : "unknown");
	if (p->runs > 1)
		fprintf(out, ", %" PRIu32 " runs merged", p->runs);
	fprintf(out, "\n");
	if (p->period_ns) {
		fprintf(out, "%" PRIu64 " samples at a period of %s ",
			an->samples, per);
		if (an_delivered_hz(an) > 0)
			fprintf(out, "from %" PRIu64 " ticks (%.0f Hz asked, "
				"%.0f Hz delivered)", p->ticks,
				1e9 / (double)p->period_ns,
				an_delivered_hz(an));
		else
			fprintf(out, "(%.0f Hz)", 1e9 / (double)p->period_ns);
		/* threads' wall-clock time adds up past the run's */
		if (p->wall && p->nthreads > 1)
			fprintf(out, ": %.3f s of wall-clock time summed over "
				"%zu threads", an_seconds(an,
				(double)an->samples), p->nthreads);
		else
			fprintf(out, ": %.3f s of %s time",
				an_seconds(an, (double)an->samples),
				p->wall ? "wall-clock" : "CPU");
	} else {
		fprintf(out, "%" PRIu64 " samples", an->samples);
	}
	fprintf(out, "; %" PRIu64 " calls; %zu function%s",
		an->calls, an->n, an->n == 1 ? "" : "s");
	/* each run's threads are others: say over how many runs */
	if (p->nthreads)
		fprintf(out, "; %zu thread%s", p->nthreads,
			p->nthreads == 1 ? "" : "s");
	if (p->nthreads && p->runs > 1)
		fprintf(out, " over %" PRIu32 " runs", p->runs);
	fprintf(out, "\n");
	render_programs(an, out);
	if (p->wall)
		render_wall_split(an, out);
	if (p->no_current || p->invalid || p->lost || p->truncated)
		fprintf(out, "%" PRIu64 " samples outside any instrumented "
			"function, %" PRIu64 " invalid, %" PRIu64
			" stacks lost (table full), %" PRIu64
			" stacks truncated\n", p->no_current, p->invalid,
			p->lost, p->truncated);
	/* each thread's first call registers it; more is worth a line */
	if (p->slow_entries > (p->nthreads ? p->nthreads : 1))
		fprintf(out, "%" PRIu64 " calls took libmeter's slow path "
			"(%.2f %% of calls)\n", p->slow_entries,
			an->calls ? 100.0 * (double)p->slow_entries /
				    (double)an->calls : 0.0);
	if (p->stretched_ticks)
		fprintf(out, "%" PRIu64 " ticks came late on purpose: this "
			"user's wall-clock threads together asked for more "
			"ticks a second than meter.ko's user_wall_ticks budget "
			"(each weighs the periods it stands for)\n",
			p->stretched_ticks);
	if (p->idle_threads)
		fprintf(out, "%zu idle thread%s set aside (--hide-idle): "
			"%.3f s of wall-clock time not in the rows below\n",
			p->idle_threads, p->idle_threads == 1 ? "" : "s",
			an_seconds(an, (double)p->idle_samples));
	if (an_unsampled_seconds(an) > 0)
		fprintf(out, "%.3f s more CPU time ran between the signal "
			"backend's ticks (threads shorter than a tick) and is "
			"not in this profile; the kernel backend samples it\n",
			an_unsampled_seconds(an));
	/* samples in functions that were never called: the counts, sent at
	 * exit, never came (a process killed by a signal) */
	if (!an->calls && an->samples > p->no_current + p->invalid)
		fprintf(out, "No call counts: the process ended without "
			"sending them (killed by a signal?); the calls column "
			"is blank.\n");
	render_refused(p, out);
	profile_correction_line(p, out, "");
	if (!an->samples && !strcmp(p->backend, "off"))
		fprintf(out, "No samples: the off backend counts calls only.\n");
	else if (!an->samples)
		fprintf(out, "No samples: the program used less CPU time than "
			"one period in its instrumented threads.\n");
}

void put_padded(FILE *out, const char *s, int width)
{
	int cols = 0;
	const char *c;

	for (c = s; *c; c++)
		if (((unsigned char)*c & 0xc0) != 0x80)
			cols++;
	fputs(s, out);
	for (; cols < width; cols++)
		fputc(' ', out);
}

/* wall clock: a thread's seconds on a CPU and off it, from the stacks */
static void thread_wall(const struct analysis *an,
			const struct meter_thread_row *t, FILE *out)
{
	uint64_t on, off;

	thread_split(an->p, t, &on, &off);
	fprintf(out, " %9.3f %9.3f", an_seconds(an, (double)on),
		an_seconds(an, (double)off));
}

const char *thread_label(const struct meter_thread_row *t, char *buf)
{
	if (!t->folded)
		return t->name;
	snprintf(buf, 32, "(%" PRIu32 " ended)", t->folded);
	return buf;
}

void render_threads(const struct analysis *an, const struct report_opts *o,
		    FILE *out)
{
	const struct meter_profile *p = an->p;
	const char *label;
	uint64_t sum = 0;
	char buf[32];
	size_t i;

	if (!o->threads)
		return;
	for (i = 0; i < p->nthreads; i++)
		sum += p->threads[i].samples;
	fprintf(out, "\nThreads:\n%10s %10s %7s %9s", "tid", "samples", "%",
		"seconds");
	if (p->wall)
		fprintf(out, " %9s %9s", "on-cpu", "off-cpu");
	fprintf(out, "  %-8s %s\n", "state", "name");
	/* no trailing blanks: a row without a name ends at its state */
	for (i = 0; i < p->nthreads; i++) {
		const struct meter_thread_row *t = &p->threads[i];

		fprintf(out, "%10" PRIu32 " %10" PRIu64 " %6.2f%% %9.3f",
			t->tid, t->samples, sum ? 100.0 *
			(double)t->samples / (double)sum : 0.0,
			an_seconds(an, (double)t->samples));
		if (p->wall)
			thread_wall(an, t, out);
		label = thread_label(t, buf);
		fprintf(out, "  %-*s%s\n", label[0] ? 9 : 0,
			t->exited ? "exited" : "running", label);
	}
	if (!p->nthreads)
		fprintf(out, "(no threads recorded)\n");
}
