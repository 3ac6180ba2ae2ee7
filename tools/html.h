/* SPDX-License-Identifier: MIT */
/*
 * The HTML reports' page (Documentation/user-guide.md, "Pictures"): one
 * self-contained file whose tables are plain HTML, readable with scripts
 * off, and whose flame graph is drawn by tools/html/report.js from the
 * data the page carries.  The script and style are compiled into the
 * tools (build/tools/html_assets.c), so a report needs no network.
 */
#ifndef METER_TOOLS_HTML_H
#define METER_TOOLS_HTML_H

#include <stdio.h>

#include "analysis.h"

/* tools/html/report.js and report.css, as built in */
extern const char html_report_js[];
extern const char html_report_css[];

/* Text for an element's content or an attribute's value. */
void html_text(FILE *out, const char *s);
/* A JSON string that is safe inside <script> (no "<", no U+2028). */
void html_json_string(FILE *out, const char *s);

/* <!DOCTYPE ...> to <body>, the title escaped. */
void html_begin(FILE *out, const char *title);
/*
 * The data for the script, as <script type="application/json" id=ID>:
 * write the JSON in between.
 */
void html_data_begin(FILE *out, const char *id);
void html_data_end(FILE *out);
/* The script, then </body></html>. */
void html_end(FILE *out);

/*
 * The share s/n as a percentage, and the 95 % statistical uncertainty of
 * the share s of an's samples (an_share_se times 1.96), in percentage
 * points.
 */
double html_share_pct(double s, double n);
double html_share_err_pct(const struct analysis *an, double s);

/* The profile's facts, its flat table and call graph as HTML. */
void html_profile_facts(const struct analysis *an, FILE *out);
/*
 * The sampled stacks as the script reads them: "funcs" (names, by index)
 * and "stacks" ([samples, state, tid, index...], root first).  The
 * indices are the analysis' node indices.
 */
void html_stacks_json(const struct analysis *an, FILE *out);
/*
 * One stack as the script reads it: [samples, state, tid, node...]; map
 * renumbers p's function indices (NULL: as they are).
 */
void html_stack_row(FILE *out, const struct meter_profile *p,
		    const struct meter_stack *s, const size_t *map, bool first);

#endif
