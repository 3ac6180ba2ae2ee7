// SPDX-License-Identifier: MIT
/* Command-line pieces shared by meter-run and meter-stat (cli.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char *cli_prog = "meter";

int cli_build_tree(const char *rel, char *out, size_t outlen)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (!slash || strcmp(slash, "/tools"))
		return -1;
	*slash = '\0';
	snprintf(probe, sizeof(probe), "%s/%s", exe, rel);
	if (access(probe, R_OK) || (size_t)snprintf(out, outlen, "%s", exe) >= outlen)
		return -1;
	return 0;
}

void cli_die_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", cli_prog);
	exit(2);
}

void cli_report_init(struct cli_report *r)
{
	memset(r, 0, sizeof(*r));
	r->ro.format = FMT_TEXT;
	r->ro.an.order = ORDER_DEFAULT;
}

int cli_report_option(struct cli_report *r, int c, const char *arg)
{
	switch (c) {
	case 'f':
		if (parse_format(arg, &r->ro.format))
			cli_die_usage("unknown format '%s' (text, flat, "
				      "callgraph, metering, json, folded, "
				      "pprof, dot, top, html)", arg);
		r->format_set = true;
		return 1;
	case 'o':
		if (!*arg)
			cli_die_usage("-o needs a file name");
		r->output = arg;
		return 1;
	case OPT_ORDER:
		if (parse_order(arg, &r->ro.an.order))
			cli_die_usage("unknown order '%s' (self, total, calls, "
				      "name, topological)", arg);
		return 1;
	case OPT_THRESHOLD:
		if (parse_percent(arg, &r->ro.threshold))
			cli_die_usage("--threshold wants a percentage from 0 "
				      "to 100, not '%s'", arg);
		return 1;
	case OPT_INCLUSIVE:
		r->ro.an.inclusive = true;
		return 1;
	case OPT_EXCLUSIVE:
		r->ro.an.inclusive = false;
		return 1;
	case OPT_HIDE_SELF:
		if (parse_percent(arg, &r->ro.an.hide_self))
			cli_die_usage("--hide-self wants a percentage from 0 "
				      "to 100, not '%s'", arg);
		return 1;
	case OPT_THREADS:
		r->ro.threads = true;
		return 1;
	case OPT_CORRECT:
		r->ro.attrib = ATTRIB_CORRECTED;
		return 1;
	case OPT_NO_CORRECTION:
		r->ro.attrib = ATTRIB_AS_TAKEN;
		return 1;
	case OPT_WHOLE_NAMES:
		r->ro.an.whole_names = true;
		return 1;
	case OPT_HIDE_IDLE:
		if (parse_percent(arg, &r->ro.hide_idle))
			cli_die_usage("--hide-idle wants a percentage from 0 "
				      "to 100, not '%s'", arg);
		return 1;
	case OPT_HIDE_SUBS:
		if (parse_percent(arg, &r->ro.an.hide_subs))
			cli_die_usage("--hide-subs wants a percentage from 0 "
				      "to 100, not '%s'", arg);
		return 1;
	}
	return 0;
}

FILE *cli_open_output(const struct cli_report *r)
{
	FILE *f;

	if (!r->output || !strcmp(r->output, "-")) {
		if (r->ro.format == FMT_PPROF && isatty(STDOUT_FILENO)) {
			fprintf(stderr, "%s: the pprof format is binary; "
				"write it to a file with -o FILE\n", cli_prog);
			return NULL;
		}
		return stdout;
	}
	f = fopen(r->output, "we");
	if (!f)
		fprintf(stderr, "%s: cannot write %s: %s\n", cli_prog,
			r->output, strerror(errno));
	return f;
}

int cli_write_report(const struct meter_profile *p,
		     const struct cli_report *r, FILE *out)
{
	char err[256];
	int ret;

	ret = render_profile(p, &r->ro, out, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s: %s%s%s\n", cli_prog,
			r->output ? r->output : "", r->output ? ": " : "",
			err);
	if (out != stdout) {
		if (fclose(out) && !ret) {
			fprintf(stderr, "%s: %s: %s\n", cli_prog, r->output,
				strerror(errno));
			ret = -1;
		}
	} else if (fflush(stdout) && !ret) {
		fprintf(stderr, "%s: stdout: %s\n", cli_prog, strerror(errno));
		ret = -1;
	}
	return ret;
}

int cli_parse_selector(const char *s, struct meter_nl_sel *sel)
{
	unsigned long long v;
	char *end;
	int base = 10;

	memset(sel, 0, sizeof(*sel));
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		base = 16;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || end == s || !v)
		return -1;
	/* pid_max is at most 2^22 on Linux. */
	if (base == 16 || v > 4194304ULL)
		sel->cookie = v;
	else
		sel->pid = (int32_t)v;
	return 0;
}

uint64_t cli_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int cli_merge_into(struct meter_profile **all, struct meter_profile *p)
{
	int ret = 0;

	if (!*all)
		*all = meter_profile_new();
	if (!*all || meter_profile_merge(*all, p)) {
		fprintf(stderr, "%s: %s\n", cli_prog,
			meter_profile_merge_strerror(*all ? errno : ENOMEM));
		ret = -1;
	}
	meter_profile_free(p);
	return ret;
}
