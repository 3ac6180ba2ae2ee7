// SPDX-License-Identifier: GPL-2.0
/*
 * One user's share of the machine: the wall-clock tick budget.
 *
 * A wall-clock thread ticks whether or not it runs, on the CPU that
 * armed its timer, and the tick's cost is billed to whatever runs there.
 * CPU-clock ticks need no budget: they fire only while the thread runs,
 * on its own CPU, so they cost that thread's own time.  Like perf's
 * perf_cpu_time_max_percent, the budget lowers the rate rather than
 * refusing: an unprivileged user's wall-clock threads together tick at
 * most user_wall_ticks times a second, and so do a user namespace's
 * (a container's uids together).  Each of the user's N threads
 * stretches its period by k = ceil(N * 1e9 / (period * budget)), so
 * that N threads tick at most budget times a second in all; a stretched
 * tick weighs the k periods it stands for, so time stays whole and only
 * resolution drops, and the session counts such ticks (STRETCHED_TICKS)
 * for reports to say so.  Privileged users (CAP_PERFMON) are not held to
 * it, as perf_event_max_sample_rate does not hold them either when they
 * raise it.
 */
#include <linux/hashtable.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "meter_kmod.h"

static DEFINE_HASHTABLE(meter_users, 6);
static DEFINE_SPINLOCK(meter_users_lock);

/*
 * The share of euid uid (ns NULL) or of user namespace ns, made on its
 * first session; NULL without memory.
 */
static struct meter_user *meter_user_get(kuid_t uid,
					 const struct user_namespace *ns)
{
	unsigned long key = ns ? (unsigned long)ns : __kuid_val(uid);
	struct meter_user *u, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	spin_lock(&meter_users_lock);
	hash_for_each_possible(meter_users, u, node, key) {
		if (u->ns == ns && (ns || uid_eq(u->uid, uid))) {
			refcount_inc(&u->ref);
			spin_unlock(&meter_users_lock);
			kfree(fresh);
			return u;
		}
	}
	if (fresh) {
		fresh->uid = uid;
		fresh->ns = ns;
		refcount_set(&fresh->ref, 1);
		hash_add(meter_users, &fresh->node, key);
	}
	spin_unlock(&meter_users_lock);
	return fresh;
}

static void meter_user_put(struct meter_user *u)
{
	if (!u || !refcount_dec_and_lock(&u->ref, &meter_users_lock))
		return;
	hash_del(&u->node);
	spin_unlock(&meter_users_lock);
	kfree(u);
}

/*
 * The session's shares: its creator's euid, and its user namespace
 * unless that is the first (a container's uids share one budget, and a
 * user who makes namespaces still has one).  -ENOMEM without memory.
 */
int meter_budget_init(struct meter_session *s)
{
	struct user_namespace *ns = s->user_ns;

	s->share[0] = meter_user_get(s->uid, NULL);
	if (ns != &init_user_ns)
		s->share[1] = meter_user_get(INVALID_UID, ns);
	if (!s->share[0] || (ns != &init_user_ns && !s->share[1])) {
		meter_budget_free(s);
		return -ENOMEM;
	}
	return 0;
}

/* From the session's free: no tick of its threads can run any more. */
void meter_budget_free(struct meter_session *s)
{
	meter_user_put(s->share[0]);
	meter_user_put(s->share[1]);
	s->share[0] = NULL;
	s->share[1] = NULL;
}

/* A wall-clock thread of the session starts (+1) or is released (-1). */
void meter_budget_wall_thread(struct meter_session *s, int d)
{
	atomic_add(d, &s->share[0]->wall_threads);
	if (s->share[1])
		atomic_add(d, &s->share[1]->wall_threads);
}

/* In the wall-clock tick: how many periods the next tick stands for. */
u64 meter_budget_stretch(const struct meter_session *s, u64 period_ns)
{
	u64 budget = READ_ONCE(meter_user_wall_ticks);
	u64 n;

	if (s->privileged || !budget)
		return 1;
	n = atomic_read(&s->share[0]->wall_threads);
	if (s->share[1])
		n = max_t(u64, n, atomic_read(&s->share[1]->wall_threads));
	if (n * NSEC_PER_SEC <= budget * period_ns)
		return 1;
	return div64_u64(n * NSEC_PER_SEC + budget * period_ns - 1,
			 budget * period_ns);
}
