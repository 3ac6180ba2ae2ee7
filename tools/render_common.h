/* SPDX-License-Identifier: MIT */
/* Pieces that several renderers print the same way. */
#ifndef METER_TOOLS_RENDER_COMMON_H
#define METER_TOOLS_RENDER_COMMON_H

#include <stdio.h>

#include "report.h"
#include "units.h"

/* The lines that say what was profiled and how (period, samples...). */
void render_header(const struct analysis *an, FILE *out);

/* With --threads: each thread's samples and share. */
void render_threads(const struct analysis *an, const struct report_opts *o,
		    FILE *out);

/*
 * A thread's name as the tables show it: its own, or for the row of ended
 * threads meter.ko folded together, "(N ended)".  buf has 32 bytes.
 */
const char *thread_label(const struct meter_thread_row *t, char *buf);

/* Prints s left-aligned in width columns, counting UTF-8 characters. */
void put_padded(FILE *out, const char *s, int width);

#endif
