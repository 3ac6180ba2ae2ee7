// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread registration.
 *
 * A thread registers itself: the netlink doit runs in its context.  The
 * module checks that the page is private anonymous memory, charges it to
 * RLIMIT_MEMLOCK, pins it (FOLL_WRITE | FOLL_LONGTERM) and afterwards reads
 * it only through the kernel mapping.  It then creates a kernel perf
 * task-clock counter on the thread whose overflow handler is the tick.
 *
 * A registration ends exactly once (a cmpxchg on the thread's state) from
 * whichever comes first: UNREGISTER, the exit probe, the tick noticing an
 * exec, or module unload.  Ending is atomic-context safe; the sleeping part
 * (perf_event_release_kernel, unpin, uncharge) runs on meter_wq, and
 * then the record is freed: what the profile needs of the thread becomes
 * a row of its session (ended.c).
 */
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>
#include <net/netlink.h>

#include "meter_kmod.h"

static DEFINE_HASHTABLE(meter_reg_hash, 8);
static DEFINE_RAW_SPINLOCK(meter_reg_lock);

/* Caller is in an RCU read-side section (or holds meter_reg_lock). */
struct meter_thread *meter_thread_find(struct task_struct *tsk)
{
	struct meter_thread *t;

	hash_for_each_possible_rcu(meter_reg_hash, t, hnode,
				   (unsigned long)tsk)
		if (t->task == tsk)
			return t;
	return NULL;
}

static void meter_thread_release(struct work_struct *work)
{
	struct meter_thread *t = container_of(work, struct meter_thread,
					      release);
	struct meter_session *s = t->session;
	struct mm_struct *mm = t->mm;

	/* the wall tick sees the state and stops re-arming: this waits out
	 * one that is running now
	 */
	if (s->clock == METER_CLOCK_WALL)
		hrtimer_cancel(&t->timer);
	meter_cputimer_release(t);
	/* a snapshot reading t's counters holds live_lock: wait for it */
	mutex_lock(&s->live_lock);
	mutex_lock(&meter_mutex);
	if (t->event) {
		perf_event_release_kernel(t->event);
		t->event = NULL;
	}
	/* counts not sent by now are not read: the mm is about to go */
	meter_live_fold(t, 0, true);
	mutex_unlock(&meter_mutex);
	mutex_unlock(&s->live_lock);

	/* No tick can run any more: the page and mm can go. */
	unpin_user_page(t->page);
	t->page = NULL;
	t->kpage = NULL;
	if (mmget_not_zero(mm)) {
		account_locked_vm(mm, 1, false);
		mmput(mm);
	}
	/* Else the address space is gone and its charge with it. */
	t->mm = NULL;
	mmdrop(mm);
	put_task_struct(t->task);
	atomic_dec(&s->threads_held);
	atomic_dec(&meter_threads_held);
	if (s->clock == METER_CLOCK_WALL)
		meter_budget_wall_thread(s, -1);

	mutex_lock(&meter_mutex);
	meter_ended_add(s, t);
	meter_sessions_evict();
	mutex_unlock(&meter_mutex);
	meter_session_put(s);
	/* the exit probe may still hold it from the registration hash */
	kfree_rcu(t, rcu);
}

/*
 * The task's name, read as tracepoints read it: without task_lock(),
 * which a tick in hard interrupt context may not take (a sleeping lock on
 * PREEMPT_RT).  A rename racing with it may give a mixed name, never an
 * unterminated one.
 */
static void meter_thread_comm(char *comm, struct task_struct *tsk)
{
	memcpy(comm, tsk->comm, TASK_COMM_LEN);
	comm[TASK_COMM_LEN - 1] = '\0';
}

/* Any context, including the tick and the exit probe. */
void meter_thread_end(struct meter_thread *t, enum meter_end_reason why)
{
	struct meter_session *s = t->session;
	unsigned long flags;

	if (cmpxchg(&t->state, METER_THREAD_LIVE, METER_THREAD_EXITED) !=
	    METER_THREAD_LIVE)
		return;

	raw_spin_lock_irqsave(&meter_reg_lock, flags);
	hash_del_rcu(&t->hnode);
	raw_spin_unlock_irqrestore(&meter_reg_lock, flags);

	raw_spin_lock_irqsave(&s->lock, flags);
	s->threads_live--;
	/* the task is held until the release: its name as it ends */
	meter_thread_comm(t->comm, t->task);
	/* exec replaced the whole thread group's mm: the process image
	 * this session profiled is gone.
	 */
	if (why == METER_END_EXEC)
		meter_session_finish_locked(s);
	raw_spin_unlock_irqrestore(&s->lock, flags);

	meter_cputimer_unhook(t);
	queue_work(meter_wq, &t->release);
}

/* Caller holds meter_mutex. */
int meter_thread_set_period(struct meter_thread *t, u64 period_ns)
{
	/* the hrtimer ticks re-arm themselves with the new period */
	WRITE_ONCE(t->period_ns, period_ns);
	if (READ_ONCE(t->state) != METER_THREAD_LIVE)
		return 0;
	meter_cputimer_set_period(t);
	if (!t->event)
		return 0;
	return perf_event_period(t->event, period_ns);
}

/*
 * Module unload: ends every registration still in the hash, whether or
 * not its session is still listed.  Flush meter_wq afterwards.
 */
void meter_threads_end_all(void)
{
	struct meter_thread *t;
	int bkt;

	/* the threads' own notifiers cannot be removed by the loop below */
	meter_cputimer_unhook_all();
	do {
		rcu_read_lock();
		hash_for_each_rcu(meter_reg_hash, bkt, t, hnode)
			break;
		if (t)
			meter_thread_end(t, METER_END_UNLOAD);
		rcu_read_unlock();
		cond_resched();
	} while (t);
}

void meter_threads_visit(void (*fn)(struct meter_thread *t))
{
	struct meter_thread *t;
	int bkt;

	hash_for_each(meter_reg_hash, bkt, t, hnode)
		fn(t);
}

static int meter_page_check_vma(struct mm_struct *mm, unsigned long addr,
				struct netlink_ext_ack *extack)
{
	struct vm_area_struct *vma;
	int ret = 0;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (!vma) {
		NL_SET_ERR_MSG_MOD(extack, "nothing is mapped at the page address");
		ret = -EFAULT;
	} else if (!vma_is_anonymous(vma) || (vma->vm_flags & VM_SHARED)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "page is not private anonymous memory");
		ret = -EINVAL;
	} else if (!(vma->vm_flags & VM_WRITE)) {
		NL_SET_ERR_MSG_MOD(extack, "page is not writable");
		ret = -EACCES;
	}
	mmap_read_unlock(mm);
	return ret;
}

/*
 * Whether child is ancestor or lies below it: in_userns(), which is not
 * exported to modules.
 */
static bool meter_userns_below(const struct user_namespace *ancestor,
			       const struct user_namespace *child)
{
	while (child->level > ancestor->level)
		child = child->parent;
	return child == ancestor;
}

/*
 * One share of the per-user caps: the sessions of euid uid, or (ns not
 * NULL) those made in user namespace ns or below it.  Counts the live
 * ones, or (threads) their registrations still holding a pin.  Caller
 * holds meter_mutex.
 */
static unsigned int meter_share_count(kuid_t uid, struct user_namespace *ns,
				      bool threads)
{
	struct meter_session *s;
	unsigned int n = 0;

	list_for_each_entry(s, &meter_sessions, node) {
		if (ns ? !meter_userns_below(ns, s->user_ns) :
			 !uid_eq(s->uid, uid))
			continue;
		if (threads)
			n += atomic_read(&s->threads_held);
		else
			n += READ_ONCE(s->state) == METER_STATE_LIVE;
	}
	return n;
}

/* Caller holds meter_mutex. */
static unsigned int meter_all_live_sessions(void)
{
	struct meter_session *s;
	unsigned int n = 0;

	list_for_each_entry(s, &meter_sessions, node)
		n += READ_ONCE(s->state) == METER_STATE_LIVE;
	return n;
}

/*
 * The caps a new registration must fit in (module parameters; 0: no
 * limit).  Per-user caps apply to unprivileged callers, global caps to
 * everyone.  A caller in a user namespace other than the first is held
 * to its euid's share and to its namespace's: a container's many uids
 * (a subordinate range) together get one user's share, and a user who
 * makes namespaces still gets one.  Caller holds meter_mutex.
 */
static int meter_check_caps(bool priv, bool new_session,
			    struct netlink_ext_ack *extack)
{
	struct user_namespace *ns = current_user_ns();
	kuid_t uid = current_euid();

	if (ns == &init_user_ns)
		ns = NULL;
	if (new_session && meter_max_sessions &&
	    meter_all_live_sessions() >= meter_max_sessions) {
		NL_SET_ERR_MSG_MOD(extack,
				   "too many live sessions (max_sessions)");
		return -ENOSPC;
	}
	if (new_session && !priv && meter_max_user_sessions &&
	    (meter_share_count(uid, NULL, false) >= meter_max_user_sessions ||
	     (ns && meter_share_count(uid, ns, false) >=
		    meter_max_user_sessions))) {
		NL_SET_ERR_MSG_MOD(extack,
				   "too many live sessions for this user or user namespace (max_user_sessions)");
		return -EUSERS;
	}
	if (meter_max_threads &&
	    atomic_read(&meter_threads_held) >= meter_max_threads) {
		NL_SET_ERR_MSG_MOD(extack,
				   "too many registered threads (max_threads)");
		return -ENOSPC;
	}
	if (!priv && meter_max_user_threads &&
	    (meter_share_count(uid, NULL, true) >= meter_max_user_threads ||
	     (ns && meter_share_count(uid, ns, true) >=
		    meter_max_user_threads))) {
		NL_SET_ERR_MSG_MOD(extack,
				   "too many registered threads for this user or user namespace (max_user_threads)");
		return -EMFILE;
	}
	return 0;
}

static struct perf_event *meter_thread_counter(struct meter_thread *t,
					       u64 period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = period_ns,
		.pinned = 1,
		/* Not inherited: a forked child starts unregistered. */
		.inherit = 0,
	};

	return perf_event_create_kernel_counter(&attr, -1, t->task,
						meter_sample_tick, t);
}

static bool meter_counts_addr_ok(u64 addr)
{
	u64 bytes = (u64)(METER_FUNCS_MAX + 1) * sizeof(u64);

	return IS_ALIGNED(addr, sizeof(u64)) && addr < TASK_SIZE &&
	       TASK_SIZE - addr >= bytes;
}

/*
 * The thread's tick: a perf task-clock counter or, with cpu_timer, an
 * hrtimer that runs only while the thread does (CPU clock), or an hrtimer
 * that fires whether or not the thread runs (wall clock), in hard
 * interrupt context even on PREEMPT_RT since the tick takes the session's
 * raw spinlock.  The hrtimers are started once the thread is listed.
 */
static int meter_thread_start(struct meter_thread *t, u32 clock,
			      u64 period_ns, struct netlink_ext_ack *extack)
{
	struct perf_event *event;

	t->period_ns = period_ns;
	if (clock == METER_CLOCK_WALL) {
		hrtimer_init(&t->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
		t->timer.function = meter_sample_wall_tick;
		return 0;
	}
	if (IS_ENABLED(CONFIG_PREEMPT_NOTIFIERS) && READ_ONCE(meter_cpu_timer)) {
		meter_cputimer_init(t, period_ns);
		return 0;
	}
	event = meter_thread_counter(t, period_ns);
	if (IS_ERR(event)) {
		NL_SET_ERR_MSG_MOD(extack, "cannot create the task-clock counter");
		return PTR_ERR(event);
	}
	t->event = event;
	return 0;
}

/*
 * What REGISTER asks, checked before anything is taken: privilege, a user
 * thread, the addresses, the period (clamped into *period_ns), and not a
 * second registration (a registration from before an exec is ended).
 */
static int meter_reg_check(const struct meter_thread_reg *reg,
			   struct task_struct *tsk, u64 *period_ns,
			   struct netlink_ext_ack *extack)
{
	struct meter_thread *old;
	bool registered;
	int ret;

	if (!reg->privileged && !meter_allow_unprivileged) {
		NL_SET_ERR_MSG_MOD(extack,
				   "unprivileged registration is disabled");
		return -EPERM;
	}
	if (!tsk->mm || (tsk->flags & PF_EXITING)) {
		NL_SET_ERR_MSG_MOD(extack, "a kernel or exiting thread cannot register");
		return -EINVAL;
	}
	if (!reg->page_addr || !PAGE_ALIGNED(reg->page_addr) ||
	    reg->page_addr > TASK_SIZE - PAGE_SIZE) {
		NL_SET_ERR_MSG_MOD(extack,
				   "page address is not a page-aligned user address");
		return -EINVAL;
	}
	if (reg->counts_addr && !meter_counts_addr_ok(reg->counts_addr)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "counters address is not an aligned user address with room for every id");
		return -EINVAL;
	}
	*period_ns = meter_period_clamp(reg->period_ns, reg->privileged,
					extack, &ret);
	if (ret)
		return ret;

	rcu_read_lock();
	old = meter_thread_find(tsk);
	registered = old && old->mm == tsk->mm;
	if (old && !registered)
		meter_thread_end(old, METER_END_EXEC);	/* before an exec */
	rcu_read_unlock();
	if (registered) {
		NL_SET_ERR_MSG_MOD(extack, "thread is already registered");
		return -EEXIST;
	}
	return 0;
}

static void meter_page_unpin(struct mm_struct *mm, struct page *page)
{
	unpin_user_page(page);
	account_locked_vm(mm, 1, false);
}

/*
 * Pins the thread's page, charged to RLIMIT_MEMLOCK: private anonymous
 * memory of the sender's own mm, with the page's magic and version.
 */
static int meter_page_pin(struct mm_struct *mm, u64 page_addr,
			  struct page **page, const struct meter_page **kpage,
			  struct netlink_ext_ack *extack)
{
	int ret = meter_page_check_vma(mm, page_addr, extack);

	if (ret)
		return ret;
	ret = account_locked_vm(mm, 1, true);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack, "RLIMIT_MEMLOCK exceeded");
		return ret;
	}
	ret = pin_user_pages_fast(page_addr, 1, FOLL_WRITE | FOLL_LONGTERM,
				  page);
	if (ret != 1) {
		NL_SET_ERR_MSG_MOD(extack, "cannot pin the page");
		account_locked_vm(mm, 1, false);
		return ret < 0 ? ret : -EFAULT;
	}
	/* The VMA check raced with munmap/mmap: trust only the page. */
	if (!PageAnon(*page)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "page is not private anonymous memory");
		ret = -EINVAL;
		goto err;
	}
	*kpage = page_address(*page);
	if (READ_ONCE((*kpage)->magic) != METER_PAGE_MAGIC ||
	    READ_ONCE((*kpage)->version) != METER_PAGE_VERSION) {
		NL_SET_ERR_MSG_MOD(extack, "bad page magic or version");
		ret = -EINVAL;
		goto err;
	}
	return 0;
err:
	meter_page_unpin(mm, *page);
	return ret;
}

/*
 * The session tsk's thread joins, made if there is none; a joiner whose
 * credentials differ restricts it.  Caller holds meter_mutex.
 */
static struct meter_session *meter_reg_session(struct meter_thread_reg *reg,
					       struct task_struct *tsk,
					       u64 period_ns, bool *created,
					       struct netlink_ext_ack *extack)
{
	struct meter_session *s = meter_session_find_live(tsk);
	int ret = meter_check_caps(reg->privileged, !s, extack);

	if (ret)
		return ERR_PTR(ret);
	if (!s) {
		s = meter_session_create(tsk, reg, period_ns, reg->privileged,
					 extack);
		*created = !IS_ERR(s);
	} else if (!uid_eq(current_euid(), s->uid) ||
		   meter_task_restricted(tsk)) {
		/* Credentials changed since the session began: privileged
		 * readers only from now on.
		 */
		WRITE_ONCE(s->restricted, true);
	}
	return s;
}

/* The started thread into its session and the registry; its tick on. */
static void meter_thread_publish(struct meter_thread *t,
				 struct task_struct *tsk, u64 period_ns)
{
	struct meter_session *s = t->session;
	unsigned long flags;

	atomic_inc(&s->threads_held);
	atomic_inc(&meter_threads_held);
	if (s->clock == METER_CLOCK_WALL)
		meter_budget_wall_thread(s, 1);
	raw_spin_lock_irqsave(&s->lock, flags);
	list_add_tail(&t->node, &s->threads);
	s->threads_live++;
	t->seq = s->threads_total++;
	raw_spin_unlock_irqrestore(&s->lock, flags);

	raw_spin_lock_irqsave(&meter_reg_lock, flags);
	hash_add_rcu(meter_reg_hash, &t->hnode, (unsigned long)tsk);
	raw_spin_unlock_irqrestore(&meter_reg_lock, flags);

	if (s->clock == METER_CLOCK_WALL)
		hrtimer_start(&t->timer, ns_to_ktime(period_ns),
			      HRTIMER_MODE_REL_HARD);
	else if (meter_cputimer_on(t))
		meter_cputimer_hook(t);
}

int meter_thread_register(struct meter_thread_reg *reg,
			  struct netlink_ext_ack *extack)
{
	struct task_struct *tsk = current;
	struct mm_struct *mm = tsk->mm;
	const struct meter_page *kpage;
	struct meter_session *s;
	struct meter_thread *t;
	bool created = false;
	struct page *page;
	u64 period_ns;
	int ret;

	ret = meter_reg_check(reg, tsk, &period_ns, extack);
	if (ret)
		return ret;
	ret = meter_page_pin(mm, reg->page_addr, &page, &kpage, extack);
	if (ret)
		return ret;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t) {
		ret = -ENOMEM;
		goto err_unpin;
	}

	mutex_lock(&meter_mutex);
	s = meter_reg_session(reg, tsk, period_ns, &created, extack);
	if (IS_ERR(s)) {
		ret = PTR_ERR(s);
		goto err_unlock;
	}
	period_ns = s->period_ns;

	meter_session_get(s);
	t->session = s;
	t->task = get_task_struct(tsk);
	t->tid = task_pid_nr(tsk);
	t->pid = get_pid(task_pid(tsk));
	meter_thread_comm(t->comm, tsk);
	mmgrab(mm);
	t->mm = mm;
	t->page = page;
	t->kpage = kpage;
	t->state = METER_THREAD_LIVE;
	t->counts_addr = reg->counts_addr;
	INIT_WORK(&t->release, meter_thread_release);

	ret = meter_thread_start(t, s->clock, period_ns, extack);
	if (ret)
		goto err_thread;
	meter_thread_publish(t, tsk, period_ns);
	reg->cookie = s->cookie;
	reg->period_ns = period_ns;
	reg->clock = s->clock;
	meter_sessions_evict();
	mutex_unlock(&meter_mutex);
	return 0;

err_thread:
	put_pid(t->pid);
	put_task_struct(tsk);
	mmdrop(mm);
	meter_session_put(s);
	if (created)
		meter_session_unlink(s);
err_unlock:
	mutex_unlock(&meter_mutex);
	kfree(t);
err_unpin:
	meter_page_unpin(mm, page);
	return ret;
}

int meter_thread_unregister(struct netlink_ext_ack *extack)
{
	struct meter_thread *t;

	rcu_read_lock();
	t = meter_thread_find(current);
	if (t)
		meter_thread_end(t, METER_END_UNREGISTER);
	rcu_read_unlock();
	if (!t) {
		NL_SET_ERR_MSG_MOD(extack, "thread is not registered");
		return -ENOENT;
	}
	return 0;
}
