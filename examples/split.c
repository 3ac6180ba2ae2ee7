// SPDX-License-Identifier: MIT
/*
 * split: a program whose CPU time splits 50/30/20 between three
 * functions, the demo of `make demo`.
 *
 *   split [UNITS]      UNITS of work in all (default 4000)
 *
 * main() hands out UNITS units of work: half to heavy(), 30% to medium(),
 * 20% to light(); each unit is the same loop, spin(), which is inlined
 * away into its caller's time by its static inline.  A flat profile should
 * show about 50 / 30 / 20 % self time and calls in the ratio of the units
 * (heavy is called in chunks of 5 units, medium of 3, light of 2, so each
 * is called UNITS / 10 times).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <meter.h>

/* light()'s units; another value makes the changed build that
 * meter-stat diff's test compares against (selftests/host/tools.mk) */
#ifndef SPLIT_LIGHT_UNITS
#define SPLIT_LIGHT_UNITS 2
#endif

/* One unit of CPU work, a fixed number of multiply-adds. */
static inline uint64_t spin(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static uint64_t __attribute__((noinline)) heavy(uint64_t x)
{
	METER_FUNCTION();
	for (int u = 0; u < 5; u++)
		x = spin(x);
	return x;
}

static uint64_t __attribute__((noinline)) medium(uint64_t x)
{
	METER_FUNCTION();
	for (int u = 0; u < 3; u++)
		x = spin(x);
	return x;
}

static uint64_t __attribute__((noinline)) light(uint64_t x)
{
	METER_FUNCTION();
	for (int u = 0; u < SPLIT_LIGHT_UNITS; u++)
		x = spin(x);
	return x;
}

int main(int argc, char **argv)
{
	METER_FUNCTION();
	long units = argc > 1 ? strtol(argv[1], NULL, 10) : 4000;
	uint64_t x = 1;

	if (units < 10) {
		fprintf(stderr, "usage: split [UNITS >= 10]\n");
		return 2;
	}
	for (long r = 0; r < units / 10; r++) {
		x = heavy(x);
		x = medium(x);
		x = light(x);
	}
	/* Print the result so that the work cannot be optimised away. */
	printf("split: %ld units, checksum %016llx\n", units,
	       (unsigned long long)x);
	return 0;
}
