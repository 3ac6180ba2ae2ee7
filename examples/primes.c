// SPDX-License-Identifier: MIT
/*
 * primes: Appel's example of where gprof's caller attribution goes wrong.
 *
 *   primes [N]         (default 10000)
 *
 * f() asks is_prime() about large numbers (expensive calls), g() asks it
 * about small ones (cheap calls), equally often.  gprof splits
 * is_prime()'s time between f and g by call counts, 50/50; meter's shadow
 * stack attributes it exactly: nearly all of it to f.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <meter.h>

static bool __attribute__((noinline)) is_prime(uint64_t n)
{
	METER_FUNCTION();
	if (n < 2)
		return false;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

/* Expensive calls: numbers around 10^10 (trial division to ~10^5). */
static long __attribute__((noinline)) f(long n)
{
	METER_FUNCTION();
	long count = 0;
	for (long i = 0; i < n; i++)
		count += is_prime(10000000000ULL + (uint64_t)i);
	return count;
}

/* Cheap calls: small numbers. */
static long __attribute__((noinline)) g(long n)
{
	METER_FUNCTION();
	long count = 0;
	for (long i = 0; i < n; i++)
		count += is_prime((uint64_t)(i % 100));
	return count;
}

int main(int argc, char **argv)
{
	METER_FUNCTION();
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;

	if (n < 1) {
		fprintf(stderr, "usage: primes [N >= 1]\n");
		return 2;
	}
	long a = f(n);
	long b = g(n);
	printf("primes: f found %ld, g found %ld\n", a, b);
	return 0;
}
