// SPDX-License-Identifier: MIT
/*
 * The units of the tools' options and reports (units.h): percentages,
 * durations and seconds read from the command line, durations written.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

static int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || isnan(v) || isinf(v))
		return -1;
	*out = v;
	return (int)(end - s);
}

int parse_percent(const char *s, double *out)
{
	double v;
	int n = parse_double(s, &v);

	if (n < 0)
		return -1;
	if (s[n] == '%')
		n++;
	if (s[n] || v < 0 || v > 100)
		return -1;
	*out = v;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 },
		{ "ms", 1e6 }, { "s", 1e9 },
	};
	double v;
	int n = parse_double(s, &v);
	size_t i;

	if (n < 0 || v < 0 || s[0] == '-' || s[0] == '+')
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcasecmp(s + n, units[i].unit)) {
			double ns = v * units[i].ns;

			if (ns < 1 || ns > 1e18)
				return -1;
			*out = (uint64_t)(ns + 0.5);
			return 0;
		}
	}
	return -1;
}

int parse_seconds(const char *s, double *out)
{
	uint64_t ns;
	double v;
	int n = parse_double(s, &v);

	if (n > 0 && !s[n]) {
		if (v <= 0 || v > 1e9)
			return -1;
		*out = v;
		return 0;
	}
	if (parse_duration_ns(s, &ns))
		return -1;
	*out = (double)ns / 1e9;
	return 0;
}

void format_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ULL && ns % 1000000ULL == 0)
		snprintf(buf, len, "%g s", (double)ns / 1e9);
	else if (ns >= 1000000ULL && ns % 1000ULL == 0)
		snprintf(buf, len, "%g ms", (double)ns / 1e6);
	else if (ns >= 1000ULL)
		snprintf(buf, len, "%g us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
}
