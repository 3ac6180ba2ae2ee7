// SPDX-License-Identifier: GPL-2.0
/*
 * A session copied for a reader: PROFILE_GET's snapshot and the counters
 * of SESSION_GET, and their attributes in a message.  The copy is taken
 * under meter_mutex, the stack table and counters under the session lock;
 * call counts of live threads are read from their memory (live.c) and
 * added to what the session holds.
 */
#include <linux/bsearch.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "meter.h"

/* Caller holds meter_mutex and s->lock. */
void meter_session_info_fill(struct meter_session *s,
			     struct meter_session_info *si)
{
	si->cookie = s->cookie;
	si->parent_cookie = s->parent_cookie;
	si->period_ns = s->period_ns;
	si->start_ns = s->start_ns;
	si->end_ns = s->end_ns;
	/* before the whole, which the tick adds to first */
	si->samples_off[0] = atomic64_read(&s->samples_off[0]);
	si->samples_off[1] = atomic64_read(&s->samples_off[1]);
	si->samples = atomic64_read(&s->samples);
	si->ticks = atomic64_read(&s->ticks);
	si->no_current = atomic64_read(&s->no_current);
	si->invalid = atomic64_read(&s->invalid);
	si->lost = atomic64_read(&s->lost);
	si->truncated = atomic64_read(&s->truncated);
	si->clock = s->clock;
	si->call_cost_ps = s->call_cost_ps;
	/* As the reader's pid namespace sees it; 0 if it cannot. */
	si->pid = pid_nr_ns(s->tgid, task_active_pid_ns(current));
	si->uid = from_kuid_munged(current_user_ns(), s->uid);
	si->state = s->state;
	si->threads = s->threads_live;
	si->threads_total = s->threads_total;
	si->nfuncs = s->nfuncs;
	si->nstacks = s->stacks.nused;
	memcpy(si->comm, s->comm, sizeof(si->comm));
}

void meter_snap_clear(struct meter_snap *sn)
{
	kvfree(sn->funcs);
	kvfree(sn->names);
	kvfree(sn->stacks);
	kvfree(sn->pool);
	kvfree(sn->threads);
	memset(sn, 0, sizeof(*sn));
}

static int meter_snap_cmp_id(const void *key, const void *elt)
{
	u32 id = *(const u32 *)key;
	const struct meter_snap_func *f = elt;

	return id < f->id ? -1 : id > f->id;
}

/* FUNC_TOTAL: each stack's samples once per distinct function in it. */
static void meter_snap_totals(struct meter_snap *sn)
{
	u32 i, j;

	for (i = 0; i < sn->nstacks; i++) {
		const struct meter_stack_entry *e = &sn->stacks[i];

		for (j = 0; j < e->depth; j++) {
			u32 id = sn->pool[e->off + j];
			struct meter_snap_func *f;

			f = bsearch(&id, sn->funcs, sn->nfuncs, sizeof(*f),
				    meter_snap_cmp_id);
			if (!f || f->last_stack == i + 1)
				continue;
			f->last_stack = i + 1;
			f->total += e->samples;
		}
	}
}

static int meter_snap_funcs(struct meter_session *s, struct meter_snap *sn)
{
	size_t names_len = 0, off = 0;
	u32 c, i, n = 0;

	for (c = 0; c < METER_NCHUNKS; c++) {
		struct meter_func_slot *chunk = s->chunks[c];

		if (!chunk)
			continue;
		for (i = 0; i < METER_CHUNK_IDS; i++) {
			if (!chunk[i].name && !chunk[i].calls &&
			    !atomic64_read(&chunk[i].self))
				continue;
			n++;
			if (chunk[i].name)
				names_len += strlen(chunk[i].name) + 1;
		}
	}
	sn->funcs = kvcalloc(max(n, 1U), sizeof(*sn->funcs), GFP_KERNEL);
	sn->names = kvmalloc(max_t(size_t, names_len, 1), GFP_KERNEL);
	if (!sn->funcs || !sn->names)
		return -ENOMEM;
	for (c = 0; c < METER_NCHUNKS && sn->nfuncs < n; c++) {
		struct meter_func_slot *chunk = s->chunks[c];

		if (!chunk)
			continue;
		for (i = 0; i < METER_CHUNK_IDS && sn->nfuncs < n; i++) {
			struct meter_func_slot *sl = &chunk[i];
			struct meter_snap_func *f = &sn->funcs[sn->nfuncs];
			u64 self;

			/* the tick adds to self first: read the parts first,
			 * so that they never exceed the whole
			 */
			f->self_off[0] = atomic64_read(&sl->self_off[0]);
			f->self_off[1] = atomic64_read(&sl->self_off[1]);
			self = atomic64_read(&sl->self);

			if (!sl->name && !sl->calls && !self)
				continue;
			f->id = (c << METER_CHUNK_SHIFT) | i;
			f->calls = sl->calls;
			f->self = self;
			f->alloc_calls = sl->alloc_calls;
			f->alloc_bytes = sl->alloc_bytes;
			f->name_off = U32_MAX;
			if (sl->name) {
				size_t len = strlen(sl->name) + 1;

				f->name_off = off;
				memcpy(sn->names + off, sl->name, len);
				off += len;
			}
			sn->nfuncs++;
		}
	}
	return 0;
}

/*
 * Adds the calls that live threads have counted in their own memory and
 * not yet sent.  A thread whose memory cannot be read adds nothing.
 */
static int meter_snap_live(struct meter_session *s, struct meter_snap *sn)
{
	u32 max_id = READ_ONCE(s->max_id);
	struct meter_thread *t;
	u64 *buf = NULL;
	u32 i;

	list_for_each_entry(t, &s->threads, node) {
		if (!t->counts_addr || !max_id)
			continue;
		if (!buf) {
			buf = kvmalloc_array(max_id + 1, sizeof(*buf),
					     GFP_KERNEL_ACCOUNT);
			if (!buf)
				return -ENOMEM;
		}
		if (meter_live_read(t, max_id, buf))
			continue;
		for (i = 0; i < sn->nfuncs && sn->funcs[i].id <= max_id; i++)
			sn->funcs[i].calls += buf[sn->funcs[i].id];
	}
	kvfree(buf);
	return 0;
}

/* Caller holds meter_mutex. */
int meter_snap_take(struct meter_session *s, struct meter_snap *sn)
{
	struct meter_stacks *st = &s->stacks;
	struct meter_thread *t;
	unsigned long flags;
	u32 i, nthreads = 0;
	int ret;

	ret = meter_snap_funcs(s, sn);
	if (!ret)
		ret = meter_snap_live(s, sn);
	if (ret)
		return ret;
	list_for_each_entry(t, &s->threads, node)
		nthreads++;
	sn->threads = kvcalloc(max(nthreads, 1U), sizeof(*sn->threads),
			       GFP_KERNEL);
	sn->stacks = kvmalloc_array(st->nslots / 2, sizeof(*sn->stacks),
				    GFP_KERNEL);
	sn->pool = kvmalloc_array(st->pool_size, sizeof(u32), GFP_KERNEL);
	if (!sn->threads || !sn->stacks || !sn->pool)
		return -ENOMEM;

	raw_spin_lock_irqsave(&s->lock, flags);
	meter_session_info_fill(s, &sn->si);
	for (i = 0; i < st->nslots && sn->nstacks < st->nslots / 2; i++)
		if (st->slots[i].depth)
			sn->stacks[sn->nstacks++] = st->slots[i];
	memcpy(sn->pool, st->pool, st->pool_used * sizeof(u32));
	list_for_each_entry(t, &s->threads, node) {
		if (sn->nthreads == nthreads)
			break;
		sn->threads[sn->nthreads].tid = t->tid;
		sn->threads[sn->nthreads].samples = READ_ONCE(t->samples);
		sn->threads[sn->nthreads].state = READ_ONCE(t->state);
		sn->nthreads++;
	}
	raw_spin_unlock_irqrestore(&s->lock, flags);

	sn->si.nfuncs = sn->nfuncs;
	sn->si.nstacks = sn->nstacks;
	meter_snap_totals(sn);
	return 0;
}

/* The snapshot's pieces as PROFILE_GET and SESSION_GET put them. */
int meter_put_session(struct sk_buff *skb,
		      const struct meter_session_info *si)
{
	if (nla_put_u64_64bit(skb, METER_A_COOKIE, si->cookie, METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_PARENT_COOKIE, si->parent_cookie,
			      METER_A_PAD) ||
	    nla_put_u32(skb, METER_A_PID, si->pid) ||
	    nla_put_u32(skb, METER_A_UID, si->uid) ||
	    nla_put_string(skb, METER_A_COMM, si->comm) ||
	    nla_put_u32(skb, METER_A_STATE, si->state) ||
	    nla_put_u32(skb, METER_A_THREADS, si->threads) ||
	    nla_put_u32(skb, METER_A_THREADS_TOTAL, si->threads_total) ||
	    nla_put_u64_64bit(skb, METER_A_PERIOD_NS, si->period_ns,
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_START_NS, si->start_ns,
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_END_NS, si->end_ns, METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_SAMPLES, si->samples,
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_NO_CURRENT, si->no_current,
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_INVALID, si->invalid,
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_LOST, si->lost, METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_TRUNCATED, si->truncated,
			      METER_A_PAD) ||
	    nla_put_u32(skb, METER_A_NFUNCS, si->nfuncs) ||
	    nla_put_u32(skb, METER_A_NSTACKS, si->nstacks) ||
	    nla_put_u64_64bit(skb, METER_A_CALL_COST_PS, si->call_cost_ps,
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_TICKS, si->ticks, METER_A_PAD) ||
	    nla_put_u32(skb, METER_A_CLOCK, si->clock) ||
	    nla_put_u64_64bit(skb, METER_A_SAMPLES_RUNQ, si->samples_off[0],
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_SAMPLES_BLOCKED, si->samples_off[1],
			      METER_A_PAD))
		return -EMSGSIZE;
	return 0;
}

int meter_put_func(struct sk_buff *skb, const struct meter_snap *sn,
		   const struct meter_snap_func *f)
{
	struct nlattr *nest = nla_nest_start(skb, METER_A_FUNC);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, METER_A_FUNC_ID, f->id) ||
	    (f->name_off != U32_MAX &&
	     nla_put_string(skb, METER_A_FUNC_NAME, sn->names + f->name_off)) ||
	    nla_put_u64_64bit(skb, METER_A_FUNC_CALLS, f->calls,
			      METER_A_FUNC_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_FUNC_SELF, f->self,
			      METER_A_FUNC_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_FUNC_TOTAL, f->total,
			      METER_A_FUNC_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_FUNC_ALLOC_CALLS, f->alloc_calls,
			      METER_A_FUNC_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_FUNC_ALLOC_BYTES, f->alloc_bytes,
			      METER_A_FUNC_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_FUNC_SELF_RUNQ, f->self_off[0],
			      METER_A_FUNC_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_FUNC_SELF_BLOCKED, f->self_off[1],
			      METER_A_FUNC_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

int meter_put_stack(struct sk_buff *skb, const struct meter_snap *sn,
		    const struct meter_stack_entry *e)
{
	struct nlattr *nest = nla_nest_start(skb, METER_A_STACK);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, METER_A_STACK_SAMPLES, e->samples,
			      METER_A_STACK_PAD) ||
	    nla_put(skb, METER_A_STACK_FRAMES, e->depth * sizeof(u32),
		    &sn->pool[e->off]) ||
	    (e->truncated && nla_put_flag(skb, METER_A_STACK_TRUNCATED)) ||
	    (e->state && nla_put_u32(skb, METER_A_STACK_STATE, e->state)) ||
	    nla_put_u32(skb, METER_A_STACK_TID, e->tid)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

int meter_put_thread(struct sk_buff *skb,
		     const struct meter_snap_thread *th)
{
	struct nlattr *nest = nla_nest_start(skb, METER_A_THREAD);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, METER_A_THREAD_TID, th->tid) ||
	    nla_put_u64_64bit(skb, METER_A_THREAD_SAMPLES, th->samples,
			      METER_A_THREAD_PAD) ||
	    nla_put_u32(skb, METER_A_THREAD_STATE, th->state)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}
