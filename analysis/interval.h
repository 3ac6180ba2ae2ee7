/* SPDX-License-Identifier: MIT */
/*
 * What changed between two snapshots of one session: per function, the
 * samples and calls of the interval beside the totals (meter-stat watch).
 * Internal to meter; not installed.
 */
#ifndef METER_INTERVAL_H
#define METER_INTERVAL_H

#include "analysis.h"

struct interval_row {
	const struct meter_func *f;	/* in the newer profile */
	uint64_t self, calls;		/* during the interval */
};

struct interval_thread {
	const struct meter_thread_row *t;	/* in the newer profile */
	uint64_t samples;			/* during the interval */
};

struct interval {
	const struct meter_profile *now;	/* now, one function a name */
	struct meter_profile *own;	/* that copy, when now's names repeat */
	bool whole;			/* no earlier snapshot: since the start */
	uint64_t samples, calls;	/* during the interval, all functions */
	struct interval_row *rows;	/* every function of now */
	size_t n;
	struct interval_thread *threads;	/* every thread of now */
	size_t nthreads;
};

/*
 * Rows of now against prev, an earlier snapshot of the same session (NULL:
 * since the start), one a name (records of one name summed), sorted by ORDER_DEFAULT (the interval's self samples,
 * then its calls), ORDER_SELF / ORDER_CALLS / ORDER_TOTAL (the totals) or
 * ORDER_NAME.  A counter that went down (a reset in between) counts from
 * zero.  0, or -1 out of memory.
 */
int interval_build(struct interval *iv, const struct meter_profile *now,
		   const struct meter_profile *prev, enum an_order order);
void interval_free(struct interval *iv);

#endif
