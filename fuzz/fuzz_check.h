/* SPDX-License-Identifier: MIT */
/*
 * A fuzz target's promise (Documentation/fuzzing.md), apart from fuzz.h,
 * so that the targets of code that never sees the analysis (libmeter's
 * calibration cache, the patcher's ELF reader) use it too.
 */
#ifndef METER_FUZZ_CHECK_H
#define METER_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* A broken promise is a crash: libFuzzer keeps the input that aborted. */
#define FUZZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz: %s:%d: ", __FILE__,	\
				__LINE__);				\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

#endif /* METER_FUZZ_CHECK_H */
