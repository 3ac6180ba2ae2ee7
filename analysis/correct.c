// SPDX-License-Identifier: MIT
/*
 * The instrumentation correction of the reports (Documentation/
 * libmeter.md, "Correction").
 *
 * Every profiled call runs the instrumentation's own instructions, and a
 * sampler counts them like any other CPU time.  libmeter measures what a
 * call costs at start-up (call_cost_ps; flat_call_cost_ps for the flat
 * sequence).  Where that time is sampled was measured against perf on
 * real programs (Documentation/performance.md): on the calling function.
 * On a real CPU the callee becomes current only once the entry's chain
 * of dependent loads (the thread's page) has retired, and under QEMU an
 * interrupt sees the state after the translation block that restores
 * the caller; the callee's own time is sampled about as in an
 * uninstrumented run, its caller's grows.  So the correction takes calls
 * x cost out of the callers' self samples: a callee's calls are shared
 * among its callers in proportion to the samples of the stacks in which
 * each one calls it (the sampled stacks are exact; the counts per caller
 * are not kept), and a function never sampled under a caller (main, a
 * thread's start, one too short to be seen) pays for its own calls.
 * Never below zero; the sampled stacks are scaled as their leaf, the
 * functions' totals recomputed: the time the program itself spent, as an
 * uninstrumented run would have shown it.  The profile's own totals (its
 * samples, each thread's) stay as measured, so that the header and the
 * thread table still match time(1); what was taken out is reported beside
 * them (corrected_samples).  METERING subtracts its estimated overhead
 * much the same way.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static double excess_samples(const struct meter_profile *p,
			     const struct meter_func *f)
{
	return (double)f->calls * (double)meter_func_call_cost_ps(p, f) /
	       1000.0 / (double)p->period_ns;
}

static size_t func_index(const struct meter_profile *p, uint32_t id)
{
	const struct meter_func *f = meter_profile_find(p, id);

	return f ? (size_t)(f - p->funcs) : SIZE_MAX;
}

/*
 * due[i]: the samples function i's self time owes the instrumentation:
 * each function's calls x cost, shared among its callers by the samples
 * of the stacks where each calls it.
 */
static void excess_to_callers(const struct meter_profile *p, double *due,
			      double *under)
{
	size_t i, d;

	/* under[c]: samples of stack frames where c has a caller; calls
	 * are made on the CPU, so wall-clock samples off it do not count
	 */
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		if (s->state != METER_STATE_ONCPU)
			continue;
		for (d = 1; d < s->depth; d++) {
			size_t c = func_index(p, s->frames[d]);

			if (c != SIZE_MAX)
				under[c] += (double)s->samples;
		}
	}
	for (i = 0; i < p->nfuncs; i++)
		if (!under[i])
			due[i] += excess_samples(p, &p->funcs[i]);
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		if (s->state != METER_STATE_ONCPU)
			continue;
		for (d = 1; d < s->depth; d++) {
			size_t c = func_index(p, s->frames[d]);
			size_t q = func_index(p, s->frames[d - 1]);

			if (c == SIZE_MAX || q == SIZE_MAX || !under[c])
				continue;
			due[q] += excess_samples(p, &p->funcs[c]) *
				  (double)s->samples / under[c];
		}
	}
}

static uint64_t scaled(uint64_t n, double ratio)
{
	double v = floor((double)n * ratio + 0.5);

	/* ratio <= 1; near 2^64, (double)n rounds up past what converts */
	return v < 0 ? 0 : v >= (double)n ? n : (uint64_t)v;
}

int profile_correct(struct meter_profile *p)
{
	double *ratio = NULL, *due = NULL, *under = NULL, removed = 0;
	uint64_t *total = NULL, *from_stacks = NULL;
	size_t i;
	int ret = -1;

	p->corrected = false;
	p->corrected_samples = 0;
	if (!p->call_cost_ps || !p->period_ns || !p->samples)
		return 0;
	ratio = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*ratio));
	total = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*total));
	from_stacks = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*from_stacks));
	due = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*due));
	under = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*under));
	if (!ratio || !total || !from_stacks || !due || !under)
		goto out;
	excess_to_callers(p, due, under);
	/*
	 * Totals: what the stacks lose is taken from the totals as read (the
	 * kernel counts totals at the tick, stacks can be lost when its
	 * table is full).
	 */
	for (i = 0; i < p->nfuncs; i++)
		total[i] = p->funcs[i].total_samples;
	meter_profile_compute_totals(p);
	for (i = 0; i < p->nfuncs; i++)
		from_stacks[i] = p->funcs[i].total_samples;
	for (i = 0; i < p->nfuncs; i++) {
		struct meter_func *f = &p->funcs[i];
		/* the instrumentation runs on the CPU: wall-clock samples
		 * taken off it keep what they are
		 */
		uint64_t off = f->self_off[METER_OFF_RUNQ] +
			       f->self_off[METER_OFF_BLOCKED];
		uint64_t on = f->self_samples > off ? f->self_samples - off : 0;
		double left = (double)on - due[i];

		if (left < 0)
			left = 0;
		ratio[i] = on ? left / (double)on : 1;
		/* what the rows lose, rounded as they are: shares add up */
		removed += (double)(on - scaled(on, ratio[i]));
		f->self_samples = scaled(on, ratio[i]) + off;
	}
	/* a stack's leaf is its current function: scale it as that one */
	for (i = 0; i < p->nstacks; i++) {
		struct meter_stack *s = &p->stacks[i];
		const struct meter_func *leaf = s->depth ?
			meter_profile_find(p, s->frames[s->depth - 1]) : NULL;

		if (leaf && s->state == METER_STATE_ONCPU)
			s->samples = scaled(s->samples,
					    ratio[leaf - p->funcs]);
	}
	meter_profile_drop_empty_stacks(p);
	meter_profile_compute_totals(p);
	for (i = 0; i < p->nfuncs; i++) {
		struct meter_func *f = &p->funcs[i];
		uint64_t lost = from_stacks[i] - f->total_samples;

		f->total_samples = total[i] > lost ? total[i] - lost : 0;
		if (f->total_samples < f->self_samples)
			f->total_samples = f->self_samples;
	}
	p->corrected = true;
	p->corrected_samples = removed;
	ret = 0;
out:
	free(ratio);
	free(due);
	free(under);
	free(total);
	free(from_stacks);
	return ret;
}

/* What the correction would take out: the calls at their calibrated cost. */
static double estimate_samples(const struct meter_profile *p)
{
	double n = 0;
	size_t i;

	if (!p->call_cost_ps || !p->period_ns)
		return 0;
	for (i = 0; i < p->nfuncs; i++)
		n += excess_samples(p, &p->funcs[i]);
	return n;
}

/* each call at its own cost (meter_func_call_cost_ps) */
double profile_call_cost_ns(const struct meter_profile *p)
{
	double calls = 0, ps = 0;
	size_t i;

	for (i = 0; i < p->nfuncs; i++) {
		calls += (double)p->funcs[i].calls;
		ps += (double)p->funcs[i].calls *
		      (double)meter_func_call_cost_ps(p, &p->funcs[i]);
	}
	return calls ? ps / calls / 1e3 : (double)p->call_cost_ps / 1e3;
}

/* The line of a profile given out by address (byaddr.c). */
static void by_address_line(const struct meter_profile *p, FILE *out,
			    const char *prefix)
{
	double whole = p->samples ? (double)p->samples : 1;

	fprintf(out, "%sBy address: meter's own instructions %.3f s (%.1f%% "
		"of the samples), taken out; %.1f%% moved to the function "
		"they were in (inlined ones too); %.1f%% left with the current "
		"function (a library's code, code not built with the plugin, "
		"or not read)", prefix,
		p->corrected_samples * (double)p->period_ns / 1e9,
		100.0 * p->corrected_samples / whole,
		100.0 * (double)p->addr_moved / whole,
		100.0 * (double)p->addr_unresolved / whole);
	if (p->addrs_lost)
		fprintf(out, "; %.1f%% had no address kept (the table was "
			"full)", 100.0 * (double)p->addrs_lost / whole);
	fprintf(out, "; the totals are as measured, the functions' shares "
		"are of the %.3f s left.\n",
		((double)p->samples - p->corrected_samples) *
		(double)p->period_ns / 1e9);
}

void profile_correction_line(const struct meter_profile *p, FILE *out,
			     const char *prefix)
{
	if (p->by_address) {
		by_address_line(p, out, prefix);
		return;
	}
	if (!p->corrected) {
		double est = estimate_samples(p);

		if (!p->call_cost_ps || !p->samples)
			return;
		fprintf(out, "%sSamples as taken: they include meter's own "
			"cost, estimated at %.3f s (%.1f%%; %.1f ns per "
			"call); --correct takes it out.\n", prefix,
			est * (double)p->period_ns / 1e9,
			100.0 * est / (double)p->samples, profile_call_cost_ns(p));
		return;
	}
	fprintf(out, "%sInstrumentation correction: %.3f s (%.1f%% of the "
		"samples) taken out, %.1f ns per call",
		prefix, p->corrected_samples * (double)p->period_ns / 1e9,
		p->samples ? 100.0 * p->corrected_samples /
			(double)p->samples : 0.0, profile_call_cost_ns(p));
	if (p->flat_call_cost_ps)
		fprintf(out, " (%.1f ns flat)",
			(double)p->flat_call_cost_ps / 1e3);
	/* the rows' shares are of what is left (analysis.h, share_base) */
	fprintf(out, "; the totals are as measured, the functions' shares "
		"are of the %.3f s left.\n",
		((double)p->samples - p->corrected_samples) *
		(double)p->period_ns / 1e9);
}
