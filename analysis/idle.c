// SPDX-License-Identifier: MIT
/*
 * Threads on wall-clock time (idle.h): each thread's time on and off the
 * CPU, from the stacks, which carry the thread and its state; and a copy
 * of a profile without its idle threads.  A pool's waiting workers, 20 s
 * blocked each, otherwise top a wall-clock profile at 40 % and more.
 */
#include <stdlib.h>
#include <string.h>

#include "idle.h"
#include "model.h"

static int32_t stack_pid(const struct meter_profile *p,
			 const struct meter_stack *s)
{
	return s->proc && s->proc <= p->nprocs ? p->procs[s->proc - 1].pid :
						 p->pid;
}

static int32_t thread_pid(const struct meter_profile *p,
			  const struct meter_thread_row *t)
{
	return t->pid ? t->pid : p->pid;
}

static bool stack_of(const struct meter_profile *p,
		     const struct meter_stack *s,
		     const struct meter_thread_row *t)
{
	return s->tid == t->tid && stack_pid(p, s) == thread_pid(p, t);
}

void thread_split(const struct meter_profile *p,
		  const struct meter_thread_row *t, uint64_t *on,
		  uint64_t *off)
{
	size_t i;

	*on = *off = 0;
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		if (!stack_of(p, s, t))
			continue;
		if (s->state == METER_STATE_ONCPU)
			*on += s->samples;
		else
			*off += s->samples;
	}
}

static bool is_idle(const struct meter_profile *p,
		    const struct meter_thread_row *t, double pct)
{
	uint64_t on, off;

	thread_split(p, t, &on, &off);
	return on + off && 100.0 * (double)on < pct * (double)(on + off);
}

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Takes stack s's samples out of c's rows: self, off-CPU, totals. */
static void take_out(struct meter_profile *c, const struct meter_stack *s)
{
	uint32_t k, j;
	int off = s->state == METER_STATE_ONCPU ? -1 : s->state - 1;

	c->samples = less(c->samples, s->samples);
	c->idle_samples += s->samples;
	if (off >= 0 && off < METER_OFF_KINDS)
		c->samples_off[off] = less(c->samples_off[off], s->samples);
	if (!s->depth) {
		c->no_current = less(c->no_current, s->samples);
		return;
	}
	for (k = 0; k < s->depth; k++) {
		struct meter_func *f = meter_profile_find(c, s->frames[k]);

		/* a recursive function's total counts a sample once */
		for (j = 0; j < k && s->frames[j] != s->frames[k]; j++)
			;
		if (!f || j < k)
			continue;
		f->total_samples = less(f->total_samples, s->samples);
		if (k + 1 < s->depth)
			continue;
		f->self_samples = less(f->self_samples, s->samples);
		if (off >= 0 && off < METER_OFF_KINDS)
			f->self_off[off] = less(f->self_off[off], s->samples);
	}
}

struct meter_profile *profile_without_idle(const struct meter_profile *p,
					   double pct, bool *failed)
{
	struct meter_profile *c;
	bool *idle;
	size_t i, t, kept;

	*failed = false;
	if (!p->wall || pct <= 0 || !p->nthreads)
		return NULL;
	idle = calloc(p->nthreads, sizeof(*idle));
	c = idle ? meter_profile_new() : NULL;
	if (!c || meter_profile_merge(c, p)) {
		free(idle);
		meter_profile_free(c);
		*failed = true;
		return NULL;
	}
	/*
	 * A corrected profile stays one: the merge does not carry what the
	 * correction took out.  The idle threads were on a CPU less than pct
	 * of their time, and only on-CPU samples are corrected, so the little
	 * taken from them stays counted here.
	 */
	c->corrected = p->corrected;
	c->corrected_samples = p->corrected_samples;
	c->by_address = p->by_address;
	c->addr_moved = p->addr_moved;
	c->addr_unresolved = p->addr_unresolved;
	/* c's threads are p's, in order (the merge appends them) */
	for (t = 0; t < c->nthreads; t++)
		idle[t] = is_idle(c, &c->threads[t], pct);
	for (i = kept = 0; i < c->nstacks; i++) {
		struct meter_stack *s = &c->stacks[i];

		for (t = 0; t < c->nthreads && !(idle[t] &&
		     stack_of(c, s, &c->threads[t])); t++)
			;
		if (t == c->nthreads) {
			c->stacks[kept++] = *s;
			continue;
		}
		take_out(c, s);
		free(s->frames);
	}
	c->nstacks = kept;
	for (t = kept = 0; t < c->nthreads; t++) {
		if (idle[t])
			c->idle_threads++;
		else
			c->threads[kept++] = c->threads[t];
	}
	c->nthreads = kept;
	free(idle);
	return c;
}
