/* SPDX-License-Identifier: MIT */
/* meter-stat diff's report: tools/render_diff.c over analysis/diff.c. */
#ifndef METER_TOOLS_RENDER_DIFF_H
#define METER_TOOLS_RENDER_DIFF_H

#include <stdio.h>

#include "analysis.h"

/*
 * base against new in o->format (text; json; html), with the correction
 * as o->attrib says.  0, or -1 with a one-line reason in err.
 */
int render_diff(const struct meter_profile *base,
		const struct meter_profile *new, const struct report_opts *o,
		FILE *out, char *err, size_t errlen);

#endif
