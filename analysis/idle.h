/* SPDX-License-Identifier: MIT */
/*
 * Threads on wall-clock time (idle.c): a thread's samples on and off the
 * CPU, and a profile without the threads that spent most of their time
 * waiting (--hide-idle).  Internal to meter; not installed.
 */
#ifndef METER_IDLE_H
#define METER_IDLE_H

#include "profile.h"

/* t's samples in p's stacks, on the CPU and off it (runnable, blocked) */
void thread_split(const struct meter_profile *p,
		  const struct meter_thread_row *t, uint64_t *on,
		  uint64_t *off);

/*
 * A copy of wall-clock profile p without the threads that were on a CPU
 * less than pct % of their samples: their stacks leave every row (self,
 * off-CPU and total samples, the profile's samples), their rows leave the
 * threads, and the copy's idle_threads and idle_samples say how many and
 * how much.  Calls stay (they are counted per function, not per thread).
 * NULL when there is nothing to do (a CPU-time profile, pct 0, no threads;
 * *failed false) or on ENOMEM (*failed true).
 */
struct meter_profile *profile_without_idle(const struct meter_profile *p,
					   double pct, bool *failed);

#endif
