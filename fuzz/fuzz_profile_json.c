// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the JSON profile reader, meter_profile_read_json()
 * (analysis/profile_json.c), what `meter-stat -i`, merge and diff, and
 * meter-run's signal backend read from files anyone may hand them.
 *
 * The reader promises a profile or NULL with one line saying why; a
 * profile it accepts then goes where meter-stat sends it (fuzz.h), since
 * an accepted file that a report or the writer trips over is the reader's
 * hole too.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct meter_profile *p;
	char err[300];
	FILE *in = fuzz_open(data, size);

	p = meter_profile_read_json(in, err, sizeof(err));
	fclose(in);
	if (!p) {
		/* an error is one line, so that meter-stat's stays one */
		FUZZ_CHECK(err[0] && !strchr(err, '\n'),
			   "a refusal without a one-line reason");
		return 0;
	}
	fuzz_consume(p);
	meter_profile_free(p);
	return 0;
}
