// SPDX-License-Identifier: MIT
/*
 * The GCC plugin's corner cases, in one program built with
 * -fplugin=build/plugin/meter.so (selftests/host/lib.mk):
 *
 *   lib_plugin_corners N
 *
 * Each function below is called a known number of times; main prints
 * "depth=D" (the shadow-stack depth seen from main) and "early=E" (calls
 * made before libmeter's and the records' constructors ran) at the end.
 *
 *   tail_a -> tail_b   a sibling call (-O2 makes it a jmp without meter)
 *   vsum               variadic
 *   bail               noreturn, leaves by longjmp
 *   twice              recursive (a cycle: twice -> twice)
 *   leaf_flat          no calls: the flat form (leaf rule)
 *   untouched          __attribute__((no_instrument_function))
 *   skipped_by_arg     left out with -fplugin-arg-meter-exclude-function
 *   in_dso             a function of a shared library built with the plugin
 *   early_fn           called from .preinit_array (before libmeter's
 *                      constructors) and a
 *                      constructor of the records' priority (101)
 *   spin_here          burns CPU under main;tail_a;tail_b;spin_here
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "meter.h"

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;
static jmp_buf jb;
static int early_calls;

int in_dso(int x);

NOINLINE static void early_fn(void)
{
	early_calls++;
	sink++;
}

static void preinit(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv, (void)envp;
	early_fn();
}
__attribute__((section(".preinit_array"), used))
static void (*const preinit_p)(int, char **, char **) = preinit;

__attribute__((constructor(101))) static void early_ctor(void)
{
	early_fn();
	early_fn();
}

__attribute__((no_instrument_function)) static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static void spin_here(double s)
{
	double end = cpu_s() + s;

	while (cpu_s() < end)
		sink++;
}

NOINLINE static void leaf_flat(int i)
{
	sink += (unsigned long)i;
}

NOINLINE int tail_b(int x, double s)
{
	if (s > 0)
		spin_here(s);
	return x + (int)sink;
}

/* -O2 turns the call into a jump when nothing follows it */
NOINLINE int tail_a(int x, double s)
{
	sink++;
	return tail_b(x + 1, s);
}

NOINLINE static long vsum(int n, ...)
{
	va_list ap;
	long s = 0;

	va_start(ap, n);
	while (n-- > 0)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

NOINLINE __attribute__((noreturn)) static void bail(int v)
{
	longjmp(jb, v);
}

NOINLINE static int twice(int n)
{
	return n <= 0 ? 0 : 1 + twice(n - 1);
}

__attribute__((no_instrument_function)) NOINLINE static void untouched(void)
{
	leaf_flat(1);
}

NOINLINE static void skipped_by_arg(void)
{
	leaf_flat(2);
}

__attribute__((no_instrument_function)) static unsigned depth_now(void)
{
	const struct meter__page_hdr *pg =
		(const struct meter__page_hdr *)meter__tls.page;

	return pg ? pg->depth : 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	volatile int i;
	/* read after longjmp: volatile, as C asks of a local that lives
	 * across setjmp (GCC's -Wclobbered says so where it is kept in a
	 * register) */
	volatile long total = 0;

	for (i = 0; i < n; i++) {
		total += tail_a(i, 0);
		total += vsum(3, 1, 2, 3);
		if (!setjmp(jb))
			bail(1);
		total += twice(4);
		leaf_flat(i);
		untouched();
		skipped_by_arg();
		total += in_dso(i);
	}
	tail_a(0, 0.3);
	printf("total=%ld\n", total);
	printf("early=%d\n", early_calls);
	printf("depth=%u\n", depth_now());
	return 0;
}
