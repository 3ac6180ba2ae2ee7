/* SPDX-License-Identifier: MIT */
/*
 * The units of the tools' options and reports (units.c).  Internal to
 * meter; not installed.
 */
#ifndef METER_UNITS_H
#define METER_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* 0, or -1 when s is not one (a message is the caller's). */
int parse_percent(const char *s, double *out);
/* "1ms", "100us", "250000ns", "0.5s", a bare number is nanoseconds. */
int parse_duration_ns(const char *s, uint64_t *out);
int parse_seconds(const char *s, double *out);
/* A short human form: "1 ms", "100 us", "1.5 s". */
void format_duration(uint64_t ns, char *buf, size_t len);

#endif /* METER_UNITS_H */
