// SPDX-License-Identifier: MIT
/*
 * Overhead calibration, as METERING does it with its stub function: time
 * an empty function with and without METER_FUNCTION's enter and leave and
 * take the difference per call.  Runs once per process, on the first
 * thread, before sampling starts; a few milliseconds.
 */
#include "meter_internal.h"

#define CALIB_CALLS 100000
#define CALIB_ROUNDS 5

static struct meter_record calib_rec = {
	.id = METER_CALIB_ID,
	.magic = METER__RECORD_MAGIC,
	.name = "meter_calibration_stub",
};

static __attribute__((noinline, noipa)) void stub_plain(void)
{
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline, noipa)) void stub_metered(void)
{
	struct meter__frame f __attribute__((cleanup(meter__leave)));

	meter__enter(&calib_rec, &f);
	__asm__ volatile("" ::: "memory");
}

static uint64_t time_calls(void (*fn)(void))
{
	uint64_t t0 = meter_now_ns(CLOCK_THREAD_CPUTIME_ID);
	int i;

	for (i = 0; i < CALIB_CALLS; i++)
		fn();
	return meter_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

uint64_t meter_calibrate(void)
{
	uint64_t best_plain = UINT64_MAX, best_metered = UINT64_MAX, t;
	int r;

	for (r = 0; r < CALIB_ROUNDS; r++) {
		t = time_calls(stub_plain);
		if (t < best_plain)
			best_plain = t;
		t = time_calls(stub_metered);
		if (t < best_metered)
			best_metered = t;
	}
	meter__tls.counts[METER_CALIB_ID] = 0;
	if (best_metered <= best_plain)
		return 1;	/* below resolution; 0 would mean unknown */
	return (best_metered - best_plain) * 1000 / CALIB_CALLS;
}
