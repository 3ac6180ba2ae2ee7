// SPDX-License-Identifier: GPL-2.0
/*
 * meter.ko: Appel-style profiling with a per-thread CPU-time timer.
 *
 * Module parameters (read at use; changing them at run time affects only
 * what happens afterwards):
 *   unpriv_period_min_ns  shortest period for unprivileged users (100 us)
 *   allow_unprivileged    let users without CAP_PERFMON/CAP_SYS_ADMIN
 *                         register (1)
 *   max_user_sessions     live sessions per unprivileged user (64, 0: no
 *                         limit)
 *   max_finished          finished sessions kept (64)
 *   max_user_finished     finished sessions kept per user (64); past it,
 *                         and past max_finished, a user's own oldest goes
 *   max_finished_mb       memory kept by finished sessions (256 MB)
 *   evicted               finished sessions evicted since load (read-only)
 *   max_session_mb        memory of one session's tables (64 MB)
 *   stack_entries         distinct stacks kept per session (8192)
 *   stack_frames          frames kept per session (262144)
 *   addr_entries          distinct (function, address) pairs kept per
 *                         session (16384)
 *   max_sessions          live sessions, all users (1024, 0: no limit)
 *   max_threads           registered threads (pinned pages), all users
 *                         (16384, 0: no limit)
 *   max_user_threads      registered threads per unprivileged user (1024,
 *                         0: no limit)
 *   max_funcs             highest function id of a session (1048576)
 *   max_user_funcs        highest function id of a session created by an
 *                         unprivileged user (65536)
 *   user_wall_ticks       wall-clock ticks a second, all the threads of
 *                         one unprivileged user together (10000, 0: no
 *                         budget); past it each of the user's wall-clock
 *                         threads ticks less often (budget.c)
 *
 * Every limit hit is an error with an extended-ack message; see
 * Documentation/security.md.
 *
 * Unload tears everything down: the exit probe is removed, every
 * registration is ended and released, every session is freed.  Profiled
 * processes carry on unprofiled.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/workqueue.h>

#include "meter_kmod.h"

unsigned int meter_unpriv_period_min_ns = 100000;
module_param_named(unpriv_period_min_ns, meter_unpriv_period_min_ns, uint,
		   0644);
MODULE_PARM_DESC(unpriv_period_min_ns,
		 "Shortest sampling period for unprivileged users, ns");

bool meter_allow_unprivileged = true;
module_param_named(allow_unprivileged, meter_allow_unprivileged, bool, 0644);
MODULE_PARM_DESC(allow_unprivileged,
		 "Allow registration without CAP_PERFMON or CAP_SYS_ADMIN");

unsigned int meter_max_user_sessions = 64;
module_param_named(max_user_sessions, meter_max_user_sessions, uint, 0644);
MODULE_PARM_DESC(max_user_sessions,
		 "Live sessions per unprivileged user (0: unlimited)");

unsigned int meter_max_finished = 64;
module_param_named(max_finished, meter_max_finished, uint, 0644);
MODULE_PARM_DESC(max_finished, "Finished sessions kept");

/*
 * Read-only: finished sessions evicted by the bounds above since load, so
 * that a tool that reads a tree of sessions can tell that some were lost.
 */
unsigned int meter_max_user_finished = 64;
module_param_named(max_user_finished, meter_max_user_finished, uint, 0644);
MODULE_PARM_DESC(max_user_finished, "Finished sessions kept per user");

unsigned long meter_evicted;
module_param_named(evicted, meter_evicted, ulong, 0444);
MODULE_PARM_DESC(evicted, "Finished sessions evicted since load (read-only)");

unsigned int meter_max_finished_mb = 256;
module_param_named(max_finished_mb, meter_max_finished_mb, uint, 0644);
MODULE_PARM_DESC(max_finished_mb, "Memory kept by finished sessions, MB");

/*
 * Benchmarks only: the floor under meter's tick (Documentation/
 * performance.md).  The tick counts the interrupt and returns, so that
 * what remains is what any sampler on the same task-clock timer pays.
 */
bool meter_tick_floor;
module_param_named(tick_floor, meter_tick_floor, bool, 0644);
MODULE_PARM_DESC(tick_floor,
		 "Benchmarks only: ticks are counted and otherwise ignored");

/*
 * The CPU clock's tick: meter's own hrtimer, armed and cancelled at
 * context switch (kmod/cputimer.c), or perf's task clock when clear (the
 * only design on a kernel without CONFIG_PREEMPT_NOTIFIERS).  For
 * registrations made while it is so; Documentation/performance.md
 * compares the two.
 */
bool meter_cpu_timer = IS_ENABLED(CONFIG_PREEMPT_NOTIFIERS);
module_param_named(cpu_timer, meter_cpu_timer, bool, 0644);
MODULE_PARM_DESC(cpu_timer,
		 "CPU-clock ticks from meter's own hrtimer (1) or perf's task clock (0)");

unsigned int meter_max_session_mb = 64;
module_param_named(max_session_mb, meter_max_session_mb, uint, 0644);
MODULE_PARM_DESC(max_session_mb, "Memory of one session's tables, MB");

unsigned int meter_stack_entries = 8192;
module_param_named(stack_entries, meter_stack_entries, uint, 0444);
MODULE_PARM_DESC(stack_entries, "Distinct stacks kept per session");

unsigned int meter_stack_frames = 262144;
module_param_named(stack_frames, meter_stack_frames, uint, 0444);
MODULE_PARM_DESC(stack_frames, "Frames of stacks kept per session");

unsigned int meter_addr_entries = 16384;
module_param_named(addr_entries, meter_addr_entries, uint, 0444);
MODULE_PARM_DESC(addr_entries,
		 "Distinct (function, address) pairs kept per session");

unsigned int meter_max_user_snap_mb = 64;
module_param_named(max_user_snap_mb, meter_max_user_snap_mb, uint, 0644);
MODULE_PARM_DESC(max_user_snap_mb,
		 "Memory one user's unfinished profile dumps hold, MB (0: unlimited)");

unsigned int meter_max_sessions = 1024;
module_param_named(max_sessions, meter_max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions, "Live sessions, all users (0: unlimited)");

unsigned int meter_max_threads = 16384;
module_param_named(max_threads, meter_max_threads, uint, 0644);
MODULE_PARM_DESC(max_threads,
		 "Registered threads (pinned pages), all users (0: unlimited)");

unsigned int meter_max_user_threads = 1024;
module_param_named(max_user_threads, meter_max_user_threads, uint, 0644);
MODULE_PARM_DESC(max_user_threads,
		 "Registered threads per unprivileged user (0: unlimited)");

unsigned int meter_max_funcs = METER_FUNCS_MAX;
module_param_named(max_funcs, meter_max_funcs, uint, 0644);
MODULE_PARM_DESC(max_funcs, "Highest function id of a session");

unsigned int meter_max_user_funcs = 65536;
module_param_named(max_user_funcs, meter_max_user_funcs, uint, 0644);
MODULE_PARM_DESC(max_user_funcs,
		 "Highest function id of an unprivileged user's session");

unsigned int meter_user_wall_ticks = 10000;
module_param_named(user_wall_ticks, meter_user_wall_ticks, uint, 0644);
MODULE_PARM_DESC(user_wall_ticks,
		 "Wall-clock ticks a second of one unprivileged user's threads together (0: no budget)");

unsigned int meter_max_thread_rows = 1024;
module_param_named(max_thread_rows, meter_max_thread_rows, uint, 0644);
MODULE_PARM_DESC(max_thread_rows,
		 "Ended threads a session keeps a row for; the rest are folded into one (0: unlimited)");

atomic_t meter_threads_held = ATOMIC_INIT(0);

/* Process-context state: see the locking notes in meter.h. */
DEFINE_MUTEX(meter_mutex);
struct workqueue_struct *meter_wq;

static int __init meter_init(void)
{
	int ret;

	meter_wq = alloc_workqueue("meter", WQ_UNBOUND, 0);
	if (!meter_wq)
		return -ENOMEM;
	ret = meter_lifecycle_init();
	if (ret)
		goto err_wq;
	ret = meter_netlink_init();
	if (ret)
		goto err_lifecycle;
	return 0;

err_lifecycle:
	meter_lifecycle_exit();
err_wq:
	destroy_workqueue(meter_wq);
	return ret;
}

static void __exit meter_exit(void)
{
	meter_netlink_exit();
	meter_lifecycle_exit();
	meter_threads_end_all();
	flush_workqueue(meter_wq);
	/* a tick that a release's cancel waited for may have queued a
	 * table growth after that flush began: no tick runs now
	 */
	flush_workqueue(meter_wq);
	meter_cputimer_exit();
	mutex_lock(&meter_mutex);
	meter_sessions_destroy();
	mutex_unlock(&meter_mutex);
	/* the sessions' frees are queued after a grace period: wait for
	 * the queueing, then destroy_workqueue() runs them
	 */
	rcu_barrier();
	destroy_workqueue(meter_wq);
}

module_init(meter_init);
module_exit(meter_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("meter: Appel-style profiler with a per-thread CPU-time timer");
MODULE_AUTHOR("meter developers");
