/* SPDX-License-Identifier: MIT */
/*
 * Process trees (analysis/proctree.c): which sessions descend from which, and
 * a merged profile's processes summed by program.  A session's
 * parent_cookie is its nearest profiled ancestor's cookie (a forked
 * child's parent, or the last profiled process above an exec through
 * programs that are not instrumented), or the token meter-run
 * --follow-fork gave the run where there is none.
 */
#ifndef METER_PROCTREE_H
#define METER_PROCTREE_H

#include "model.h"
#include "nldump.h"

/*
 * parent[i] = the index in list of session i's parent (the session whose
 * cookie is its parent_cookie), or n where none is listed.  O(n log n).
 * Returns 0, or -1 when out of memory.
 */
int meter_tree_parents(const struct meter_session_row *list, size_t n,
		       size_t *parent);

/*
 * Marks in[] every session of list that descends from one already marked
 * or whose parent_cookie is one of links[0..nlinks): a run's token, or
 * sessions of the tree no longer listed.  Returns how many are marked
 * (0 when out of memory).  O((n + nlinks) log(n + nlinks)).
 */
size_t meter_tree_mark(const struct meter_session_row *list, size_t n,
		       bool *in, const uint64_t *links, size_t nlinks);

/* One program of a merged profile: its processes' sums. */
struct meter_program {
	const char *command;	/* the profile's, or "?" */
	size_t processes;
	uint64_t samples;
	uint64_t calls;
};

/*
 * p's process rows summed by command, the most samples first (then by
 * name).  Returns the count (0 when p lists no processes, or on ENOMEM);
 * *out is malloc'd and points into p.
 */
size_t meter_programs(const struct meter_profile *p,
		      struct meter_program **out);

#endif /* METER_PROCTREE_H */
