// SPDX-License-Identifier: MIT
/*
 * What a patched call costs, measured as libmeter measures its own call
 * (METERING's stub) and as the Python and Lua integrations measure
 * theirs: a 5-byte leaf called in a loop through a stub like every
 * patched function's (patch_install.c) and its unpatched twin, the best
 * of CALIB_ROUNDS rounds each way on the thread's CPU clock, once per
 * process when the first object is patched (about 2 ms).  The stub runs
 * on a scratch block, so that nothing of it reaches the profile.  The
 * difference a call is the whole cost of a patched call (the stub does
 * libmeter's part itself: meter_api_call_cost_whole), the jumps and the
 * return through the hook, which the CPU's return stack did not predict,
 * included.  The reports' estimate of meter's own cost then holds for
 * a patched program too.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "cputime.h"
#include "patch_runtime.h"

#define CALIB_CALLS	20000
#define CALIB_ROUNDS	5

static uint64_t best_loop(long (*volatile f)(long))
{
	uint64_t best = 0, t0, t;
	volatile long sink = 0;
	int i;
	long k;

	for (i = 0; i <= CALIB_ROUNDS; i++) {
		t0 = meter_thread_cpu_ns();
		for (k = 0; k < CALIB_CALLS; k++)
			sink += f(k);
		t = meter_thread_cpu_ns() - t0;
		if (i && (!best || t < best))	/* the first warms up */
			best = t;
	}
	return best;
}

static uint64_t patched_ps;	/* a patched call over a plain one */

void patch_calibrate(void)
{
	uint64_t hooked, plain, stub;
	struct meter_page *saved;
	size_t len, block = METER__BLOCK_BYTES;
	void *area, *scratch;

	if (patched_ps)
		return;
	stub = patch_calib_stub(&area, &len);
	if (!stub)
		return;
	scratch = mmap(NULL, block, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (scratch == MAP_FAILED) {
		munmap(area, len);
		return;
	}
	METER__SP_BELOW(scratch, 0) = UINTPTR_MAX;	/* sps[-1] */
	saved = meter__tls.page;
	meter__tls.page = scratch;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	hooked = best_loop((long (*)(long))(uintptr_t)stub);
	meter__tls.page = saved;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	plain = best_loop(meter_patch_calib_plain);
	munmap(scratch, block);
	munmap(area, len);
	patched_ps = hooked > plain ? (hooked - plain) * 1000 / CALIB_CALLS : 1;
	meter_api_call_cost_whole(patched_ps);
}
