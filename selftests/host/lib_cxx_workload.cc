// SPDX-License-Identifier: MIT
/*
 * C++ exceptions through profiled frames.  Built with METER_FUNCTION()
 * (-DMODE_MANUAL) and with -finstrument-functions.
 *
 *   lib_cxx_workload K D     K times: recurse D deep in thrower(), throw
 *                            from the bottom, catch in catcher(); then spin
 *
 * Prints "depth=N" at the end: the shadow-stack depth seen from main.
 */
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "meter.h"

#ifdef MODE_MANUAL
#define PROFILED() METER_FUNCTION()
#else
#define PROFILED() do { } while (0)
#endif

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;
static volatile int do_throw = 1;

__attribute__((no_instrument_function)) static unsigned long cpu_ms()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000 + (unsigned long)ts.tv_nsec / 1000000;
}

NOINLINE static int leaf(int x)
{
	PROFILED();
	sink += (unsigned long)x;
	return x;
}

NOINLINE static int thrower(int d)
{
	PROFILED();
	if (d <= 1 && do_throw)
		throw std::runtime_error("bottom");
	return d > 1 ? thrower(d - 1) + 1 : 0;
}

NOINLINE static int catcher(int d)
{
	PROFILED();
	try {
		return thrower(d);
	} catch (const std::exception &) {
		return leaf(d);
	}
}

NOINLINE static void spin(unsigned long ms)
{
	PROFILED();
	unsigned long end = cpu_ms() + ms;

	while (cpu_ms() < end)
		sink++;
}

__attribute__((no_instrument_function)) static unsigned depth_now()
{
	const meter__page_hdr *pg =
		reinterpret_cast<const meter__page_hdr *>(meter__tls.page);

	return pg ? pg->depth : 0;
}

int main(int argc, char **argv)
{
	PROFILED();
	long k = argc > 1 ? atol(argv[1]) : 1000;
	long d = argc > 2 ? atol(argv[2]) : 20;

	for (long i = 0; i < k; i++)
		catcher((int)d);
	spin(50);
	printf("depth=%u\n", depth_now());
	return 0;
}
