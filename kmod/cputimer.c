// SPDX-License-Identifier: GPL-2.0
/*
 * The other CPU-clock tick design: a bare hrtimer of meter's own, armed
 * while the thread runs and cancelled when it stops (module parameter
 * cpu_timer; perf's task clock otherwise).  Documentation/performance.md
 * compares the two with the instruction counter.
 *
 * A preempt notifier (as KVM uses for its vCPU threads) sees each switch
 * of the registered thread: switching out reads how much CPU time is left
 * before the next tick and cancels the timer, switching in arms it,
 * pinned to the new CPU, for what was left.  So the timer only ever runs
 * on the CPU where the thread is current, and its interrupt finds the
 * thread there.  Expiring in hard interrupt context (also on PREEMPT_RT),
 * as the tick takes the session's raw spinlock.
 *
 * A task's notifier list is walked only by its own CPU inside
 * __schedule(), so only the thread itself may add or remove its
 * notifier: registration and every end of a registration run in the
 * thread (REGISTER, UNREGISTER, the exit probe, the tick seeing an exec),
 * with interrupts off.  The sched_in walk runs with interrupts on, so the
 * tick ends a registration only when it interrupted user mode.  The one
 * exception is module unload, which ends registrations of other tasks: it
 * unhooks them all under stop_machine(), when no CPU can be inside
 * __schedule().
 */
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/stop_machine.h>

#include "meter_kmod.h"

#ifdef CONFIG_PREEMPT_NOTIFIERS

/*
 * The static key that makes the scheduler call notifiers is taken once,
 * at the first registration, and dropped at unload: each change patches
 * __schedule() on every CPU (text_poke with int3 and IPIs), which per
 * registration would cost a short process far more than its ticks, and
 * which under QEMU's TCG with two vCPUs was seen to wedge both CPUs in
 * __schedule() when registrations came and went thousands of times a
 * second (test_harden_fuzz).  Under meter_mutex.
 */
static bool meter_cputimer_key;

static void meter_cputimer_in(struct preempt_notifier *pn, int cpu)
{
	struct meter_thread *t = container_of(pn, struct meter_thread, pn);

	s64 period = READ_ONCE(t->period_ns);

	/* a shorter period set while the thread was out starts now */
	if (READ_ONCE(t->state) == METER_THREAD_LIVE)
		hrtimer_start(&t->timer,
			      ns_to_ktime(min_t(s64, t->cpu_left_ns, period)),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

static void meter_cputimer_out(struct preempt_notifier *pn,
			       struct task_struct *next)
{
	struct meter_thread *t = container_of(pn, struct meter_thread, pn);
	s64 left = ktime_to_ns(hrtimer_expires_remaining(&t->timer));

	/* an expiry whose interrupt has not run yet fires at the next
	 * switch in
	 */
	if (hrtimer_try_to_cancel(&t->timer) == 1)
		t->cpu_left_ns = max_t(s64, left, 0);
}

static struct preempt_ops meter_cputimer_ops = {
	.sched_in = meter_cputimer_in,
	.sched_out = meter_cputimer_out,
};

/* Before the thread is listed, in process context, under meter_mutex. */
void meter_cputimer_init(struct meter_thread *t, u64 period_ns)
{
	hrtimer_init(&t->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	t->timer.function = meter_sample_cpu_timer_tick;
	preempt_notifier_init(&t->pn, &meter_cputimer_ops);
	t->cpu_left_ns = period_ns;
	t->cpu_timer = true;
	if (!meter_cputimer_key) {
		preempt_notifier_inc();
		meter_cputimer_key = true;
	}
}

/* In the registering thread, once it is listed. */
void meter_cputimer_hook(struct meter_thread *t)
{
	unsigned long flags;

	local_irq_save(flags);
	preempt_notifier_register(&t->pn);
	t->cpu_hooked = true;
	hrtimer_start(&t->timer, ns_to_ktime(t->cpu_left_ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
	local_irq_restore(flags);
}

/*
 * At the end of the registration, in the thread itself (any context):
 * no switch or tick can come between removing the notifier and the
 * cancel.  From its own interrupt the cancel fails; the tick then
 * returns HRTIMER_NORESTART.
 */
void meter_cputimer_unhook(struct meter_thread *t)
{
	unsigned long flags;

	if (!t->cpu_timer || current != t->task)
		return;
	local_irq_save(flags);
	if (t->cpu_hooked) {
		preempt_notifier_unregister(&t->pn);
		t->cpu_hooked = false;
	}
	hrtimer_try_to_cancel(&t->timer);
	local_irq_restore(flags);
}

static void meter_cputimer_unhook_other(struct meter_thread *t)
{
	if (!t->cpu_hooked)
		return;
	preempt_notifier_unregister(&t->pn);
	t->cpu_hooked = false;
	hrtimer_try_to_cancel(&t->timer);
}

/* In an IPI on the CPU where the thread was seen running. */
static void meter_cputimer_rearm(void *arg)
{
	struct meter_thread *t = arg;
	s64 period = READ_ONCE(t->period_ns);

	if (current != t->task || !t->cpu_hooked ||
	    READ_ONCE(t->state) != METER_THREAD_LIVE)
		return;
	if (ktime_to_ns(hrtimer_expires_remaining(&t->timer)) > period &&
	    hrtimer_try_to_cancel(&t->timer) == 1)
		hrtimer_start(&t->timer, ns_to_ktime(period),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * SET_PERIOD, after t->period_ns changed: a running thread's next tick
 * may be a whole old period away, which would leave that CPU time
 * unsampled after a shorter period was asked for (perf restarts its timer
 * likewise).  The timer belongs to the CPU the thread runs on, so it is
 * re-armed there; a thread that is not on a CPU, or switches in elsewhere
 * meanwhile, reads the new period at its switch in, so it is not
 * interrupted (one user's SET_PERIOD over many sleeping threads would
 * otherwise send an IPI to each).  Process context, may wait.
 */
void meter_cputimer_set_period(struct meter_thread *t)
{
	if (!t->cpu_timer)
		return;
	/* period_ns before on_cpu and task_cpu(): pairs with the switch */
	smp_mb();
	if (!READ_ONCE(t->task->on_cpu))
		return;
	smp_call_function_single(task_cpu(t->task), meter_cputimer_rearm, t,
				 1);
}

static int meter_cputimer_unhook_stopped(void *unused)
{
	meter_threads_visit(meter_cputimer_unhook_other);
	return 0;
}

/* Module unload, after the last REGISTER: every thread's notifier off. */
void meter_cputimer_unhook_all(void)
{
	stop_machine(meter_cputimer_unhook_stopped, NULL, NULL);
}

/* The release work, once the thread has no notifier. */
void meter_cputimer_release(struct meter_thread *t)
{
	if (t->cpu_timer)
		hrtimer_cancel(&t->timer);
}

/* Module unload, once no thread has a notifier. */
void meter_cputimer_exit(void)
{
	if (meter_cputimer_key)
		preempt_notifier_dec();
}

#endif /* CONFIG_PREEMPT_NOTIFIERS */
