/* SPDX-License-Identifier: MIT */
/*
 * Analysis shared by the renderers: the call graph built exactly from
 * sampled stacks, orderings, thresholds and hiding rules.
 *
 * Edge times follow Racket's profile analyzer: in a sampled stack where a
 * function X occurs k times, each occurrence carries 1/k of the sample, so
 * that X's caller shares (and its callee shares plus its leaf time) add up
 * to X's total however deep the recursion.  Shares are measured from the
 * stacks, never apportioned by call counts as gprof does.
 */
#ifndef METER_ANALYSIS_H
#define METER_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

enum an_order {
	ORDER_DEFAULT,	/* per renderer: flat/metering self, graph topological */
	ORDER_SELF,
	ORDER_TOTAL,
	ORDER_CALLS,
	ORDER_NAME,
	ORDER_TOPOLOGICAL,
};

/* What the analysis of a profile takes from a report's options. */
struct an_opts {
	enum an_order order;
	bool inclusive;		/* METERING's :inclusive */
	double hide_self;	/* percent, Racket's hide-self */
	double hide_subs;	/* percent, Racket's hide-subs */
	bool whole_names;	/* rows named in full, not short (names.h) */
};

#define NODE_ROOT ((size_t)-1)	/* the caller of a stack's root frame */

struct an_edge {
	size_t caller;		/* node index or NODE_ROOT */
	size_t callee;		/* node index */
	uint64_t samples;	/* samples whose stack holds this edge */
	double caller_time;	/* samples, from the caller's side (1/k) */
	double callee_time;	/* samples, from the callee's side (1/k) */
	double caller_off;	/* wall clock: the part of each taken off */
	double callee_off;	/* the CPU */
	size_t stamp;		/* analysis.c: last stack that counted it, + 1 */
};

struct an_node {
	const struct meter_func *f;
	uint64_t self;		/* samples */
	uint64_t total;		/* samples */
	uint64_t self_off;	/* wall clock: of self, off the CPU */
	uint64_t total_off;	/* of total, off the CPU (from stacks) */
	double leaf_time;	/* samples as the stack's leaf, 1/k */
	bool recursive;		/* occurs twice in some sampled stack */
	bool hidden;		/* by hide_self / hide_subs */
	unsigned label;		/* [N] in the call graph, 1-based */
	size_t *in;		/* edge indices where this is the callee */
	size_t nin;
	size_t *out;		/* edge indices where this is the caller */
	size_t nout;
};

struct analysis {
	const struct meter_profile *p;
	struct an_node *nodes;	/* parallel to p->funcs */
	size_t n;
	struct an_edge *edges;
	size_t nedges;
	size_t *order;		/* node indices in display order */
	uint64_t samples;	/* as measured: the header's total */
	/*
	 * What the functions' shares are of: the samples, less what the
	 * correction took out (the program's own time, as an uninstrumented
	 * run's shares are of its whole); the samples when not corrected.
	 */
	double share_base;
	uint64_t stack_samples;	/* samples in p->stacks */
	uint64_t calls;		/* sum of calls */
	double weight;		/* periods per tick taken, >= 1 (an_share_se) */
	bool has_alloc;
	char **names;		/* short names (names.h); NULL: whole ones */
};

/* NULL on ENOMEM. */
struct analysis *analysis_new(const struct meter_profile *p,
			      const struct an_opts *o,
			      enum an_order default_order);
void analysis_free(struct analysis *an);

/* Re-sorts an->order. */
void analysis_sort(struct analysis *an, enum an_order order,
		   bool inclusive);

double an_seconds(const struct analysis *an, double samples);
/* samples as a share of an->share_base (the functions' rows) */
double an_percent(const struct analysis *an, double samples);
/* samples as a share of the samples as measured (the header's splits) */
double an_measured_percent(const struct analysis *an, double samples);
double an_delivered_hz(const struct analysis *an);
double an_unsampled_seconds(const struct analysis *an);
/* A node's name as rows show it (short unless whole_names), "???" when
 * empty. */
const char *an_name(const struct analysis *an, size_t node);
/* A node's whole name, its identity (JSON, pprof, folded), "???" when
 * empty. */
const char *an_whole_name(const struct analysis *an, size_t node);

/* One line of a node's entry: a caller or a callee and the edge's time. */
struct an_line {
	size_t node;	/* the other end, or NODE_ROOT */
	double time;	/* samples, from the entry's node's side (1/k) */
	double off;	/* of time, off the CPU (wall clock) */
};
/*
 * The node's callers (or callees), heaviest first, ties by node index:
 * *lines is malloc'ed (free it), *n set.  0, or -1 on ENOMEM.
 */
int an_node_lines(const struct analysis *an, size_t node, bool callers,
		  struct an_line **lines, size_t *n);

/*
 * The standard error of the share s / an->samples, as a fraction: how far
 * a share measured from that many samples moves by chance.  The chance is
 * in the ticks, not the periods: a tick that came late weighs every
 * period it missed (the signal backend at a 250 Hz scheduler tick asked
 * for 1 kHz: four), so the binomial error is that of samples / weight
 * draws.  The reports' +- and meter-stat diff's noise band are multiples
 * of it.
 */
double an_share_se(const struct analysis *an, double s);

/*
 * correct.c: takes the calibrated instrumentation cost out of p's samples
 * (sets p->corrected); 0, or -1 on ENOMEM.  The line that reports says so.
 */
int profile_correct(struct meter_profile *p);
/*
 * How a report gives out the samples (Documentation/user-guide.md,
 * "Where the samples go").
 */
enum attribution {
	/* by where each was taken (byaddr.c), where the profile has
	 * addresses and their files can be read; else as taken
	 */
	ATTRIB_BY_ADDRESS,
	ATTRIB_AS_TAKEN,	/* each to the function current at it */
	ATTRIB_CORRECTED,	/* as taken, less the calls' calibrated cost */
};
/*
 * A copy of p with the samples given out as how says (one row per name),
 * or NULL when that is p as it is (*failed on ENOMEM).
 */
struct meter_profile *profile_attributed_copy(const struct meter_profile *p,
					      enum attribution how,
					      bool *failed);
void profile_correction_line(const struct meter_profile *p, FILE *out,
			     const char *prefix);
/* The mean cost of p's calls in ns, each at its own
 * (meter_func_call_cost_ps); the header's when nothing was called. */
double profile_call_cost_ns(const struct meter_profile *p);

#endif /* METER_ANALYSIS_H */
