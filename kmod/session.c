// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: one per profiled process.
 *
 * The first thread of a process to register creates the session; later
 * threads of the same process (same thread group and same mm) join it.  A
 * session is identified by a random 64-bit cookie (pids are reused) and
 * outlives its process until it is deleted or evicted: at most
 * meter_max_finished finished sessions, using at most
 * meter_max_finished_mb megabytes, are kept; the oldest finished session
 * goes first.
 *
 * The session list is changed under meter_mutex and read under RCU by the
 * exit probe.  A session is freed when its last reference goes, always in
 * process context, after an RCU grace period.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/user_namespace.h>
#include <net/netlink.h>

#include "meter_kmod.h"

LIST_HEAD(meter_sessions);
/*
 * The same sessions by process, for the exit probe: a process's exit
 * looks at its own bucket, not at every session.  Written under
 * meter_mutex, read under RCU.
 */
static DEFINE_HASHTABLE(meter_tgid_hash, 8);
static struct lock_class_key meter_session_lock_key;
static u64 meter_session_seq;

/*
 * The effective period of a request: 0 asks for the default (raised to
 * the unprivileged floor if that is higher).  A period outside 10 us .. 1 s
 * is ERANGE; an unprivileged period below unpriv_period_min_ns is EACCES,
 * never silently raised.
 */
u64 meter_period_clamp(u64 period_ns, bool privileged,
		       struct netlink_ext_ack *extack, int *err)
{
	u64 floor = privileged ? METER_PERIOD_MIN_NS :
		max_t(u64, METER_PERIOD_MIN_NS, meter_unpriv_period_min_ns);

	*err = 0;
	if (!period_ns)
		return min_t(u64, max_t(u64, METER_PERIOD_DEFAULT_NS, floor),
			     METER_PERIOD_MAX_NS);
	if (period_ns < METER_PERIOD_MIN_NS ||
	    period_ns > METER_PERIOD_MAX_NS) {
		NL_SET_ERR_MSG_MOD(extack,
				   "period out of range (10 us .. 1 s)");
		*err = -ERANGE;
		return 0;
	}
	if (period_ns < floor) {
		NL_SET_ERR_MSG_MOD(extack,
				   "period below unpriv_period_min_ns for unprivileged users (needs CAP_PERFMON)");
		*err = -EACCES;
		return 0;
	}
	return period_ns;
}

/*
 * A task whose session only privileged readers may see: its mm is not
 * dumpable (prctl(PR_SET_DUMPABLE, 0), a set-id exec) or its credentials
 * are mixed (set-id).
 */
bool meter_task_restricted(struct task_struct *tsk)
{
	const struct cred *cred = current_cred();

	if (!tsk->mm || get_dumpable(tsk->mm) != SUID_DUMP_USER)
		return true;
	return !uid_eq(cred->euid, cred->uid) ||
	       !uid_eq(cred->euid, cred->suid) ||
	       !gid_eq(cred->egid, cred->gid) ||
	       !gid_eq(cred->egid, cred->sgid);
}

static bool meter_cookie_used(u64 cookie)
{
	struct meter_session *s;

	list_for_each_entry(s, &meter_sessions, node)
		if (s->cookie == cookie)
			return true;
	return false;
}

/*
 * Grows the stack and address tables the tick found filling up, charged to the
 * memory cgroup of the process that created the session, within
 * max_session_mb.  Holds meter_mutex so that no snapshot or reset sees
 * the table halfway.
 */
static void meter_session_grow_work(struct work_struct *work)
{
	struct meter_session *s = container_of(work, struct meter_session,
					       grow_work);
	size_t limit = (size_t)meter_max_session_mb << 20, grown = 0, room;
	struct mem_cgroup *old_memcg;

	mutex_lock(&meter_mutex);
	old_memcg = set_active_memcg(s->memcg);
	meter_stacks_grow(&s->stacks, &s->lock,
			  limit > s->bytes ? limit - s->bytes : 0, &grown);
	room = s->bytes + grown;
	meter_stacks_grow(&s->addrs, &s->lock, limit > room ? limit - room : 0,
			  &grown);
	set_active_memcg(old_memcg);
	s->bytes += grown;
	clear_bit(0, &s->grow_queued);
	mutex_unlock(&meter_mutex);
	meter_session_put(s);
}

/* From the tick: queue one growth at a time, holding a reference. */
void meter_session_want_grow(struct meter_session *s)
{
	if (test_and_set_bit(0, &s->grow_queued))
		return;
	if (!refcount_inc_not_zero(&s->ref)) {
		clear_bit(0, &s->grow_queued);
		return;
	}
	queue_work(meter_wq, &s->grow_work);
}

/* Caller holds meter_mutex. */
struct meter_session *meter_session_create(struct task_struct *tsk,
					   const struct meter_thread_reg *reg,
					   u64 period_ns, bool privileged,
					   struct netlink_ext_ack *extack)
{
	struct meter_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		goto err;
	s->chunks = kvcalloc(METER_NCHUNKS, sizeof(*s->chunks),
			     GFP_KERNEL_ACCOUNT);
	if (!s->chunks)
		goto err_session;
	if (meter_stacks_init(&s->stacks, meter_stack_entries,
			      meter_stack_frames))
		goto err_chunks;
	/* clamped as meter_stacks_init() clamps entries: no u32 overflow */
	if (meter_stacks_init(&s->addrs, meter_addr_entries,
			      min(meter_addr_entries, 1U << 20) *
			      METER_ADDR_KEY_WORDS))
		goto err_stacks;

	refcount_set(&s->ref, 1);	/* the session list's reference */
	raw_spin_lock_init(&s->lock);
	/* one name in /proc/lock_stat (bench/scaling.sh) */
	lockdep_set_class_and_name(&s->lock, &meter_session_lock_key,
				   "meter_session_lock");
	INIT_LIST_HEAD(&s->threads);
	mutex_init(&s->live_lock);
	mutex_init(&s->maps_lock);
	INIT_WORK(&s->grow_work, meter_session_grow_work);
	s->memcg = get_mem_cgroup_from_mm(tsk->mm);
	do {
		s->cookie = get_random_u64();
	} while (!s->cookie || meter_cookie_used(s->cookie));
	s->seq = ++meter_session_seq;
	s->parent_cookie = reg->parent_cookie;
	s->call_cost_ps = reg->call_cost_ps;
	s->period_ns = period_ns;
	s->clock = reg->clock;
	s->tgid = get_pid(task_tgid(tsk));
	s->pid = task_tgid_nr(tsk);
	s->uid = current_euid();
	s->user_ns = get_user_ns(current_user_ns());
	if (meter_budget_init(s))
		goto err_ns;
	s->privileged = privileged;
	s->restricted = meter_task_restricted(tsk);
	s->max_funcs = privileged ? meter_max_funcs :
		min(meter_max_funcs, meter_max_user_funcs);
	s->max_funcs = min_t(u32, s->max_funcs, METER_FUNCS_MAX);
	get_task_comm(s->comm, tsk);
	mmgrab(tsk->mm);
	s->mm = tsk->mm;
	s->start_ns = ktime_get_boottime_ns();
	s->state = METER_STATE_LIVE;
	s->bytes = sizeof(*s) + METER_NCHUNKS * sizeof(*s->chunks) +
		   meter_stacks_bytes(&s->stacks) +
		   meter_stacks_bytes(&s->addrs);
	list_add_tail_rcu(&s->node, &meter_sessions);
	hash_add_rcu(meter_tgid_hash, &s->tgid_node, (unsigned long)s->tgid);
	return s;

err_ns:
	put_user_ns(s->user_ns);
	put_pid(s->tgid);
	mem_cgroup_put(s->memcg);
	meter_stacks_free(&s->addrs);
err_stacks:
	meter_stacks_free(&s->stacks);
err_chunks:
	kvfree(s->chunks);
err_session:
	kfree(s);
err:
	NL_SET_ERR_MSG_MOD(extack, "out of memory for the session");
	return ERR_PTR(-ENOMEM);
}

/*
 * The live session that a thread of tsk's process joins, or NULL.  A live
 * session of the same process with another mm belongs to the image before
 * an exec: it is finished.  Caller holds meter_mutex.
 */
struct meter_session *meter_session_find_live(struct task_struct *tsk)
{
	struct meter_session *s, *found = NULL;

	list_for_each_entry(s, &meter_sessions, node) {
		if (READ_ONCE(s->state) != METER_STATE_LIVE ||
		    s->tgid != task_tgid(tsk))
			continue;
		if (s->mm == tsk->mm)
			found = s;
		else
			meter_session_finish(s);
	}
	return found;
}

/* The exit probe, RCU read side: the dead process's live sessions end. */
void meter_sessions_group_dead(struct pid *tgid)
{
	struct meter_session *s;

	hash_for_each_possible_rcu(meter_tgid_hash, s, tgid_node,
				   (unsigned long)tgid)
		if (s->tgid == tgid && READ_ONCE(s->state) == METER_STATE_LIVE)
			meter_session_finish(s);
}

/*
 * By cookie, or by pid as the caller's pid namespace sees it.  Caller
 * holds meter_mutex.
 */
struct meter_session *meter_session_lookup(u64 cookie, pid_t pid)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct meter_session *s, *found = NULL;

	list_for_each_entry(s, &meter_sessions, node) {
		if (cookie ? s->cookie == cookie :
		    pid_nr_ns(s->tgid, ns) == pid)
			found = s;	/* by pid: the newest wins */
		if (cookie && found)
			break;
	}
	return found;
}

/*
 * At every read: the reader sees the session's process in its own pid
 * namespace (a container sees only its own), and is privileged
 * (CAP_PERFMON or CAP_SYS_ADMIN, of the sender and the socket's opener)
 * or has the euid that made the session, which must not be restricted:
 * set-id at registration, or non-dumpable then or since (a process that
 * calls prctl(PR_SET_DUMPABLE, 0) after registering is seen here; the
 * mm is the session's while it lives).
 */
bool meter_session_visible(const struct meter_session *s)
{
	return pid_nr_ns(s->tgid, task_active_pid_ns(current)) != 0;
}

bool meter_session_may_read(struct meter_session *s, bool privileged)
{
	if (!meter_session_visible(s))
		return false;
	if (privileged)
		return true;
	if (READ_ONCE(s->state) == METER_STATE_LIVE &&
	    get_dumpable(s->mm) != SUID_DUMP_USER)
		WRITE_ONCE(s->restricted, true);
	return !READ_ONCE(s->restricted) && uid_eq(current_euid(), s->uid);
}

void meter_session_get(struct meter_session *s)
{
	refcount_inc(&s->ref);
}

/*
 * Runs a grace period after the last put (the exit probe may still have
 * been walking the list or the threads), on meter_wq: no caller waits
 * for a grace period under meter_mutex or genl's mutex.
 */
static void meter_session_free_work(struct work_struct *work)
{
	struct meter_session *s = container_of(to_rcu_work(work),
					       struct meter_session,
					       free_work);
	u32 c, i;

	/* every thread's release held a reference: none is listed now */
	meter_ended_free(s);
	for (c = 0; c < METER_NCHUNKS; c++) {
		struct meter_func_slot *chunk = s->chunks[c];

		if (!chunk)
			continue;
		for (i = 0; i < METER_CHUNK_IDS; i++)
			kfree(chunk[i].name);
		kvfree(chunk);
	}
	kvfree(s->chunks);
	meter_stacks_free(&s->stacks);
	meter_stacks_free(&s->addrs);
	meter_maps_free(&s->maps);
	meter_budget_free(s);
	put_user_ns(s->user_ns);
	mem_cgroup_put(s->memcg);
	put_pid(s->tgid);
	mmdrop(s->mm);
	kfree(s);
}

/* Process context only. */
void meter_session_put(struct meter_session *s)
{
	if (!refcount_dec_and_test(&s->ref))
		return;
	INIT_RCU_WORK(&s->free_work, meter_session_free_work);
	queue_rcu_work(meter_wq, &s->free_work);
}

/* Caller holds s->lock. */
void meter_session_finish_locked(struct meter_session *s)
{
	if (s->state != METER_STATE_LIVE)
		return;
	s->end_ns = ktime_get_boottime_ns();
	WRITE_ONCE(s->state, METER_STATE_EXITED);
}

/* Any context. */
void meter_session_finish(struct meter_session *s)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	meter_session_finish_locked(s);
	raw_spin_unlock_irqrestore(&s->lock, flags);
}

/* Drops the list's reference.  Caller holds meter_mutex. */
void meter_session_unlink(struct meter_session *s)
{
	list_del_rcu(&s->node);
	hash_del_rcu(&s->tgid_node);
	meter_session_put(s);
}

/* The finished sessions of s's user, and the oldest of them. */
static unsigned int meter_user_finished(const struct meter_session *s,
					struct meter_session **oldest)
{
	struct meter_session *o;
	unsigned int n = 0;

	*oldest = NULL;
	list_for_each_entry(o, &meter_sessions, node) {
		if (READ_ONCE(o->state) != METER_STATE_EXITED ||
		    !uid_eq(o->uid, s->uid))
			continue;
		n++;
		if (!*oldest || o->end_ns < (*oldest)->end_ns)
			*oldest = o;
	}
	return n;
}

/*
 * The finished session to evict, or NULL: the oldest of a user past
 * max_user_finished; past the global bounds, the oldest of the user who
 * keeps the most.  One user's many short runs evict that user's own
 * results, never another's.  The walk is quadratic in the finished
 * sessions, which the bounds keep few.
 */
static struct meter_session *meter_evict_victim(void)
{
	u64 limit = (u64)meter_max_finished_mb << 20, bytes = 0;
	struct meter_session *s, *oldest, *victim = NULL;
	unsigned int n = 0, most = 0, mine;

	list_for_each_entry(s, &meter_sessions, node) {
		if (READ_ONCE(s->state) != METER_STATE_EXITED)
			continue;
		n++;
		bytes += s->bytes;
		mine = meter_user_finished(s, &oldest);
		if (mine > meter_max_user_finished)
			return oldest;
		if (mine > most) {
			most = mine;
			victim = oldest;
		}
	}
	return n > meter_max_finished || bytes > limit ? victim : NULL;
}

/* Evicts finished sessions beyond the bounds.  meter_mutex. */
void meter_sessions_evict(void)
{
	struct meter_session *victim;

	while ((victim = meter_evict_victim())) {
		meter_session_unlink(victim);
		/* read locklessly through sysfs */
		WRITE_ONCE(meter_evicted, meter_evicted + 1);
	}
}

/* Module unload: every thread has been released.  meter_mutex. */
void meter_sessions_destroy(void)
{
	struct meter_session *s, *tmp;

	list_for_each_entry_safe(s, tmp, &meter_sessions, node)
		meter_session_unlink(s);
}

/*
 * Caller holds meter_mutex and s->live_lock.  The stack and address tables
 * are replaced by empty ones made beforehand, not cleared under the lock:
 * the lock (interrupts off) is held for pointer swaps, whatever the
 * tables' size.
 */
static int meter_session_reset_locked(struct meter_session *s)
{
	struct meter_stacks fresh, fresh_addrs;
	struct meter_thread *t;
	unsigned long flags;
	u32 c, i, nfuncs = 0;

	if (meter_stacks_init_like(&fresh, &s->stacks))
		return -ENOMEM;
	if (meter_stacks_init_like(&fresh_addrs, &s->addrs)) {
		meter_stacks_free(&fresh);
		return -ENOMEM;
	}
	atomic64_set(&s->samples, 0);
	atomic64_set(&s->ticks, 0);
	atomic64_set(&s->no_current, 0);
	atomic64_set(&s->invalid, 0);
	atomic64_set(&s->lost, 0);
	atomic64_set(&s->truncated, 0);
	atomic64_set(&s->addrs_lost, 0);
	s->slow_entries = 0;
	atomic64_set(&s->stretched, 0);
	atomic64_set(&s->samples_off[0], 0);
	atomic64_set(&s->samples_off[1], 0);
	for (c = 0; c < METER_NCHUNKS; c++) {
		struct meter_func_slot *chunk = s->chunks[c];

		if (!chunk)
			continue;
		for (i = 0; i < METER_CHUNK_IDS; i++) {
			atomic64_set(&chunk[i].self, 0);
			atomic64_set(&chunk[i].self_off[0], 0);
			atomic64_set(&chunk[i].self_off[1], 0);
			chunk[i].calls = 0;
			chunk[i].alloc_calls = 0;
			chunk[i].alloc_bytes = 0;
			/* what is left in use: the names */
			if (chunk[i].name)
				nfuncs++;
		}
	}
	s->nfuncs = nfuncs;
	raw_spin_lock_irqsave(&s->lock, flags);
	swap(s->stacks, fresh);
	swap(s->addrs, fresh_addrs);
	list_for_each_entry(t, &s->threads, node)
		t->samples_reset = READ_ONCE(t->samples);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	meter_ended_reset(s);
	meter_stacks_free(&fresh);
	meter_stacks_free(&fresh_addrs);
	return 0;
}

/*
 * SESSION_RESET of s, which the caller holds a reference on (not
 * meter_mutex).  Everything a reset needs is allocated first, so that it
 * applies whole or fails changing nothing; the live threads' new bases
 * are read from their memory under live_lock alone (live.c).
 */
int meter_session_reset(struct meter_session *s,
			struct netlink_ext_ack *extack)
{
	struct meter_live_set ls;
	int ret;

	mutex_lock(&s->live_lock);
	mutex_lock(&meter_mutex);
	ret = meter_live_collect(s, &ls);
	mutex_unlock(&meter_mutex);
	if (!ret)
		ret = meter_live_bases_alloc(s, &ls);
	if (ret == -E2BIG) {
		NL_SET_ERR_MSG_MOD(extack,
				   "the live counters' bases would take the session past max_session_mb");
		ret = -ENOMEM;
	} else if (ret) {
		NL_SET_ERR_MSG_MOD(extack,
				   "out of memory for the live counters' bases");
	}
	if (ret)
		goto out;
	mutex_lock(&meter_mutex);
	ret = meter_session_reset_locked(s);
	mutex_unlock(&meter_mutex);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack,
				   "out of memory for the empty stack table");
		goto out;
	}
	meter_live_rebase(s, &ls);
out:
	meter_live_set_free(&ls);
	mutex_unlock(&s->live_lock);
	return ret;
}

/* Caller holds meter_mutex. */
int meter_session_set_period(struct meter_session *s, u64 period_ns)
{
	struct meter_thread *t;
	int ret = 0, err;

	s->period_ns = period_ns;
	list_for_each_entry(t, &s->threads, node) {
		err = meter_thread_set_period(t, period_ns);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/*
 * The counter slot of a function id, allocating its chunk when create is
 * set.  Caller holds meter_mutex.  NULL: bad id, out of memory or over
 * the per-session memory bound.
 */
struct meter_func_slot *meter_session_slot(struct meter_session *s, u32 id,
					   bool create)
{
	struct meter_func_slot *chunk;
	size_t size = METER_CHUNK_IDS * sizeof(*chunk);

	if (!id || id > METER_FUNCS_MAX)
		return NULL;
	id = array_index_nospec(id, METER_FUNCS_MAX + 1);
	chunk = s->chunks[id >> METER_CHUNK_SHIFT];
	if (!chunk) {
		if (!create ||
		    s->bytes + size > ((size_t)meter_max_session_mb << 20))
			return NULL;
		chunk = kvzalloc(size, GFP_KERNEL_ACCOUNT);
		if (!chunk)
			return NULL;
		s->bytes += size;
		/* Publish the zeroed chunk to the tick. */
		smp_store_release(&s->chunks[id >> METER_CHUNK_SHIFT], chunk);
	}
	if (create && id > s->max_id)
		WRITE_ONCE(s->max_id, id);
	return &chunk[id & (METER_CHUNK_IDS - 1)];
}

/*
 * The slot of one id of a request, made before anything of the request is
 * named or counted, so that it applies whole or not at all.
 */
static int meter_session_make_slot(struct meter_session *s, u32 id,
				   struct netlink_ext_ack *extack)
{
	if (id > s->max_funcs) {
		NL_SET_ERR_MSG_MOD(extack,
				   "function id above the session's limit (max_funcs, max_user_funcs)");
		return -ENOSPC;
	}
	if (!meter_session_slot(s, id, true)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "function table over its memory bound");
		return -ENOMEM;
	}
	return 0;
}

static bool meter_slot_same(const struct meter_func_text *a,
			    const struct meter_func_text *b)
{
	return a && a->len == b->len && a->line == b->line &&
	       a->file_off == b->file_off && a->cost_ps == b->cost_ps &&
	       !memcmp(a->text, b->text, a->len);
}

/*
 * ADD_FUNCS: fn[i].t (the caller's copies) become the names of fn[i].id,
 * all of them or, on an error, none.  A name taken is set to NULL; the
 * caller frees the rest.  Caller holds meter_mutex.
 */
int meter_session_name_funcs(struct meter_session *s,
			     struct meter_func_name *fn, size_t n,
			     struct netlink_ext_ack *extack)
{
	size_t limit = (size_t)meter_max_session_mb << 20, names_bytes = 0;
	struct meter_func_slot *slot;
	size_t i;
	int ret;

	/* names count against the session's bound, as its counters do */
	for (i = 0; i < n; i++)
		names_bytes += meter_func_text_bytes(fn[i].t);
	if (s->bytes + names_bytes > limit) {
		NL_SET_ERR_MSG_MOD(extack,
				   "names past the session's memory bound");
		return -ENOSPC;
	}
	for (i = 0; i < n; i++) {
		ret = meter_session_make_slot(s, fn[i].id, extack);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		slot = meter_session_slot(s, fn[i].id, false);
		if (meter_slot_same(slot->name, fn[i].t))
			continue;
		if (!slot->name && !slot->calls)
			s->nfuncs++;
		else if (slot->name)
			s->bytes -= meter_func_text_bytes(slot->name);
		kfree(slot->name);
		slot->name = fn[i].t;
		fn[i].t = NULL;
		s->bytes += meter_func_text_bytes(slot->name);
	}
	return 0;
}

/*
 * ADD_CALLS: thread tid's counts added to the session, all of them or, on
 * an error, none.  A thread whose counters the module reads live (COUNTS_
 * ADDR) sends only what the session has not counted yet; last: its final
 * counts; slow: its calls that took libmeter's slow path since its last
 * ADD_CALLS.  Caller holds meter_mutex.
 */
int meter_session_add_calls(struct meter_session *s, pid_t tid,
			    const struct meter_call_counts *c, size_t n,
			    u64 slow, bool last, struct netlink_ext_ack *extack)
{
	struct meter_func_slot *slot;
	struct meter_thread *t;
	u32 top = 0;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = meter_session_make_slot(s, c[i].id, extack);
		if (ret)
			return ret;
	}
	t = meter_live_thread(s, tid);
	for (i = 0; i < n; i++) {
		u64 calls = c[i].calls;

		top = max(top, c[i].id);
		slot = meter_session_slot(s, c[i].id, false);
		if (t)
			calls -= min(calls, meter_live_base(t, c[i].id));
		if (!slot->name && !slot->calls && calls)
			s->nfuncs++;
		slot->calls += calls;
		slot->alloc_calls += c[i].alloc_calls;
		slot->alloc_bytes += c[i].alloc_bytes;
	}
	s->slow_entries += slow;
	/* these ids are the session's now, not the thread's memory */
	if (t)
		meter_live_fold(t, top, last);
	return 0;
}
