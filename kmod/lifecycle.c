// SPDX-License-Identifier: GPL-2.0
/*
 * Process and thread lifecycle: the sched_process_exit tracepoint.
 *
 * The tracepoint symbols are not exported; the tracepoint is found by name
 * with for_each_kernel_tracepoint() and a probe attached with
 * tracepoint_probe_register().  The probe runs in the exiting thread, after
 * exit_mm() and before exit_notify(), with preemption disabled: it ends the
 * thread's registration (the counts are already in the session: the tick
 * writes them there directly) and, when the whole thread group is dead,
 * marks the process's session EXITED.  Both happen before the parent can
 * reap the process, so a PROFILE_GET after waitpid() sees the final counts.
 * Releasing the perf counter and the pin is deferred to meter_wq.
 *
 * exec is noticed by the tick (current->mm is no longer the registered mm)
 * and by REGISTER; fork needs nothing: the child has no counter.
 */
#include <linux/pid.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "meter_kmod.h"

static struct tracepoint *meter_tp_exit;

static void meter_probe_exit(void *data, struct task_struct *p)
{
	struct meter_thread *t;

	rcu_read_lock();
	t = meter_thread_find(p);
	if (t)
		meter_thread_end(t, METER_END_EXIT);
	if (!atomic_read(&p->signal->live))
		meter_sessions_group_dead(task_tgid(p));
	rcu_read_unlock();
}

static void meter_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		meter_tp_exit = tp;
}

int meter_lifecycle_init(void)
{
	for_each_kernel_tracepoint(meter_find_tp, NULL);
	if (!meter_tp_exit) {
		pr_err("meter: tracepoint sched_process_exit not found\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(meter_tp_exit, meter_probe_exit,
					 NULL);
}

void meter_lifecycle_exit(void)
{
	tracepoint_probe_unregister(meter_tp_exit, meter_probe_exit, NULL);
	tracepoint_synchronize_unregister();
}
