/* SPDX-License-Identifier: MIT */
/*
 * Two profiles compared function by function (meter-stat diff): the
 * change of each function's self and total share, with the noise band
 * that the sample counts allow, and of its exact call count.  Functions
 * are matched by name, as merging matches them.
 *
 * A share is s/n of one profile's samples.  Samples are a count, so a
 * share measured twice moves by chance: its standard error is
 * sqrt(p(1-p)/n), and the difference of two independent shares has
 * sqrt(p1(1-p1)/n1 + p2(1-p2)/n2).  The band is 3 of those (99.7 %):
 * a report lists tens of functions, and a 95 % band would call one in
 * twenty of them changed by chance alone.  A change beyond the band is
 * "real".  Calls are exact and change only when the program did.
 */
#ifndef METER_ANALYSIS_DIFF_H
#define METER_ANALYSIS_DIFF_H

#include "analysis.h"

enum diff_presence { DIFF_BOTH, DIFF_NEW_ONLY, DIFF_BASE_ONLY };

struct diff_share {
	double base, new;	/* fractions of each profile's samples */
	double change;		/* new - base */
	double band;		/* 3-sigma noise band of change */
	double seconds;		/* new - base, in seconds */
};

struct diff_row {
	const char *name;
	size_t base_node, new_node;	/* node indices, SIZE_MAX: absent */
	enum diff_presence presence;
	struct diff_share self, total;
	uint64_t base_calls, new_calls;
	bool real;		/* a share moved beyond its band */
	double excess;		/* how far beyond (fraction), for sorting */
};

struct diff {
	struct analysis *base, *new;	/* of the corrected copies */
	struct meter_profile *base_c, *new_c;	/* NULL: as given */
	struct diff_row *rows;
	size_t n;
	size_t real;			/* rows with a real change */
};

/*
 * Builds d from two profiles, their samples given out as how says.  Rows are sorted by the largest real change first,
 * then by the size of the change.  0 or -1 (ENOMEM); diff_free either way.
 */
int diff_build(struct diff *d, const struct meter_profile *base,
	       const struct meter_profile *new, const struct an_opts *o,
	       enum attribution how);
void diff_free(struct diff *d);

/*
 * The noise band (3 sigma) of the difference of the shares of a samples in
 * base and b in new (an_share_se).
 */
#define DIFF_BAND_SIGMAS	3.0
double diff_band(const struct analysis *base, double a,
		 const struct analysis *new, double b);

#endif
