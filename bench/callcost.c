// SPDX-License-Identifier: MIT
/*
 * Per-call cost of profiling instrumentation: a loop calling a tiny
 * function N times.  Built by bench/callcost.sh as:
 *   baseline   no instrumentation
 *   manual     METER_FUNCTION() in the callee (-DMETER_MANUAL)
 *   auto       -finstrument-functions, linked with -lmeter
 *   gprof      -pg (glibc's mcount)
 *   uftrace    -pg, run under `uftrace record`
 * Prints ns per call of the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef METER_MANUAL
#include "meter.h"
#define PROFILED() METER_FUNCTION()
#else
#define PROFILED() do { } while (0)
#endif

static volatile unsigned long sink;

__attribute__((noinline, noclone)) static void callee(unsigned long i)
{
	PROFILED();
	sink += i;
}

__attribute__((no_instrument_function)) static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 10000000UL;
	unsigned long i;
	double t0, t1;

	callee(0);	/* registration and first-call work out of the loop */
	t0 = now();
	for (i = 0; i < n; i++)
		callee(i);
	t1 = now();
	printf("%.2f ns/call\n", (t1 - t0) / (double)n);
	return 0;
}
