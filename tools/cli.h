/* SPDX-License-Identifier: MIT */
/*
 * Command-line pieces shared by meter-run and meter-stat: the report
 * options (--format, -o, --order, --threshold, --inclusive/--exclusive,
 * --hide-self, --hide-subs), writing the report, and naming a session.
 */
#ifndef METER_TOOLS_CLI_H
#define METER_TOOLS_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "nldump.h"
#include "report.h"
#include "units.h"

enum {
	OPT_ORDER = 0x100,
	OPT_THRESHOLD,
	OPT_INCLUSIVE,
	OPT_EXCLUSIVE,
	OPT_HIDE_SELF,
	OPT_HIDE_SUBS,
	OPT_THREADS,
	OPT_CORRECT,
	OPT_NO_CORRECTION,
	OPT_WHOLE_NAMES,
	OPT_HIDE_IDLE,
	OPT_CLI_LAST,
};

#define CLI_REPORT_LONGOPTS						\
	{ "format", required_argument, NULL, 'f' },			\
	{ "output", required_argument, NULL, 'o' },			\
	{ "order", required_argument, NULL, OPT_ORDER },		\
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },	\
	{ "inclusive", no_argument, NULL, OPT_INCLUSIVE },		\
	{ "exclusive", no_argument, NULL, OPT_EXCLUSIVE },		\
	{ "hide-self", required_argument, NULL, OPT_HIDE_SELF },	\
	{ "hide-subs", required_argument, NULL, OPT_HIDE_SUBS },	\
	{ "threads", no_argument, NULL, OPT_THREADS },			\
	{ "correct", no_argument, NULL, OPT_CORRECT },			\
	{ "no-correction", no_argument, NULL, OPT_NO_CORRECTION },	\
	{ "whole-names", no_argument, NULL, OPT_WHOLE_NAMES },		\
	{ "hide-idle", required_argument, NULL, OPT_HIDE_IDLE }

#define CLI_REPORT_HELP							\
"Report options:\n"							\
"  -f, --format FMT     text (flat profile and call graph, default), flat,\n" \
"                       callgraph, metering, json, folded, pprof, dot,\n" \
"                       top (per function: calls and samples), html (one\n" \
"                       page: tables, call graph, flame graph)\n"	\
"  -o, --output FILE    write the report to FILE\n"			\
"      --order KEY      self, total, calls, name or topological\n"	\
"      --threshold PCT  leave out functions below PCT %% of the time\n"	\
"      --inclusive      METERING table: time includes callees\n"	\
"      --exclusive      METERING table: time excludes callees (default)\n" \
"      --hide-self PCT  call graph: hide a function whose self time is\n" \
"                       below PCT %% ...\n"				\
"      --hide-subs PCT  ... and whose every edge is below PCT %%\n"	\
"      --threads        flat, metering and top: a table of the threads'\n" \
"                       samples\n"					\
"      --correct        take the instrumentation's estimated cost out of\n" \
"                       the functions' times (Documentation/libmeter.md,\n" \
"                       \"Correction\"); the totals stay as measured\n" \
"      --no-correction  each sample to the function current at it, as\n" \
"                       taken (the default reads the samples' addresses,\n" \
"                       where the profile has them: meter's own\n"	\
"                       instructions out, each sample to the function it\n" \
"                       fell in)\n"					\
"      --whole-names    C++ names with their parameter lists and whole\n" \
"                       template arguments (default: short where unique)\n" \
"      --hide-idle PCT  wall clock: set aside the threads that were on a\n" \
"                       CPU less than PCT %% of their time\n"

struct cli_report {
	struct report_opts ro;
	bool format_set;	/* -f given */
	const char *output;	/* NULL: stdout */
};

extern const char *cli_prog;	/* for messages: "meter-run" */

void cli_report_init(struct cli_report *r);
/*
 * Handles a report option.  Returns 1 if c was one (0 if not); on a bad
 * argument prints a message and exits with status 2.
 */
int cli_report_option(struct cli_report *r, int c, const char *arg);

/* Opens r->output (close-on-exec) or returns stdout; NULL on error. */
FILE *cli_open_output(const struct cli_report *r);
/* Renders p into out (closing it unless stdout).  0 or -1 (reported). */
int cli_write_report(const struct meter_profile *p,
		     const struct cli_report *r, FILE *out);


/* "1234" is a pid, "0x..." or a number above any pid is a cookie. */
int cli_parse_selector(const char *s, struct meter_nl_sel *sel);

/*
 * Merges p into *all (made on first use) and frees p.  0, or -1 after
 * saying why on stderr (out of memory, or clocks that do not mix).
 */
int cli_merge_into(struct meter_profile **all, struct meter_profile *p);

/* CLOCK_BOOTTIME in nanoseconds, the clock of the sessions' times. */
uint64_t cli_boottime_ns(void);

/*
 * The build directory when this tool runs from it (build/tools/NAME, and
 * build/REL exists): its path in out, 0; else -1 (an installed tool).
 */
int cli_build_tree(const char *rel, char *out, size_t outlen);

void cli_die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif
