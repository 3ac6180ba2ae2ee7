/* SPDX-License-Identifier: MIT */
/*
 * TAP in the ok() style for the libmeter tests not yet on
 * kselftest_harness.h, over lib_run.h's helpers.
 */
#ifndef LIB_TAP_H
#define LIB_TAP_H

#include "lib_run.h"

static int tap_n, tap_failed;

TAP_HELPER void __attribute__((format(printf, 2, 3))) ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
}

TAP_HELPER void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

TAP_HELPER int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/*
 * run_profile(), with "label: exits 0" as a test of its own.
 */
TAP_HELPER struct meter_profile *run_backend(const char *prog,
					     const char *backend,
					     const char *const *args,
					     char *out, size_t outlen,
					     const char *label,
					     const char *extra)
{
	int status;
	struct meter_profile *p = run_profile(prog, backend, args, out,
					      outlen, label, extra, &status);

	ok(status == 0, "%s: exits 0", label);
	return p;
}

#endif
