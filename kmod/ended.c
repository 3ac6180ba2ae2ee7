// SPDX-License-Identifier: GPL-2.0
/*
 * What a session keeps of its ended threads.
 *
 * A registration's record (its timer, perf counter, work and page, about
 * 512 bytes) is freed once its release work has run.  What the profile
 * needs of the thread (its tid, name and samples) moves into a row of the
 * session's table of ended threads, which holds at most max_thread_rows
 * rows: past that, the thread with the fewest samples (the one ending or
 * a kept one) is folded into one row of counts, so that a process that
 * starts and ends threads forever holds a bounded amount of kernel memory
 * (test_harden_churn_slab) and its samples stay whole.  The rows count in
 * the session's memory (max_finished_mb).  Everything here runs under
 * meter_mutex, as do the snapshot and the reset that read the rows.
 */
#include <linux/memcontrol.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "meter_kmod.h"

#define METER_ENDED_FIRST	16

/* Room for one more row; false when there is none (at the bound, or no
 * memory): the caller folds instead.
 */
static bool meter_ended_room(struct meter_session *s)
{
	u32 max = READ_ONCE(meter_max_thread_rows), cap;
	struct mem_cgroup *old_memcg;
	struct meter_ended *rows;

	if (s->nended < s->ended_cap)
		return true;
	if (max && s->ended_cap >= max)
		return false;
	cap = s->ended_cap ? s->ended_cap * 2 : METER_ENDED_FIRST;
	if (max)
		cap = min(cap, max);
	/* on meter_wq: charged to the creator's cgroup, as its tables are */
	old_memcg = set_active_memcg(s->memcg);
	rows = kvmalloc_array(cap, sizeof(*rows), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old_memcg);
	if (!rows)
		return false;
	if (s->nended)
		memcpy(rows, s->ended, s->nended * sizeof(*rows));
	kvfree(s->ended);
	s->bytes += (size_t)(cap - s->ended_cap) * sizeof(*rows);
	s->ended = rows;
	s->ended_cap = cap;
	return true;
}

static void meter_ended_fold(struct meter_session *s, struct pid *pid,
			     u64 samples)
{
	put_pid(pid);
	s->folded_threads++;
	s->folded_samples += samples;
}

/* The kept row with the fewest samples; the table is full. */
static struct meter_ended *meter_ended_least(struct meter_session *s)
{
	struct meter_ended *least = &s->ended[0];
	u32 i;

	for (i = 1; i < s->nended; i++)
		if (s->ended[i].samples < least->samples)
			least = &s->ended[i];
	return least;
}

/*
 * t's release work is done (no tick, notifier or counter can reach it):
 * it leaves the session's list of live records for a row, and its pid
 * reference goes with it.  The caller frees t after an RCU grace period.
 */
void meter_ended_add(struct meter_session *s, struct meter_thread *t)
{
	struct meter_ended row = {
		.pid = t->pid, .tid = t->tid, .seq = t->seq,
	};
	struct meter_ended *least;
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	list_del(&t->node);
	row.samples = READ_ONCE(t->samples) - t->samples_reset;
	memcpy(row.comm, t->comm, TASK_COMM_LEN);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	t->pid = NULL;

	if (meter_ended_room(s)) {
		s->ended[s->nended++] = row;
		return;
	}
	if (!s->nended) {
		meter_ended_fold(s, row.pid, row.samples);
		return;
	}
	least = meter_ended_least(s);
	if (least->samples >= row.samples) {
		meter_ended_fold(s, row.pid, row.samples);
		return;
	}
	meter_ended_fold(s, least->pid, least->samples);
	*least = row;
}

/* SESSION_RESET: an ended thread has nothing after a reset. */
void meter_ended_reset(struct meter_session *s)
{
	u32 i;

	for (i = 0; i < s->nended; i++)
		s->ended[i].samples = 0;
	s->folded_samples = 0;
}

/* From the session's free. */
void meter_ended_free(struct meter_session *s)
{
	u32 i;

	for (i = 0; i < s->nended; i++)
		put_pid(s->ended[i].pid);
	kvfree(s->ended);
	s->ended = NULL;
	s->nended = 0;
	s->ended_cap = 0;
}
