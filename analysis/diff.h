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
 * sqrt(p1(1-p1)/n1 + p2(1-p2)/n2).  One share alone would take 3 of
 * those (a 0.27 % chance of a false mark), but a report compares hundreds
 * of shares, and at 3 each some would be marked by chance in a good part
 * of the diffs of two identical runs.  So the band is as many standard
 * errors as keep that 0.27 % for the report as a whole (Sidak's
 * correction for the m shares compared): 3 for one share, about 4.3 for
 * two hundred.  A change beyond the band is "real".  Calls are exact and
 * change only when the program did.
 */
#ifndef METER_ANALYSIS_DIFF_H
#define METER_ANALYSIS_DIFF_H

#include "analysis.h"

enum diff_presence { DIFF_BOTH, DIFF_NEW_ONLY, DIFF_BASE_ONLY };

struct diff_share {
	double base, new;	/* fractions of each profile's samples */
	double change;		/* new - base */
	double band;		/* noise band of change (diff.sigmas) */
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
	size_t compared;		/* shares that could change (m) */
	double sigmas;			/* the band, in standard errors */
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
 * The chance, for a whole report, that a share of two identical runs is
 * marked changed: one share's at 3 sigma.
 */
#define DIFF_FALSE_MARK	0.0027
/* Standard errors that keep DIFF_FALSE_MARK over m shares compared. */
double diff_sigmas(size_t m);
/*
 * The noise band (sigmas standard errors) of the difference of the shares
 * of a samples in base and b in new (an_share_se).
 */
double diff_band(const struct analysis *base, double a,
		 const struct analysis *new, double b, double sigmas);

#endif
