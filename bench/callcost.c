// SPDX-License-Identifier: MIT
/*
 * Per-call cost of profiling instrumentation: a loop calling a tiny
 * function N times.  Built by bench/callcost.sh as:
 *   baseline   no instrumentation
 *   manual     METER_FUNCTION() in the callee (-DMETER_MANUAL)
 *   flat       METER_FUNCTION() made flat (-DMETER_MANUAL -DMETER_FLAT)
 *   appel      Appel's scheme written by hand (-DAPPEL_REF): the callee
 *              increments a global call count and stores its id into a
 *              global current word; the caller stores its own id back
 *              after the call.  Nothing else: the reference cost.
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
#elif defined(APPEL_REF)
unsigned long appel_calls;	/* CC of callee */
unsigned appel_current;		/* what the sampler would read */
#define PROFILED() do { appel_calls++; appel_current = 2; } while (0)
#define RETURNED() do { appel_current = 1; } while (0)
#else
#define PROFILED() do { } while (0)
#endif
#ifndef RETURNED
#define RETURNED() do { } while (0)
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
	for (i = 0; i < n; i++) {
		callee(i);
		RETURNED();
	}
	t1 = now();
	printf("%.2f ns/call\n", (t1 - t0) / (double)n);
	return 0;
}
