// SPDX-License-Identifier: MIT
/*
 * Appel's example, instrumented with libmeter: f and g call is_prime
 * equally often, f with large primes (expensive calls), g with small ones
 * (cheap calls).  A profiler that apportions is_prime's time by call
 * counts charges half of it to each; meter charges it to f.
 *
 *   tools_appel [ROUNDS]     (default 1000)
 *
 * Used by the tools' host tests (signal backend) and VM tests (kernel).
 */
#include <stdio.h>
#include <stdlib.h>

#include "meter.h"

/* Built twice: manual (METER_FUNCTION) and -finstrument-functions. */
#ifdef APPEL_AUTO
#define PROFILED()
#else
#define PROFILED() METER_FUNCTION()
#endif

static volatile unsigned long sink;

__attribute__((noinline)) static int is_prime(unsigned long n)
{
	unsigned long i;

	PROFILED();
	if (n < 2)
		return 0;
	for (i = 2; i * i <= n; i++)
		if (n % i == 0)
			return 0;
	return 1;
}

/* Expensive calls: primes near 10^10 take ~10^5 divisions each. */
__attribute__((noinline)) static void f(void)
{
	PROFILED();
	sink += (unsigned long)is_prime(9999999967UL);
}

/* Cheap calls: a small prime. */
__attribute__((noinline)) static void g(void)
{
	PROFILED();
	sink += (unsigned long)is_prime(101UL);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	long i;

	PROFILED();
	for (i = 0; i < rounds; i++) {
		f();
		g();
	}
	printf("tools_appel: %ld rounds, sink %lu\n", rounds, sink);
	return 0;
}
