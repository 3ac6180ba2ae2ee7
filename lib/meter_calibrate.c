// SPDX-License-Identifier: MIT
/*
 * Overhead calibration, as METERING does it with its stub function: time
 * an empty function with and without the instrumentation and take the
 * difference per call.  The instrumentation is METER_FUNCTION's inline
 * path, or, when the program's first profiled call came through the
 * -finstrument-functions hooks, the two hook calls a compiler emits; and
 * the flat path (METER_FUNCTION_FLAT, the plugin's leaves).  It is
 * measured once per machine and kept (meter_calib_cache.c): a process
 * finds its figures there in a few thousand instructions, and only one
 * whose key (libmeter's build, the CPU, the kernel, the mode) is not there
 * yet measures, on the first thread, before sampling starts: 30 million
 * instructions, about 10 ms.  The stub's id is reserved: it never appears
 * in a profile.
 */
#include "meter_internal.h"

#define CALIB_CALLS 100000
#define CALIB_ROUNDS 10

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

/*
 * At least 1: 0 means unknown (the cache keeps no such line).  The flat
 * path's few loads and stores often overlap the call itself: its
 * difference ranges from 3 ps to 300 ps a call between runs here, and
 * below 1 ps it used to round to 0, which left the figures unkept.
 */
static uint64_t per_call_ps(uint64_t best, uint64_t plain)
{
	uint64_t ps = best > plain ? (best - plain) * 1000 / CALIB_CALLS : 0;

	return ps ? ps : 1;
}

static uint64_t measure(bool automatic, uint64_t *flat_ps, uint64_t *plain_ps)
{
	uint64_t best_plain = UINT64_MAX, best_metered = UINT64_MAX, t;
	uint64_t best_flat = UINT64_MAX;
	void (*metered)(void) = automatic ? stub_hooked : stub_metered;
	int r;

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
	*plain_ps = per_call_ps(best_plain, 0);
	return per_call_ps(best_metered, best_plain);
}

/*
 * Whether this process runs at the speed the kept figures were measured
 * at: the uninstrumented loop, timed in short rounds (CHECK_CALLS calls,
 * the clock's own cost taken out), the fastest round within a factor of
 * CHECK_SLACK of the kept time.  That catches what the key cannot name: a
 * run under valgrind, another clock speed, another machine.  A round is
 * charged whatever interrupts it, so rounds only ever read slow: the
 * fastest of several is the machine's speed.  The clock's cost is read in
 * every round too, and the fastest of those taken out: read once at the
 * start, a slow moment there (the host busy) made every round read fast,
 * and a figure kept at a tenth of this machine's speed was once taken.
 * The fastest of the first CHECK_MIN_ROUNDS decides, unless it is slower
 * than the band: when the first slowed round within the band decided,
 * figures kept on a machine four times slower were taken 2 runs in 100
 * with another core busy.  A busy moment has to slow all CHECK_ROUNDS
 * rounds (about 0.1 ms) to send the figures to be measured again.
 */
#define CHECK_CALLS 1000
#define CHECK_MIN_ROUNDS 8
#define CHECK_ROUNDS 64
#define CHECK_SLACK 2

static bool same_speed(uint64_t plain_ps)
{
	uint64_t clock_ns = UINT64_MAX, loop_ns = UINT64_MAX, t0, t, now_ps;
	int r, i;

	for (r = 0; r <= CHECK_ROUNDS; r++) {
		t0 = meter_now_ns(CLOCK_THREAD_CPUTIME_ID);
		t = meter_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (t < clock_ns)
			clock_ns = t;
		t0 = meter_now_ns(CLOCK_THREAD_CPUTIME_ID);
		for (i = 0; i < CHECK_CALLS; i++)
			stub_plain();
		t = meter_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (r == 0)
			continue;	/* warms the loop and its page */
		if (t < loop_ns)
			loop_ns = t;
		if (r < CHECK_MIN_ROUNDS)
			continue;
		now_ps = (loop_ns > clock_ns ? loop_ns - clock_ns : 0) * 1000 /
			 CHECK_CALLS;
		if (now_ps * CHECK_SLACK < plain_ps)
			return false;	/* faster than the band */
		if (now_ps <= plain_ps * CHECK_SLACK)
			return true;
	}
	return false;
}

uint64_t meter_calibrate(bool automatic, uint64_t *flat_ps)
{
	uint64_t ps, plain_ps;

	if (automatic)
		meter_auto_reserve((uintptr_t)stub_hooked, METER_CALIB_ID);
	if (meter_calib_cached(automatic, &ps, flat_ps, &plain_ps) &&
	    same_speed(plain_ps))
		return ps;
	ps = measure(automatic, flat_ps, &plain_ps);
	meter_calib_store(automatic, ps, *flat_ps, plain_ps);
	return ps;
}
