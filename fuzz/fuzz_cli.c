// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the parsers of the tools' option arguments, every one that
 * takes a string from the command line: parse_format, parse_order,
 * parse_percent, parse_duration_ns and parse_seconds (analysis/analysis.c:
 * -f, --order, --threshold, --hide-self, --hide-subs, --period, -F,
 * --periodic, meter-stat's interval) and cli_parse_selector (tools/cli.c:
 * meter-stat's PID|COOKIE).
 *
 * The input is one argument (an argv string ends at its first NUL).  Each
 * parser either refuses it or gives a value in the range its callers rely
 * on without checking again; format_duration() then prints what a
 * duration parsed to, as the reports do.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum report_format fmt = (enum report_format)-1;
	enum an_order ord = (enum an_order)-1;
	struct meter_nl_sel sel;
	char *s = malloc(size + 1), buf[64];
	uint64_t ns;
	double d;

	FUZZ_CHECK(s, "out of memory");
	memcpy(s, data, size);
	s[size] = '\0';

	if (!parse_format(s, &fmt))
		FUZZ_CHECK(fmt >= FMT_TEXT && fmt <= FMT_HTML,
			   "format %d out of the enum", (int)fmt);
	if (!parse_order(s, &ord))
		FUZZ_CHECK(ord > ORDER_DEFAULT && ord <= ORDER_TOPOLOGICAL,
			   "order %d out of the enum", (int)ord);
	if (!parse_percent(s, &d))
		FUZZ_CHECK(d >= 0 && d <= 100, "percent %g", d);
	if (!parse_duration_ns(s, &ns)) {
		FUZZ_CHECK(ns >= 1 && ns <= 1000000000000000000ULL,
			   "duration %llu ns", (unsigned long long)ns);
		format_duration(ns, buf, sizeof(buf));
		FUZZ_CHECK(buf[0] && strlen(buf) < sizeof(buf) - 1,
			   "duration printed as '%s'", buf);
	}
	if (!parse_seconds(s, &d))
		FUZZ_CHECK(isfinite(d) && d > 0 && d <= 1e9, "seconds %g", d);
	if (!cli_parse_selector(s, &sel))
		FUZZ_CHECK(sel.cookie ? !sel.pid :
			   sel.pid >= 1 && sel.pid <= 4194304,
			   "selector cookie %llu pid %d",
			   (unsigned long long)sel.cookie, (int)sel.pid);
	free(s);
	return 0;
}
