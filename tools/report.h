/* SPDX-License-Identifier: MIT */
/*
 * The tools' reports: the renderers (render_*.c), each over the analysis
 * (analysis.h) or the model, and render_profile(), which picks one.
 * Internal to meter; not installed.
 */
#ifndef METER_REPORT_H
#define METER_REPORT_H

#include "analysis.h"

enum report_format {
	FMT_TEXT,	/* flat profile, then call graph */
	FMT_FLAT,
	FMT_CALLGRAPH,
	FMT_METERING,
	FMT_JSON,
	FMT_FOLDED,
	FMT_PPROF,
	FMT_DOT,
	FMT_TOP,	/* per function: the interval beside the totals */
	FMT_HTML,	/* one self-contained page (render_html.c) */
};

/* A report's options: the analysis's, and the report's own. */
struct report_opts {
	enum report_format format;
	struct an_opts an;
	double threshold;	/* percent; rows below are not shown */
	bool threads;		/* a table of the threads' samples */
	enum attribution attrib;	/* where the samples go: by address
					   (the default), as taken, or
					   corrected (analysis.h) */
	double hide_idle;	/* percent: wall clock, threads on a CPU less
				   than this set aside (idle.h); 0: none */
};

/* The renderers (render_*.c).  Return 0 or -1 with errno set. */
struct interval;
/* max_rows: 0 for every row. */
int render_top(const struct interval *iv, const struct report_opts *o,
	       size_t max_rows, FILE *out);
int render_flat(const struct analysis *an, const struct report_opts *o,
		FILE *out);
int render_callgraph(const struct analysis *an, const struct report_opts *o,
		     FILE *out);
int render_metering(const struct analysis *an, const struct report_opts *o,
		    FILE *out);
int render_folded(const struct analysis *an, const struct report_opts *o,
		  FILE *out);
int render_pprof(const struct analysis *an, const struct report_opts *o,
		 FILE *out);
int render_dot(const struct analysis *an, const struct report_opts *o,
	       FILE *out);
int render_json(const struct meter_profile *p, FILE *out);
int render_html(const struct analysis *an, const struct report_opts *o,
		FILE *out);

/* Renders p in o->format.  Returns 0, or -1 with a message in err. */
int render_profile(const struct meter_profile *p, const struct report_opts *o,
		   FILE *out, char *err, size_t errlen);

/* The report options' names ("flat", "self" ...); 0, or -1 if unknown. */
int parse_format(const char *s, enum report_format *out);
int parse_order(const char *s, enum an_order *out);

#endif /* METER_REPORT_H */
