// SPDX-License-Identifier: MIT
/*
 * meter-stat diff: the rows of analysis/diff.c as text, JSON or one HTML
 * page with a differential flame graph (new's stacks, coloured by how
 * each frame's share moved against base).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "html.h"
#include "render_common.h"
#include "report.h"
#include "render_diff.h"

static const char *presence_word(enum diff_presence p)
{
	switch (p) {
	case DIFF_NEW_ONLY:
		return "new";
	case DIFF_BASE_ONLY:
		return "gone";
	default:
		return "both";
	}
}

static void describe(FILE *out, const char *what, const struct analysis *an)
{
	const struct meter_profile *p = an->p;

	fprintf(out, "%s: %s (backend %s, %" PRIu64 " samples, %.3f s, "
		"%" PRIu64 " calls", what, p->command ? p->command : "???",
		p->backend[0] ? p->backend : "unknown", an->samples,
		an_seconds(an, (double)an->samples), an->calls);
	if (p->runs > 1)
		fprintf(out, ", %" PRIu32 " runs", p->runs);
	/* late ticks: fewer draws than samples, a wider band */
	if (an->weight > 1.0)
		fprintf(out, ", %.2f samples a tick", an->weight);
	fputs(")\n", out);
}

static void text_share(FILE *out, const struct diff_share *s)
{
	fprintf(out, " %6.2f %6.2f %+7.2f %6.2f", 100 * s->base, 100 * s->new,
		100 * s->change, 100 * s->band);
}

static int diff_text(const struct diff *d, const struct report_opts *o,
		     FILE *out)
{
	size_t i;

	fputs("meter diff\n", out);
	describe(out, "base", d->base);
	describe(out, "new ", d->new);
	profile_correction_line(d->base->p, out, "base: ");
	profile_correction_line(d->new->p, out, "new:  ");
	fprintf(out, "%zu function%s changed beyond the noise, %zu within it."
		"  Shares are of each\nprofile's own samples; band is the "
		"noise of the change (%.2f sigma of the ticks\ntaken: a %.2f %% "
		"chance of any mark by noise among the %zu shares\ncompared); "
		"* marks a change beyond it.  Calls are exact.\n\n", d->real,
		d->real == 1 ? "" : "s", d->n - d->real, d->sigmas,
		100 * DIFF_FALSE_MARK, d->compared);
	fprintf(out, "  %-28s %-28s %9s  %s\n", " self %", " total %",
		"self", "calls");
	fprintf(out, "   %6s %6s %7s %6s  %6s %6s %7s %6s %9s %10s %10s %10s  "
		"%s\n", "base", "new", "change", "band", "base", "new",
		"change", "band", "s change", "base", "new", "change",
		"function");
	for (i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->rows[i];
		double top = 100 * (r->total.base > r->total.new ?
				    r->total.base : r->total.new);

		if (o->threshold > 0 && top < o->threshold &&
		    r->base_calls == r->new_calls)
			continue;
		fputc(r->real ? '*' : ' ', out);
		fputc(' ', out);
		text_share(out, &r->self);
		fputc(' ', out);
		text_share(out, &r->total);
		fprintf(out, " %+9.3f %10" PRIu64 " %10" PRIu64 " %+10" PRId64
			"  %s%s\n", r->self.seconds, r->base_calls,
			r->new_calls, (int64_t)(r->new_calls - r->base_calls),
			r->name, r->presence == DIFF_BOTH ? "" :
			r->presence == DIFF_NEW_ONLY ? "  (new only)" :
			"  (base only)");
	}
	return ferror(out) ? -1 : 0;
}

static void json_side(FILE *out, const char *key, const struct analysis *an)
{
	const struct meter_profile *p = an->p;

	fprintf(out, "\"%s\":{\"command\":", key);
	html_json_string(out, p->command ? p->command : "");
	fprintf(out, ",\"backend\":");
	html_json_string(out, p->backend);
	fprintf(out, ",\"samples\":%" PRIu64 ",\"seconds\":%.6f,\"calls\":%"
		PRIu64 ",\"corrected_samples\":%.3f,\"weight\":%.4f}",
		an->samples, an_seconds(an, (double)an->samples), an->calls,
		p->corrected ? p->corrected_samples : 0.0, an->weight);
}

static void json_share(FILE *out, const char *key, const struct diff_share *s)
{
	fprintf(out, "\"%s\":{\"base_pct\":%.4f,\"new_pct\":%.4f,"
		"\"change_pct\":%.4f,\"band_pct\":%.4f,\"change_s\":%.6f}",
		key, 100 * s->base, 100 * s->new, 100 * s->change,
		100 * s->band, s->seconds);
}

static int diff_json(const struct diff *d, FILE *out)
{
	size_t i;

	fputs("{\"format\":\"meter-diff\",\"version\":1,", out);
	json_side(out, "base", d->base);
	fputc(',', out);
	json_side(out, "new", d->new);
	fprintf(out, ",\"changed\":%zu,\"shares_compared\":%zu,"
		"\"sigmas\":%.4f,\"functions\":[", d->real, d->compared,
		d->sigmas);
	for (i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->rows[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		html_json_string(out, r->name);
		fprintf(out, ",\"presence\":\"%s\",\"real\":%s,",
			presence_word(r->presence), r->real ? "true" : "false");
		json_share(out, "self", &r->self);
		fputc(',', out);
		json_share(out, "total", &r->total);
		fprintf(out, ",\"calls\":{\"base\":%" PRIu64 ",\"new\":%" PRIu64
			",\"change\":%" PRId64 "}}", r->base_calls, r->new_calls,
			(int64_t)(r->new_calls - r->base_calls));
	}
	fputs("\n]}\n", out);
	return ferror(out) ? -1 : 0;
}

static void html_share_cells(FILE *out, const struct diff_share *s)
{
	const char *cls = s->change > s->band ? " class=\"up\"" :
			  -s->change > s->band ? " class=\"down\"" : "";

	fprintf(out, "<td>%.2f</td><td>%.2f</td><td%s>%+.2f</td>"
		"<td>%.2f</td>", 100 * s->base, 100 * s->new, cls,
		100 * s->change, 100 * s->band);
}

/*
 * Both profiles' stacks over one table of names: new's nodes first, then
 * the names only base has.
 */
static int diff_stacks_json(const struct diff *d, FILE *out)
{
	const struct meter_profile *bp = d->base->p;
	size_t *map = calloc(d->base->n ? d->base->n : 1, sizeof(*map));
	size_t i, next = d->new->n;

	if (!map)
		return -1;
	for (i = 0; i < d->base->n; i++)
		map[i] = SIZE_MAX;
	for (i = 0; i < d->n; i++)
		if (d->rows[i].presence == DIFF_BOTH)
			map[d->rows[i].base_node] = d->rows[i].new_node;
	fputs("{\"kind\":\"diff\",", out);
	/* the script's band is diff_band's: its sigmas, each side's weight */
	fprintf(out, "\"period_ns\":%" PRIu64 ",\"sigmas\":%.4f,\"weight\":%.6g,",
		d->new->p->period_ns, d->sigmas, d->new->weight);
	html_stacks_json(d->new, out);
	/* base-only names extend new's table of names */
	fprintf(out, ",\"base\":{\"weight\":%.6g,\"funcs\":[",
		d->base->weight);
	for (i = 0; i < d->new->n; i++) {
		if (i)
			fputc(',', out);
		html_json_string(out, an_name(d->new, i));
	}
	for (i = 0; i < d->base->n; i++) {
		if (map[i] != SIZE_MAX)
			continue;
		map[i] = next++;
		fputc(',', out);
		html_json_string(out, an_name(d->base, i));
	}
	fputs("],\"stacks\":[", out);
	for (i = 0; i < bp->nstacks; i++)
		html_stack_row(out, bp, &bp->stacks[i], map, !i);
	fputs("]}}", out);
	free(map);
	return 0;
}

static void html_side(FILE *out, const char *what, const struct analysis *an)
{
	fprintf(out, "<h2>%s</h2>\n", what);
	html_profile_facts(an, out);
}

static int diff_html(const struct diff *d, FILE *out)
{
	size_t i;

	html_begin(out, "meter diff");
	fputs("<header><h1>meter diff</h1>\n", out);
	fprintf(out, "<p><b>%zu</b> function%s changed beyond the noise, "
		"<b>%zu</b> within it.  Shares are of each profile's own "
		"samples; the band is the noise of the change (%.2f sigma of "
		"the ticks taken: a %.2f %% chance of any mark by noise among "
		"the %zu shares compared); calls are exact.</p>\n", d->real,
		d->real == 1 ? "" : "s", d->n - d->real, d->sigmas,
		100 * DIFF_FALSE_MARK, d->compared);
	fputs("<nav><a href=\"#changes\">changes</a> &#183; "
	      "<a href=\"#flame\">differential flame graph</a> &#183; "
	      "<a href=\"#profiles\">the two profiles</a></nav>\n</header>\n",
	      out);
	fputs("<section id=\"changes\">\n<h2>Changes</h2>\n<table "
	      "class=\"sortable\" id=\"diff-table\"><thead><tr>"
	      "<th data-type=\"s\">function</th><th>real</th>"
	      "<th>self base %</th><th>self new %</th><th>self change</th>"
	      "<th>&#177; band</th><th>total base %</th><th>total new %</th>"
	      "<th>total change</th><th>&#177; band</th><th>self s change</th>"
	      "<th>calls base</th><th>calls new</th><th>calls change</th>"
	      "</tr></thead><tbody>\n", out);
	for (i = 0; i < d->n; i++) {
		const struct diff_row *r = &d->rows[i];

		fprintf(out, "<tr data-presence=\"%s\"%s><td>",
			presence_word(r->presence),
			r->presence == DIFF_BASE_ONLY ? " class=\"gone\"" : "");
		html_text(out, r->name);
		if (r->presence != DIFF_BOTH)
			fprintf(out, " (%s only)", r->presence == DIFF_NEW_ONLY ?
				"new" : "base");
		fprintf(out, "</td><td>%s</td>", r->real ? "yes" : "no");
		html_share_cells(out, &r->self);
		html_share_cells(out, &r->total);
		fprintf(out, "<td>%+.3f</td><td>%" PRIu64 "</td><td>%" PRIu64
			"</td><td>%+" PRId64 "</td></tr>\n", r->self.seconds,
			r->base_calls, r->new_calls,
			(int64_t)(r->new_calls - r->base_calls));
	}
	fputs("</tbody></table>\n</section>\n", out);
	fputs("<section id=\"flame\">\n<h2>Differential flame graph</h2>\n"
	      "<p>New's stacks; red where a frame's share of the samples grew "
	      "beyond the noise band, blue where it shrank, grey within it; "
	      "a dashed frame is not in base.</p>\n<noscript><p>The flame "
	      "graph is drawn by a script; the table holds the same data."
	      "</p></noscript>\n<div class=\"flame\" data-source=\"meter-data\">"
	      "</div>\n</section>\n<section id=\"profiles\">\n", out);
	html_side(out, "base", d->base);
	html_side(out, "new", d->new);
	fputs("</section>\n", out);
	html_data_begin(out, "meter-data");
	if (diff_stacks_json(d, out))
		return -1;
	html_data_end(out);
	html_end(out);
	return ferror(out) ? -1 : 0;
}

int render_diff(const struct meter_profile *base,
		const struct meter_profile *new, const struct report_opts *o,
		FILE *out, char *err, size_t errlen)
{
	struct diff d;
	int ret;

	if (base->wall != new->wall) {
		snprintf(err, errlen, "one profile is sampled on CPU time and "
			 "the other on wall-clock time: they do not compare");
		return -1;
	}
	if (diff_build(&d, base, new, &o->an, o->attrib)) {
		diff_free(&d);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	switch (o->format) {
	case FMT_JSON:
		ret = diff_json(&d, out);
		break;
	case FMT_HTML:
		ret = diff_html(&d, out);
		break;
	default:
		ret = diff_text(&d, o, out);
	}
	diff_free(&d);
	if (!ret && (fflush(out) || ferror(out)))
		ret = -1;
	if (ret)
		snprintf(err, errlen, "cannot write the report");
	return ret;
}
