/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's CPU time, in nanoseconds: the clock the call-cost
 * calibrations of the runtime's integrations time their loops on (the
 * Python and Lua modules, libmeter-patch.so), as libmeter's own does.
 */
#ifndef METER_COMMON_CPUTIME_H
#define METER_COMMON_CPUTIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t meter_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* METER_COMMON_CPUTIME_H */
