// SPDX-License-Identifier: GPL-2.0
/*
 * The tick: perf's task-clock overflow handler.
 *
 * Runs in hard interrupt context on the CPU where the profiled thread is
 * running, with that thread as current.  It never allocates and never
 * sleeps; it takes only the session's raw spinlock.  Nothing read from the
 * shared page is trusted: every id is bounds-checked before it is used to
 * find a counter, and is never used as an index otherwise.
 */
#include <linux/perf_event.h>
#include <linux/sched/mm.h>

#include "meter.h"

static bool meter_id_ok(const struct meter_session *s, u32 id, u32 max_id)
{
	return id && id <= max_id && id <= METER_FUNCS_MAX;
}

/* Copy the kept frames out of the page; returns how many, 0: invalid. */
static u32 meter_sample_frames(struct meter_session *s,
			       const struct meter_page *pg, u32 depth,
			       u32 cur, u32 max_id, u32 *frames,
			       bool *truncated)
{
	u32 avail = min_t(u32, depth, METER_STACK_CAP);
	u32 first, n, i;

	*truncated = depth > METER_SAMPLE_DEPTH_MAX;
	if (!avail) {
		/* No shadow stack maintained: the current function alone. */
		frames[0] = cur;
		return 1;
	}
	n = min_t(u32, avail, METER_SAMPLE_DEPTH_MAX);
	first = avail - n;
	for (i = 0; i < n; i++) {
		u32 id = READ_ONCE(pg->stack[first + i]);

		if (!meter_id_ok(s, id, max_id))
			return 0;
		frames[i] = id;
	}
	return n;
}

void meter_sample_tick(struct perf_event *event,
		       struct perf_sample_data *data, struct pt_regs *regs)
{
	struct meter_thread *t = event->overflow_handler_context;
	u32 frames[METER_SAMPLE_DEPTH_MAX];
	const struct meter_page *pg;
	struct meter_func_slot *slot;
	struct meter_session *s;
	u32 cur, depth, max_id, n;
	bool truncated, kept;
	unsigned long flags;

	if (READ_ONCE(t->state) != METER_THREAD_LIVE || current != t->task)
		return;
	if (current->mm != t->mm) {
		/* exit_mm() already ran (the exit probe will end us), or exec
		 * gave the thread a new mm: the registration is over.
		 */
		if (current->mm && !(current->flags & PF_EXITING))
			meter_thread_end(t, METER_END_EXEC);
		return;
	}

	s = t->session;
	pg = t->kpage;
	atomic64_inc(&s->samples);
	WRITE_ONCE(t->samples, t->samples + 1);

	cur = READ_ONCE(pg->current_id);
	depth = READ_ONCE(pg->depth);
	max_id = READ_ONCE(s->max_id);
	if (READ_ONCE(pg->magic) != METER_PAGE_MAGIC ||
	    READ_ONCE(pg->version) != METER_PAGE_VERSION) {
		atomic64_inc(&s->invalid);
		return;
	}
	if (!cur) {
		atomic64_inc(&s->no_current);
		return;
	}
	if (!meter_id_ok(s, cur, max_id)) {
		atomic64_inc(&s->invalid);
		return;
	}
	slot = meter_session_slot_tick(s, cur);
	if (!slot) {
		atomic64_inc(&s->invalid);
		return;
	}
	n = meter_sample_frames(s, pg, depth, cur, max_id, frames, &truncated);
	if (!n) {
		atomic64_inc(&s->invalid);
		return;
	}

	atomic64_inc(&slot->self);
	if (truncated)
		atomic64_inc(&s->truncated);
	raw_spin_lock_irqsave(&s->lock, flags);
	kept = meter_stacks_add(&s->stacks, frames, n, truncated);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	if (!kept)
		atomic64_inc(&s->lost);
}
