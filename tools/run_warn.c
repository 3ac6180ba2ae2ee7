// SPDX-License-Identifier: MIT
/*
 * What meter-run says of a run's profile before its report: where its
 * figures are not what they seem.
 */
#include <inttypes.h>
#include <stdio.h>

#include "run_collect.h"

/*
 * The slow path (a thunk and a C call) is meant for a thread's first call,
 * stacks past the shadow stack's capacity and resynchronising after
 * longjmp or an exception.  More than 1 % of the calls there means the
 * profile's costs are not the fast path's: say so, and the likely causes.
 */
void run_warn_slow_path(const struct meter_profile *p)
{
	uint64_t calls = 0;
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		calls += p->funcs[i].calls;
	if (p->slow_entries < 1000 || p->slow_entries * 100 <= calls)
		return;
	fprintf(stderr, "meter-run: %" PRIu64 " of %" PRIu64 " calls (%.1f %%) "
		"took libmeter's slow path: recursion deeper than %u "
		"frames, frequent longjmp or exceptions, or code built "
		"against an older <meter.h> (rebuild it)\n", p->slow_entries,
		calls, 100.0 * (double)p->slow_entries / (double)calls,
		(unsigned)METER_STACK_CAP);
}

/* The signal backend misses threads shorter than its tick: say how much. */
void run_warn_unsampled(const struct meter_profile *p)
{
	double sampled = (double)p->samples * (double)p->period_ns / 1e9;
	double missed = (double)p->unsampled_ns / 1e9;

	if (missed * 20 <= sampled)
		return;
	fprintf(stderr, "meter-run: %.3f s of CPU time ran between the signal "
		"backend's ticks and is not in the profile (%.3f s is): "
		"threads shorter than a scheduler tick are rarely sampled; "
		"the kernel backend (meter.ko) samples them\n", missed,
		sampled);
}
