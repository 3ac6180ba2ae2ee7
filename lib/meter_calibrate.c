// SPDX-License-Identifier: MIT
/*
 * Overhead calibration, as METERING does it with its stub function: time
 * an empty function with and without the instrumentation and take the
 * difference per call.  The instrumentation is METER_FUNCTION's inline
 * path, or, when the program's first profiled call came through the
 * -finstrument-functions hooks, the two hook calls a compiler emits; and
 * the flat path (METER_FUNCTION_FLAT, the plugin's leaves).  Runs
 * once per process, on the first thread, before sampling starts; a few
 * milliseconds.  The stub's id is reserved: it never appears in a profile.
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

static __attribute__((noinline, noipa)) void stub_flat(void)
{
	struct meter__frame f __attribute__((cleanup(meter__leave_flat))) =
		meter__enter_flat(&calib_rec);

	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline, noipa)) void stub_metered(void)
{
	struct meter__frame f __attribute__((cleanup(meter__leave))) =
		meter__enter(&calib_rec);

	__asm__ volatile("" ::: "memory");
}

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

/* What -finstrument-functions makes of an empty function. */
static __attribute__((noinline, noipa)) void stub_hooked(void)
{
	__cyg_profile_func_enter((void *)stub_hooked,
				 __builtin_return_address(0));
	__asm__ volatile("" ::: "memory");
	__cyg_profile_func_exit((void *)stub_hooked,
				__builtin_return_address(0));
}

static uint64_t time_calls(void (*fn)(void))
{
	uint64_t t0 = meter_now_ns(CLOCK_THREAD_CPUTIME_ID);
	int i;

	for (i = 0; i < CALIB_CALLS; i++)
		fn();
	return meter_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static uint64_t per_call_ps(uint64_t best, uint64_t plain)
{
	if (best <= plain)
		return 1;	/* below resolution; 0 would mean unknown */
	return (best - plain) * 1000 / CALIB_CALLS;
}

uint64_t meter_calibrate(bool automatic, uint64_t *flat_ps)
{
	uint64_t best_plain = UINT64_MAX, best_metered = UINT64_MAX, t;
	uint64_t best_flat = UINT64_MAX;
	void (*metered)(void) = automatic ? stub_hooked : stub_metered;
	int r;

	if (automatic)
		meter_auto_reserve((uintptr_t)stub_hooked, METER_CALIB_ID);
	for (r = 0; r < CALIB_ROUNDS; r++) {
		t = time_calls(stub_plain);
		if (t < best_plain)
			best_plain = t;
		t = time_calls(metered);
		if (t < best_metered)
			best_metered = t;
		t = time_calls(stub_flat);
		if (t < best_flat)
			best_flat = t;
	}
	meter_counts()[METER_CALIB_ID] = 0;
	*flat_ps = per_call_ps(best_flat, best_plain);
	return per_call_ps(best_metered, best_plain);
}
