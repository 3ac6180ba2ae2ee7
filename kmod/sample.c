// SPDX-License-Identifier: GPL-2.0
/*
 * The ticks: perf's task-clock overflow handler (the CPU clock), the
 * thread's own CPU-time hrtimer (the CPU clock with cpu_timer, see
 * cputimer.c) and the thread's hrtimer (the wall clock, at the end).
 *
 * The CPU tick runs in hard interrupt context on the CPU where the
 * profiled thread is running, with that thread as current; the wall tick
 * on any CPU, whether the thread runs or not.  Neither allocates nor
 * sleeps; they take only the session's raw spinlock.  Nothing read from
 * the shared page is trusted: every id is bounds-checked before it is used
 * to find a counter, and is never used as an index otherwise.
 *
 * perf's task-clock timer re-arms itself with hrtimer_forward_now(), which
 * drops the periods it overran when the interrupt came late (common under
 * emulation at 10 kHz).  So each tick weighs as many whole periods as the
 * thread's task clock advanced since the last counted period: the counts
 * stay "periods of CPU time", and samples per CPU-second equal the
 * requested rate.  The interrupts actually taken are counted apart
 * (METER_A_TICKS), so that a reader can see how many periods were
 * weighed in rather than observed.
 *
 * The CPU ticks also count the sample at the user address the thread was
 * interrupted at (the address it returns to, when the tick came in the
 * kernel), with the current function: the wall tick does not, as a thread
 * it samples may be running on another CPU.
 */
#include <linux/perf_event.h>
#include <linux/math64.h>
#include <linux/sched/mm.h>
#include <asm/irq_regs.h>

#include "meter_kmod.h"

static bool meter_id_ok(const struct meter_session *s, u32 id, u32 max_id)
{
	return id && id <= max_id && id <= METER_FUNCS_MAX;
}

/*
 * The first frame of the run of known frames that ends at the top (frame
 * depth - 1): below the capacity all are in stack[]; past it, the page's
 * deep[] window must reach the top, and stack[] joins it when the window
 * starts at or below the capacity (<linux/meter.h>).  depth: none known.
 */
static u32 meter_known_from(const struct meter_page *pg, u32 depth, u32 *lo)
{
	u32 top = READ_ONCE(pg->deep_top);

	*lo = top - METER_DEEP_WINDOW;
	if (depth <= METER_STACK_CAP)
		return 0;
	if (top < depth || top <= METER_STACK_CAP || *lo >= depth)
		return depth;
	return *lo <= METER_STACK_CAP ? 0 : *lo;
}

/* Copy the kept frames out of the page; returns how many, 0: invalid. */
static u32 meter_sample_frames(struct meter_session *s,
			       const struct meter_page *pg, u32 depth,
			       u32 cur, u32 max_id, u32 *frames,
			       bool *truncated)
{
	u32 lo, first = meter_known_from(pg, depth, &lo);
	u32 n, i;

	if (depth - first > METER_SAMPLE_DEPTH_MAX)
		first = depth - METER_SAMPLE_DEPTH_MAX;
	*truncated = first > 0;
	n = depth - first;
	for (i = 0; i < n; i++) {
		u32 k = first + i;
		/* k and lo come from the user's page */
		u32 id = k < METER_STACK_CAP ?
			 READ_ONCE(pg->stack[array_index_nospec(k,
							METER_STACK_CAP)]) :
			 READ_ONCE(pg->deep[array_index_nospec(k - lo,
							METER_DEEP_WINDOW)]);

		if (!meter_id_ok(s, id, max_id))
			return 0;
		frames[i] = id;
	}
	/*
	 * A current function that is not the top of the stack is the leaf:
	 * a flat function (METER_FUNCTION_FLAT pushes nothing), or a call
	 * between its two stores.  With no stack, or none known, the current
	 * function alone.
	 */
	if (!n || frames[n - 1] != cur) {
		if (n == METER_SAMPLE_DEPTH_MAX) {
			memmove(frames, frames + 1, (n - 1) * sizeof(*frames));
			n--;
			*truncated = true;
		}
		frames[n++] = cur;
	}
	return n;
}

/*
 * Whole periods of task clock since the periods already counted; the
 * remainder carries over.  0 for a tick that came before a whole period
 * had passed (its period is counted by the next tick).
 */
static u64 meter_sample_weight(struct meter_thread *t, struct perf_event *event)
{
	u64 clock = local64_read(&event->count);
	u64 period = READ_ONCE(event->hw.sample_period);
	u64 w;

	if (!period)
		return 1;
	if (clock <= t->clock_seen)
		return 0;
	w = div64_u64(clock - t->clock_seen, period);
	t->clock_seen += w * period;
	return w;
}

/*
 * The user address the interrupted thread resumes at: regs are the
 * interrupt's, which hold it only when the tick came in user mode.
 */
static __always_inline u64 meter_user_ip(struct pt_regs *regs)
{
	if (!regs || !user_mode(regs))
		regs = task_pt_regs(current);
	return instruction_pointer(regs);
}

/*
 * Charges w periods to the thread's current function and stack, in the
 * thread's state at the tick (always on a CPU for the CPU clock), and to
 * the pair of the current function and ip (0: no address).  Every
 * tick is a hard interrupt (perf's hrtimer and meter's own expire in hard
 * IRQ context, also on PREEMPT_RT): interrupts are off, so the raw lock
 * is taken without saving them.  Inlined into each tick: the call, its
 * saves and restores are a tenth of what the tick adds to its floor.
 */
static __always_inline void meter_sample_charge(struct meter_thread *t, u64 w,
						u8 state, u64 ip)
{
	/* only frames[0..n) are read: the kernel's stack zeroing would clear
	 * 512 bytes on every tick
	 */
	u32 frames[METER_SAMPLE_DEPTH_MAX] __uninitialized;
	struct meter_session *s = t->session;
	const struct meter_page *pg = t->kpage;
	struct meter_func_slot *slot;
	u32 cur, depth, max_id, n;
	enum meter_stack_added added, at = METER_STACK_COUNTED;
	bool truncated, grow;

	lockdep_assert_irqs_disabled();
	atomic64_add(w, &s->samples);
	if (state != METER_SAMPLE_ONCPU)
		atomic64_add(w, &s->samples_off[state - 1]);
	WRITE_ONCE(t->samples, t->samples + w);

	cur = READ_ONCE(pg->current_id);
	depth = READ_ONCE(pg->depth);
	max_id = READ_ONCE(s->max_id);
	if (READ_ONCE(pg->magic) != METER_PAGE_MAGIC ||
	    READ_ONCE(pg->version) != METER_PAGE_VERSION) {
		atomic64_add(w, &s->invalid);
		return;
	}
	if (!cur) {
		atomic64_add(w, &s->no_current);
		return;
	}
	if (!meter_id_ok(s, cur, max_id)) {
		atomic64_add(w, &s->invalid);
		return;
	}
	slot = meter_session_slot_tick(s, cur);
	if (!slot) {
		atomic64_add(w, &s->invalid);
		return;
	}
	n = meter_sample_frames(s, pg, depth, cur, max_id, frames, &truncated);
	if (!n) {
		atomic64_add(w, &s->invalid);
		return;
	}

	atomic64_add(w, &slot->self);
	if (state != METER_SAMPLE_ONCPU)
		atomic64_add(w, &slot->self_off[state - 1]);
	if (truncated)
		atomic64_add(w, &s->truncated);
	raw_spin_lock(&s->lock);
	added = meter_stacks_add(&s->stacks, t->tid, frames, n, truncated,
				 state, w);
	grow = added != METER_STACK_COUNTED &&
	       meter_stacks_want_grow(&s->stacks);
	if (ip) {
		at = meter_addrs_add(&s->addrs, cur, ip, w);
		grow |= at != METER_STACK_COUNTED &&
			meter_stacks_want_grow(&s->addrs);
	}
	raw_spin_unlock(&s->lock);
	if (added == METER_STACK_LOST)
		atomic64_add(w, &s->lost);
	if (at == METER_STACK_LOST)
		atomic64_add(w, &s->addrs_lost);
	if (unlikely(grow))
		meter_session_want_grow(s);
}

void meter_sample_tick(struct perf_event *event,
		       struct perf_sample_data *data, struct pt_regs *regs)
{
	struct meter_thread *t = event->overflow_handler_context;
	u64 w;

	if (READ_ONCE(t->state) != METER_THREAD_LIVE || current != t->task)
		return;
	if (unlikely(READ_ONCE(meter_tick_floor))) {
		atomic64_inc(&t->session->ticks);
		return;
	}
	if (current->mm != t->mm) {
		/* exit_mm() already ran (the exit probe will end us), or exec
		 * gave the thread a new mm: the registration is over.
		 */
		if (current->mm && !(current->flags & PF_EXITING))
			meter_thread_end(t, METER_END_EXEC);
		return;
	}
	atomic64_inc(&t->session->ticks);
	w = meter_sample_weight(t, event);
	if (w)
		meter_sample_charge(t, w, METER_SAMPLE_ONCPU,
				    meter_user_ip(regs));
}

/*
 * The CPU tick on meter's own hrtimer: armed only while the thread runs,
 * on its CPU, so current is the thread.  Overrun periods are CPU time, as
 * the timer stood still while the thread was switched out.
 */
enum hrtimer_restart meter_sample_cpu_timer_tick(struct hrtimer *timer)
{
	struct meter_thread *t = container_of(timer, struct meter_thread,
					      timer);
	u64 w;

	if (READ_ONCE(t->state) != METER_THREAD_LIVE || current != t->task)
		return HRTIMER_NORESTART;
	w = hrtimer_forward_now(timer, ns_to_ktime(READ_ONCE(t->period_ns)));
	atomic64_inc(&t->session->ticks);
	if (unlikely(READ_ONCE(meter_tick_floor)))
		return HRTIMER_RESTART;
	if (current->mm != t->mm) {
		/*
		 * As in the perf tick: exiting, or exec.  Ending removes the
		 * thread's preempt notifier, which must not happen while the
		 * interrupted code may be walking the notifier list (the
		 * scheduler walks it for sched_in with interrupts on): only
		 * a tick that interrupted user mode ends it.
		 */
		if (current->mm && !(current->flags & PF_EXITING) &&
		    user_mode(get_irq_regs())) {
			meter_thread_end(t, METER_END_EXEC);
			return HRTIMER_NORESTART;
		}
		return HRTIMER_RESTART;
	}
	meter_sample_charge(t, w, METER_SAMPLE_ONCPU,
			    meter_user_ip(get_irq_regs()));
	return HRTIMER_RESTART;
}

/*
 * The thread's state as the scheduler has it, read without its locks: a
 * task between set_current_state() and the switch still counts as on a
 * CPU, a preempted or just woken one as runnable.
 */
static u8 meter_task_sample_state(struct task_struct *tsk)
{
	if (READ_ONCE(tsk->on_cpu))
		return METER_SAMPLE_ONCPU;
	if (READ_ONCE(tsk->__state) == TASK_RUNNING)
		return METER_SAMPLE_RUNQ;
	return METER_SAMPLE_BLOCKED;
}

/*
 * The wall-clock tick: the thread's hrtimer, on any CPU, whether or not
 * the thread runs.  The page is pinned and read through the kernel
 * mapping, so a sleeping thread costs this read and nothing else.  A late
 * interrupt weighs the periods it overran, as the CPU tick does.
 */
enum hrtimer_restart meter_sample_wall_tick(struct hrtimer *timer)
{
	struct meter_thread *t = container_of(timer, struct meter_thread,
					      timer);
	struct task_struct *tsk = t->task;
	u64 period = READ_ONCE(t->period_ns);
	struct mm_struct *mm;
	u64 w, k;

	if (READ_ONCE(t->state) != METER_THREAD_LIVE)
		return HRTIMER_NORESTART;
	/* the user's budget: k periods to the next tick, and it weighs k */
	k = meter_budget_stretch(t->session, period);
	w = hrtimer_forward_now(timer, ns_to_ktime(period * k)) * k;
	atomic64_inc(&t->session->ticks);
	if (k > 1)
		atomic64_inc(&t->session->stretched);
	if (unlikely(READ_ONCE(meter_tick_floor)))
		return HRTIMER_RESTART;
	mm = READ_ONCE(tsk->mm);
	if (mm != t->mm) {
		/* as in the CPU tick: exiting (the probe ends us) or exec */
		if (mm && !(READ_ONCE(tsk->flags) & PF_EXITING)) {
			meter_thread_end(t, METER_END_EXEC);
			return HRTIMER_NORESTART;
		}
		return HRTIMER_RESTART;
	}
	meter_sample_charge(t, w, meter_task_sample_state(tsk), 0);
	return HRTIMER_RESTART;
}
