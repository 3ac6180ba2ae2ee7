// SPDX-License-Identifier: MIT
/*
 * -f html: one file, the report a person looks at.  Everything a text
 * report says is written here as plain HTML (facts, the flat profile, the
 * call graph with each function's callers and callees, the threads), so
 * the file reads with scripts off and its links navigate the call graph
 * by themselves; tools/html/report.js adds sorting, the flame graph and
 * the icicle from the stacks the page carries as JSON.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "proctree.h"
#include "render_common.h"
#include "report.h"

void html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

void html_json_string(FILE *out, const char *s)
{
	meter_json_string(out, s, true);
}

void html_begin(FILE *out, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"meter\">\n"
	      /* nothing from elsewhere, even if someone edits the file */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\""
	      "default-src 'none'; script-src 'unsafe-inline'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n<title>", out);
	html_text(out, title);
	fputs("</title>\n<style>\n", out);
	fputs(html_report_css, out);
	fputs("</style>\n</head>\n<body>\n", out);
}

void html_data_begin(FILE *out, const char *id)
{
	fprintf(out, "<script type=\"application/json\" id=\"%s\">", id);
}

void html_data_end(FILE *out)
{
	fputs("</script>\n", out);
}

void html_end(FILE *out)
{
	fputs("<script>\n", out);
	fputs(html_report_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
}

double html_share_pct(double s, double n)
{
	return n > 0 ? 100.0 * s / n : 0.0;
}

double html_share_err_pct(const struct analysis *an, double s)
{
	return 100.0 * 1.96 * an_share_se(an, s);
}

static void fact(FILE *out, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fact(FILE *out, const char *key, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(out, "<tr><th>%s</th><td>", key);
	html_text(out, buf);
	fputs("</td></tr>\n", out);
}

void html_profile_facts(const struct analysis *an, FILE *out)
{
	const struct meter_profile *p = an->p;
	char per[32], *corr = NULL;
	size_t corrlen = 0;
	FILE *m;

	format_duration(p->period_ns, per, sizeof(per));
	fputs("<table class=\"facts\">\n", out);
	fact(out, "command", "%s", p->command ? p->command : "???");
	if (p->pid)
		fact(out, "pid", "%" PRId32, p->pid);
	fact(out, "backend", "%s", p->backend[0] ? p->backend : "unknown");
	if (p->runs > 1)
		fact(out, "runs merged", "%" PRIu32, p->runs);
	if (p->period_ns && an_delivered_hz(an) > 0)
		fact(out, "rate", "%.0f Hz delivered of %.0f Hz asked (%"
		     PRIu64 " ticks, each weighing the periods of %s of %s "
		     "time since the last)", an_delivered_hz(an),
		     1e9 / (double)p->period_ns, p->ticks, per,
		     p->wall ? "wall-clock" : "CPU");
	else if (p->period_ns)
		fact(out, "rate", "%.0f Hz (a sample every %s of %s time)",
		     1e9 / (double)p->period_ns, per,
		     p->wall ? "wall-clock" : "CPU");
	fact(out, "samples", "%" PRIu64, an->samples);
	fact(out, p->wall ? (p->nthreads > 1 ? "wall seconds, summed over "
			     "threads" : "wall seconds") : "CPU seconds",
	     "%.3f", an_seconds(an, (double)an->samples));
	if (p->wall)
		fact(out, "off the CPU", "%.1f %% runnable, %.1f %% blocked",
		     an_measured_percent(an,
					 (double)p->samples_off[METER_OFF_RUNQ]),
		     an_measured_percent(an,
				(double)p->samples_off[METER_OFF_BLOCKED]));
	fact(out, "calls", "%" PRIu64, an->calls);
	fact(out, "functions", "%zu", an->n);
	fact(out, "threads", "%zu", p->nthreads);
	fact(out, "lost", "%" PRIu64 " stacks (table full)", p->lost);
	fact(out, "invalid", "%" PRIu64 " samples", p->invalid);
	fact(out, "outside", "%" PRIu64 " samples in no instrumented function",
	     p->no_current);
	fact(out, "truncated", "%" PRIu64 " stacks", p->truncated);
	m = open_memstream(&corr, &corrlen);
	if (m) {
		profile_correction_line(p, m, "");
		fclose(m);
		if (corr && corrlen && corr[corrlen - 1] == '\n')
			corr[corrlen - 1] = '\0';
		fact(out, "correction", "%s", corr && *corr ? corr :
		     "none (no calibrated cost in this profile)");
		free(corr);
	}
	fputs("</table>\n", out);
}

static void flat_table(const struct analysis *an, FILE *out)
{
	double n = an->share_base;
	size_t i;

	fputs("<section id=\"flat\">\n<h2>Flat profile</h2>\n"
	      "<p>Self and total time from the samples, with the 95 % "
	      "statistical uncertainty of each share; calls are exact.  "
	      "Click a heading to sort, a name for its callers and "
	      "callees.</p>\n<table class=\"sortable\" id=\"flat-table\">\n"
	      "<thead><tr><th data-type=\"s\">function</th>"
	      "<th>self %</th><th>&#177; (95 %)</th><th>self s</th>"
	      "<th>total %</th><th>total s</th><th>calls</th>", out);
	if (an->p->wall)
		fputs("<th>self off-CPU %</th>", out);
	fputs("</tr></thead>\n<tbody>\n", out);
	for (i = 0; i < an->n; i++) {
		size_t x = an->order[i];
		const struct an_node *nd = &an->nodes[x];

		if (!nd->self && !nd->total && !nd->f->calls)
			continue;
		fprintf(out, "<tr data-node=\"%zu\"><td><a href=\"#f%zu\" "
			"title=\"", x, x);
		html_text(out, an_whole_name(an, x));
		fputs("\">", out);
		html_text(out, an_name(an, x));
		fprintf(out, "</a></td><td>%.2f</td><td>%.2f</td>"
			"<td>%.3f</td><td>%.2f</td><td>%.3f</td>"
			"<td>%" PRIu64 "</td>",
			html_share_pct((double)nd->self, n),
			html_share_err_pct(an, (double)nd->self),
			an_seconds(an, (double)nd->self),
			html_share_pct((double)nd->total, n),
			an_seconds(an, (double)nd->total), nd->f->calls);
		if (an->p->wall)
			fprintf(out, "<td>%.1f</td>", nd->self ?
				100.0 * (double)nd->self_off /
				(double)nd->self : 0.0);
		fputs("</tr>\n", out);
	}
	fputs("</tbody>\n</table>\n</section>\n", out);
}

/* A function's entry lists its heaviest edges, the rest summed up. */
#define HTML_EDGES_MAX	25

/* One side of a function's entry: its callers or its callees. */
static int edge_rows(const struct analysis *an, FILE *out, size_t node,
		     bool callers)
{
	double total = (double)an->nodes[node].total, rest = 0;
	struct an_line *l;
	size_t i, n;

	if (an_node_lines(an, node, callers, &l, &n))
		return -1;
	fprintf(out, "<table class=\"edges %s\"><thead><tr><th>%s</th>"
		"<th>share of total %%</th><th>s</th></tr></thead><tbody>\n",
		callers ? "callers" : "callees",
		callers ? "caller" : "callee");
	for (i = 0; i < n; i++) {
		if (i >= HTML_EDGES_MAX) {
			rest += l[i].time;
			continue;
		}
		fputs("<tr><td>", out);
		if (l[i].node == NODE_ROOT) {
			html_text(out, an_name(an, l[i].node));
		} else {
			fprintf(out, "<a href=\"#f%zu\">", l[i].node);
			html_text(out, an_name(an, l[i].node));
			fputs("</a>", out);
		}
		fprintf(out, "</td><td>%.2f</td><td>%.3f</td></tr>\n",
			html_share_pct(l[i].time, total),
			an_seconds(an, l[i].time));
	}
	if (n > HTML_EDGES_MAX)
		fprintf(out, "<tr class=\"more\"><td>%zu more (-f callgraph "
			"lists all)</td><td>%.2f</td><td>%.3f</td></tr>\n",
			n - HTML_EDGES_MAX, html_share_pct(rest, total),
			an_seconds(an, rest));
	if (!n)
		fprintf(out, "<tr><td colspan=\"3\">(none sampled)</td></tr>\n");
	fputs("</tbody></table>\n", out);
	free(l);
	return 0;
}

static int call_graph(const struct analysis *an, FILE *out)
{
	double n = an->share_base;
	size_t i;

	fputs("<section id=\"graph\">\n<h2>Call graph</h2>\n<p>Each "
	      "function with its callers and callees and the share of its "
	      "total time spent on each edge, measured from the sampled "
	      "stacks (exact, not apportioned by calls).</p>\n", out);
	for (i = 0; i < an->n; i++) {
		size_t x = an->order[i];
		const struct an_node *nd = &an->nodes[x];

		if (!nd->self && !nd->total && !nd->f->calls)
			continue;
		fprintf(out, "<div class=\"fn\" id=\"f%zu\" data-node=\"%zu\">"
			"<h3>", x, x);
		html_text(out, an_name(an, x));
		fputs("</h3>\n", out);
		/* the whole name where the row shows a short one */
		if (strcmp(an_name(an, x), an_whole_name(an, x))) {
			fputs("<p class=\"whole\">", out);
			html_text(out, an_whole_name(an, x));
			fputs("</p>\n", out);
		}
		if (nd->f->file) {
			fputs("<p class=\"src\">defined in <code>", out);
			html_text(out, nd->f->file);
			if (nd->f->line)
				fprintf(out, ":%" PRIu32, nd->f->line);
			fputs("</code></p>\n", out);
		}
		fprintf(out, "<p class=\"sum\">total <b>%.2f %%</b> "
			"(%.3f s), self <b>%.2f %%</b> (%.3f s), "
			"<b>%" PRIu64 "</b> calls%s "
			"<button class=\"focus\" data-node=\"%zu\" hidden>"
			"focus in the flame graph</button></p>\n",
			html_share_pct((double)nd->total, n),
			an_seconds(an, (double)nd->total),
			html_share_pct((double)nd->self, n),
			an_seconds(an, (double)nd->self), nd->f->calls,
			nd->recursive ? ", recursive" : "", x);
		if (edge_rows(an, out, x, true) ||
		    edge_rows(an, out, x, false))
			return -1;
		fputs("</div>\n", out);
	}
	fputs("</section>\n", out);
	return 0;
}

/* A profile of several processes: each program's sums (tree.h). */
static void programs_table(const struct analysis *an, FILE *out)
{
	const struct meter_profile *p = an->p;
	struct meter_program *g;
	size_t i, n;

	if (p->nprocs < 2)
		return;
	n = meter_programs(p, &g);
	fprintf(out, "<section id=\"programs\">\n<h2>Programs</h2>\n<p>%zu "
		"processes of %zu program%s.</p>\n<table class=\"sortable\">"
		"<thead><tr><th>program</th><th>processes</th><th>seconds</th>"
		"<th>calls</th><th>samples</th></tr></thead><tbody>\n",
		p->nprocs, n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		fputs("<tr><td>", out);
		html_text(out, g[i].command);
		fprintf(out, "</td><td>%zu</td><td>%.3f</td><td>%" PRIu64
			"</td><td>%" PRIu64 "</td></tr>\n", g[i].processes,
			(double)g[i].samples * (double)p->period_ns / 1e9,
			g[i].calls, g[i].samples);
	}
	fputs("</tbody></table>\n</section>\n", out);
	free(g);
}

static void threads_table(const struct analysis *an, FILE *out)
{
	const struct meter_profile *p = an->p;
	size_t i;

	if (!p->nthreads)
		return;
	fputs("<section id=\"threads\">\n<h2>Threads</h2>\n<table "
	      "class=\"sortable\"><thead><tr><th>tid</th><th>name</th>"
	      "<th>samples</th><th>%</th><th>state</th></tr></thead>"
	      "<tbody>\n", out);
	for (i = 0; i < p->nthreads; i++) {
		char buf[32];

		fprintf(out, "<tr><td>%" PRIu32 "</td><td>", p->threads[i].tid);
		html_text(out, thread_label(&p->threads[i], buf));
		fprintf(out, "</td><td>%" PRIu64 "</td><td>%.2f</td><td>%s"
			"</td></tr>\n", p->threads[i].samples,
			html_share_pct((double)p->threads[i].samples,
				       (double)an->samples),
			p->threads[i].exited ? "exited" : "running");
	}
	fputs("</tbody></table>\n</section>\n", out);
}

void html_stack_row(FILE *out, const struct meter_profile *p,
		    const struct meter_stack *s, const size_t *map, bool first)
{
	size_t k;

	/* the state's bit 4: cut at the root (report.js draws [truncated]) */
	fprintf(out, "%s[%" PRIu64 ",%u,%" PRIu32, first ? "\n" : ",\n",
		s->samples, (unsigned)s->state | (s->truncated ? 4u : 0u),
		s->tid);
	for (k = 0; k < s->depth; k++) {
		const struct meter_func *f = meter_profile_find(p, s->frames[k]);
		size_t i = f ? (size_t)(f - p->funcs) : 0;

		fprintf(out, ",%zu", f && map ? map[i] : i);
	}
	fputc(']', out);
}

void html_stacks_json(const struct analysis *an, FILE *out)
{
	const struct meter_profile *p = an->p;
	size_t i;

	fputs("\"funcs\":[", out);
	for (i = 0; i < an->n; i++) {
		if (i)
			fputc(',', out);
		html_json_string(out, an_name(an, i));
	}
	fputs("],\"stacks\":[", out);
	/* node index: funcs and nodes are parallel */
	for (i = 0; i < p->nstacks; i++)
		html_stack_row(out, p, &p->stacks[i], NULL, !i);
	fputs("]", out);
}

int render_html(const struct analysis *an, const struct report_opts *o,
		FILE *out)
{
	const struct meter_profile *p = an->p;
	char title[300];

	(void)o;
	snprintf(title, sizeof(title), "meter: %s",
		 p->command ? p->command : "profile");
	html_begin(out, title);
	fputs("<header><h1>", out);
	html_text(out, title);
	fputs("</h1>\n", out);
	html_profile_facts(an, out);
	fputs("<nav><a href=\"#flat\">flat profile</a> &#183; "
	      "<a href=\"#graph\">call graph</a> &#183; "
	      "<a href=\"#flame\">flame graph</a></nav>\n</header>\n", out);
	programs_table(an, out);
	fputs("<section id=\"flame\">\n<h2>Flame graph</h2>\n"
	      "<noscript><p>The flame graph is drawn by a script; the "
	      "tables hold the same data.</p></noscript>\n"
	      "<div class=\"flame\" data-source=\"meter-data\"></div>\n"
	      "</section>\n", out);
	flat_table(an, out);
	threads_table(an, out);
	if (call_graph(an, out))
		return -1;
	html_data_begin(out, "meter-data");
	fprintf(out, "{\"kind\":\"profile\",\"period_ns\":%" PRIu64
		",\"samples\":%" PRIu64 ",\"wall\":%s,", p->period_ns,
		an->samples, p->wall ? "true" : "false");
	html_stacks_json(an, out);
	fputs("}", out);
	html_data_end(out);
	html_end(out);
	return ferror(out) ? -1 : 0;
}
