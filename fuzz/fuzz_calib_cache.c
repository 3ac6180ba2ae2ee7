// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the calibration cache's line parser, parse_line() of
 * lib/meter_calib_cache.c.  The cache file lives in the user's home
 * (~/.cache/meter/calibration), where any program of the user's may write
 * it, and every profiled process reads it at start-up: a line that breaks
 * the parser breaks every profiled program.
 *
 * The input is the file: cut at the size libmeter reads and split into
 * lines as meter_calib_cached() does.  A line that parses must hold the
 * figures the file promises (a key, three figures from 1 to PS_MAX), and
 * the line meter_calib_store() writes back from them must parse to the
 * same.  parse_line() is static, so the file is compiled in here.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
/*
 * meter.h's declarations without its constructor, which registers records
 * this program has none of (and, its weak section bounds then being NULL,
 * is an offset from NULL to UBSan before the first input).
 */
#define METER__LAYOUT_ONLY 1
#include "../lib/meter_calib_cache.c"

/* The one symbol of libmeter's that the file needs: make_key()'s anchor. */
uint64_t meter_calibrate(bool automatic, uint64_t *flat_ps)
{
	(void)automatic;
	*flat_ps = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *line, *save, *key, again[KEY_MAX + 3 * 24];
	size_t n = size < CACHE_BYTES ? size : CACHE_BYTES;
	uint64_t v[3], w[3];
	char *key2;
	int k;

	buf = malloc(n + 1);
	FUZZ_CHECK(buf, "out of memory");
	memcpy(buf, data, n);
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!parse_line(line, &key, v))
			continue;
		FUZZ_CHECK(key == line && *key && strlen(key) < KEY_MAX &&
			   !strchr(key, ' '), "a key out of shape");
		for (k = 0; k < 3; k++)
			FUZZ_CHECK(v[k] >= 1 && v[k] <= PS_MAX,
				   "a figure out of range");
		snprintf(again, sizeof(again), "%s %" PRIu64 " %" PRIu64
			 " %" PRIu64, key, v[0], v[1], v[2]);
		FUZZ_CHECK(parse_line(again, &key2, w) && !strcmp(key2, key) &&
			   !memcmp(v, w, sizeof(v)),
			   "the line written back does not parse the same");
	}
	free(buf);
	return 0;
}
