// SPDX-License-Identifier: GPL-2.0
/*
 * A session copied for a reader: PROFILE_GET's snapshot and the counters
 * of SESSION_GET, and their attributes in a message.  The copy is taken
 * under meter_mutex; call counts of live threads are read from their
 * memory (live.c) and added to what the session holds.
 *
 * The copy holds only what the session uses, is charged to the reader's
 * memory cgroup, and counts against max_user_snap_mb for the reader's
 * user until the dump ends.  The stack table is copied in pieces so that
 * no hold of the session's raw lock (interrupts off) scans more than
 * METER_SNAP_SLOTS slots or copies more than METER_SNAP_FRAMES frames:
 * in a session that is still ticking, a stack's samples are those of the
 * moment its piece was copied, and the counters (read last) are at least
 * their sum.
 */
#include <linux/bsearch.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "meter_kmod.h"

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
	si->slow_entries = s->slow_entries;
	si->stretched = atomic64_read(&s->stretched);
	si->addrs_lost = atomic64_read(&s->addrs_lost);
	/* As the reader's pid namespace sees it; 0 if it cannot. */
	si->pid = pid_nr_ns(s->tgid, task_active_pid_ns(current));
	si->uid = from_kuid_munged(current_user_ns(), s->uid);
	si->state = s->state;
	si->threads = s->threads_live;
	si->threads_total = s->threads_total;
	si->nfuncs = s->nfuncs;
	si->nstacks = s->stacks.nused;
	si->naddrs = s->addrs.nused;
	si->nmaps = s->maps.n;
	memcpy(si->comm, s->comm, sizeof(si->comm));
}

/* Per lock hold: 24 KiB of slots scanned, 16 KiB of frames copied. */
#define METER_SNAP_SLOTS	1024
#define METER_SNAP_FRAMES	4096

/* Snapshot bytes that each user's open dumps hold (max_user_snap_mb). */
struct meter_snap_user {
	struct hlist_node node;
	kuid_t uid;
	size_t bytes;
};

static DEFINE_HASHTABLE(meter_snap_users, 4);
static DEFINE_SPINLOCK(meter_snap_users_lock);

static struct meter_snap_user *meter_snap_user_find(kuid_t uid)
{
	struct meter_snap_user *u;

	hash_for_each_possible(meter_snap_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

static int meter_snap_charge(struct meter_snap *sn, size_t bytes)
{
	size_t limit = (size_t)READ_ONCE(meter_max_user_snap_mb) << 20;
	struct meter_snap_user *u, *fresh;
	kuid_t uid = current_euid();
	int ret = 0;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&meter_snap_users_lock);
	u = meter_snap_user_find(uid);
	if (limit && (u ? u->bytes : 0) + bytes > limit) {
		ret = -ENOBUFS;
	} else if (!u) {
		fresh->uid = uid;
		hash_add(meter_snap_users, &fresh->node, __kuid_val(uid));
		u = fresh;
		fresh = NULL;
	}
	if (!ret) {
		u->bytes += bytes;
		sn->uid = uid;
		sn->charged = bytes;
	}
	spin_unlock(&meter_snap_users_lock);
	kfree(fresh);
	return ret;
}

static void meter_snap_uncharge(struct meter_snap *sn)
{
	struct meter_snap_user *u, *gone = NULL;

	if (!sn->charged)
		return;
	spin_lock(&meter_snap_users_lock);
	u = meter_snap_user_find(sn->uid);
	if (!WARN_ON_ONCE(!u || u->bytes < sn->charged)) {
		u->bytes -= sn->charged;
		if (!u->bytes) {
			hash_del(&u->node);
			gone = u;
		}
	}
	spin_unlock(&meter_snap_users_lock);
	kfree(gone);
	sn->charged = 0;
}

void meter_snap_clear(struct meter_snap *sn)
{
	meter_snap_uncharge(sn);
	kvfree(sn->funcs);
	kvfree(sn->names);
	kvfree(sn->stacks);
	kvfree(sn->pool);
	kvfree(sn->addrs);
	kvfree(sn->addr_pool);
	meter_maps_free(&sn->maps);
	kvfree(sn->threads);
	meter_live_set_free(&sn->live);
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

/* The functions in use and their names' bytes, for sizing the copy. */
static void meter_snap_count(struct meter_session *s, u32 *nfuncs,
			     size_t *names_len)
{
	u32 c, i, n = 0;
	size_t len = 0;

	for (c = 0; c < METER_NCHUNKS; c++) {
		struct meter_func_slot *chunk = s->chunks[c];

		if (!chunk)
			continue;
		for (i = 0; i < METER_CHUNK_IDS; i++) {
			if (!chunk[i].name && !chunk[i].calls &&
			    !atomic64_read(&chunk[i].self))
				continue;
			n++;
			len += chunk[i].name ? chunk[i].name->len : 0;
		}
	}
	*nfuncs = n;
	*names_len = len;
}

/* Caller holds meter_mutex, under which names are set and never freed. */
static void meter_snap_funcs(struct meter_session *s, struct meter_snap *sn,
			     u32 n)
{
	size_t off = 0;
	u32 c, i;

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
			f->file_off = U32_MAX;
			f->line = 0;
			f->cost_ps = 0;
			if (sl->name) {
				const struct meter_func_text *t = sl->name;

				f->name_off = off;
				if (t->file_off)
					f->file_off = off + t->file_off;
				f->line = t->line;
				f->cost_ps = t->cost_ps;
				memcpy(sn->names + off, t->text, t->len);
				off += t->len;
			}
			sn->nfuncs++;
		}
	}
}

/*
 * Adds the calls that the live threads collected with the copy have
 * counted in their own memory and not yet sent.  A thread whose memory
 * cannot be read adds nothing.  Caller holds s->live_lock only (live.c).
 */
static int meter_snap_live(struct meter_snap *sn)
{
	u32 max_id = sn->live.max_id, i, k;
	u64 *buf;

	if (!sn->live.n || !max_id)
		return 0;
	buf = kvmalloc_array(max_id + 1, sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	for (k = 0; k < sn->live.n; k++) {
		if (meter_live_read(sn->live.t[k], max_id, buf))
			continue;
		for (i = 0; i < sn->nfuncs && sn->funcs[i].id <= max_id; i++)
			sn->funcs[i].calls += buf[sn->funcs[i].id];
	}
	kvfree(buf);
	return 0;
}

/*
 * Copies the entries of st that existed when the copy began (their keys
 * lie below pool_used then: the pool only grows until a reset, and a
 * reset takes meter_mutex), a bounded piece per lock hold, their keys
 * packed into pool; returns how many.
 */
static u32 meter_snap_table(struct meter_session *s, struct meter_stacks *st,
			    struct meter_stack_entry *out, u32 *pool,
			    u32 nused, u32 pool_used)
{
	unsigned long flags;
	u32 i = 0, packed = 0, n = 0;

	while (i < st->nslots && n < nused) {
		u32 end = min(st->nslots, i + METER_SNAP_SLOTS), frames = 0;

		raw_spin_lock_irqsave(&s->lock, flags);
		for (; i < end && n < nused; i++) {
			const struct meter_stack_entry *e = &st->slots[i];
			struct meter_stack_entry *d;

			if (!e->depth || e->off + e->depth > pool_used)
				continue;
			if (frames + e->depth > METER_SNAP_FRAMES)
				break;
			d = &out[n++];
			*d = *e;
			d->off = packed;
			memcpy(&pool[packed], &st->pool[e->off],
			       e->depth * sizeof(u32));
			packed += e->depth;
			frames += e->depth;
		}
		raw_spin_unlock_irqrestore(&s->lock, flags);
		cond_resched();
	}
	return n;
}

static int meter_tid_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The stacks key threads by their global tid; a reply gives the reader's
 * view (0 where its pid namespace does not see the thread), mapped
 * through the threads' records.  Pairs of (global, reader's) tids.
 */
static void meter_snap_stack_tids(struct meter_snap *sn)
{
	u32 *map, i;

	map = kvmalloc_array(max(sn->nthreads, 1U), 2 * sizeof(u32),
			     GFP_KERNEL_ACCOUNT);
	if (!map) {
		for (i = 0; i < sn->nstacks; i++)
			sn->stacks[i].tid = 0;
		return;
	}
	for (i = 0; i < sn->nthreads; i++) {
		map[2 * i] = sn->threads[i].global_tid;
		map[2 * i + 1] = sn->threads[i].tid;
	}
	sort(map, sn->nthreads, 2 * sizeof(u32), meter_tid_cmp, NULL);
	for (i = 0; i < sn->nstacks; i++) {
		u32 *m = bsearch(&sn->stacks[i].tid, map, sn->nthreads,
				 2 * sizeof(u32), meter_tid_cmp);

		sn->stacks[i].tid = m ? m[1] : 0;
	}
	kvfree(map);
}

static int meter_snap_seq_cmp(const void *a, const void *b)
{
	const struct meter_snap_thread *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The rows of the threads whose records were released, and the row of
 * those folded together (ended.c).  Under meter_mutex, as they change.
 */
static void meter_snap_ended(struct meter_session *s, struct meter_snap *sn,
			     struct pid_namespace *ns)
{
	struct meter_snap_thread *th;
	u32 i;

	for (i = 0; i < s->nended; i++) {
		th = &sn->threads[sn->nthreads++];
		th->global_tid = s->ended[i].tid;
		th->seq = s->ended[i].seq;
		th->tid = pid_nr_ns(s->ended[i].pid, ns);
		th->samples = s->ended[i].samples;
		th->state = METER_THREAD_EXITED;
		memcpy(th->comm, s->ended[i].comm, TASK_COMM_LEN);
	}
	if (!s->folded_threads)
		return;
	th = &sn->threads[sn->nthreads++];
	th->seq = U32_MAX;		/* last */
	th->samples = s->folded_samples;
	th->state = METER_THREAD_EXITED;
	th->folded = s->folded_threads;
}

/* The copy of all but the live counters: caller holds meter_mutex too. */
static int meter_snap_copy(struct meter_session *s, struct meter_snap *sn)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct meter_stacks *st = &s->stacks, *at = &s->addrs;
	u32 nfuncs, nused, pool_used, naddrs, addr_words, nthreads = 0;
	struct meter_thread *t;
	unsigned long flags;
	size_t names_len;
	int ret;

	meter_snap_count(s, &nfuncs, &names_len);
	list_for_each_entry(t, &s->threads, node)
		nthreads++;
	nthreads += s->nended + !!s->folded_threads;
	raw_spin_lock_irqsave(&s->lock, flags);
	nused = st->nused;
	pool_used = st->pool_used;
	naddrs = at->nused;
	addr_words = at->pool_used;
	raw_spin_unlock_irqrestore(&s->lock, flags);
	ret = meter_live_collect(s, &sn->live);
	if (ret)
		return ret;

	ret = meter_snap_charge(sn, (size_t)nfuncs * sizeof(*sn->funcs) +
				names_len +
				(size_t)nused * sizeof(*sn->stacks) +
				(size_t)pool_used * sizeof(u32) +
				(size_t)naddrs * sizeof(*sn->addrs) +
				(size_t)addr_words * sizeof(u32) +
				meter_maps_bytes(&s->maps) +
				(size_t)nthreads * sizeof(*sn->threads) +
				(size_t)sn->live.n * sizeof(*sn->live.t) +
				((size_t)sn->live.max_id + 1) * sizeof(u64));
	if (ret)
		return ret;
	sn->funcs = kvcalloc(max(nfuncs, 1U), sizeof(*sn->funcs),
			     GFP_KERNEL_ACCOUNT);
	sn->names = kvmalloc(max_t(size_t, names_len, 1), GFP_KERNEL_ACCOUNT);
	sn->threads = kvcalloc(max(nthreads, 1U), sizeof(*sn->threads),
			       GFP_KERNEL_ACCOUNT);
	sn->stacks = kvmalloc_array(max(nused, 1U), sizeof(*sn->stacks),
				    GFP_KERNEL_ACCOUNT);
	sn->pool = kvmalloc_array(max(pool_used, 1U), sizeof(u32),
				  GFP_KERNEL_ACCOUNT);
	sn->addrs = kvmalloc_array(max(naddrs, 1U), sizeof(*sn->addrs),
				   GFP_KERNEL_ACCOUNT);
	sn->addr_pool = kvmalloc_array(max(addr_words, 1U), sizeof(u32),
				       GFP_KERNEL_ACCOUNT);
	if (!sn->funcs || !sn->names || !sn->threads || !sn->stacks ||
	    !sn->pool || !sn->addrs || !sn->addr_pool ||
	    meter_maps_copy(&s->maps, &sn->maps))
		return -ENOMEM;
	meter_snap_funcs(s, sn, nfuncs);
	sn->nstacks = meter_snap_table(s, st, sn->stacks, sn->pool, nused,
				       pool_used);
	sn->naddrs = meter_snap_table(s, at, sn->addrs, sn->addr_pool, naddrs,
				      addr_words);

	/* the counters last, so that they cover the stacks copied */
	raw_spin_lock_irqsave(&s->lock, flags);
	meter_session_info_fill(s, &sn->si);
	list_for_each_entry(t, &s->threads, node) {
		struct meter_snap_thread *th = &sn->threads[sn->nthreads++];

		th->global_tid = t->tid;
		th->seq = t->seq;
		th->tid = pid_nr_ns(t->pid, ns);
		th->samples = READ_ONCE(t->samples) - t->samples_reset;
		th->state = READ_ONCE(t->state);
		memcpy(th->comm, t->comm, TASK_COMM_LEN);
	}
	raw_spin_unlock_irqrestore(&s->lock, flags);
	meter_snap_ended(s, sn, ns);
	/* as they registered, live or ended: the main thread first */
	sort(sn->threads, sn->nthreads, sizeof(*sn->threads),
	     meter_snap_seq_cmp, NULL);
	meter_snap_stack_tids(sn);

	sn->si.nfuncs = sn->nfuncs;
	sn->si.nstacks = sn->nstacks;
	sn->si.naddrs = sn->naddrs;
	meter_snap_totals(sn);
	return 0;
}

/*
 * PROFILE_GET's copy of s, which the caller holds a reference on (not
 * meter_mutex): the session under meter_mutex, then the live threads'
 * counters, read under live_lock alone (live.c), so that one user's
 * snapshot never keeps another's REGISTER waiting.  live_lock spans both,
 * so that no ADD_CALLS or reset comes between the calls copied and those
 * read.
 */
int meter_snap_take(struct meter_session *s, struct meter_snap *sn)
{
	int ret;

	mutex_lock(&s->live_lock);
	mutex_lock(&meter_mutex);
	ret = meter_snap_copy(s, sn);
	mutex_unlock(&meter_mutex);
	if (!ret)
		ret = meter_snap_live(sn);
	meter_live_set_free(&sn->live);
	mutex_unlock(&s->live_lock);
	return ret;
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
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_SLOW_ENTRIES, si->slow_entries,
			      METER_A_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_STRETCHED_TICKS, si->stretched,
			      METER_A_PAD) ||
	    nla_put_u32(skb, METER_A_NADDRS, si->naddrs) ||
	    nla_put_u32(skb, METER_A_NMAPS, si->nmaps) ||
	    nla_put_u64_64bit(skb, METER_A_ADDRS_LOST, si->addrs_lost,
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
			      METER_A_FUNC_PAD) ||
	    (f->file_off != U32_MAX &&
	     nla_put_string(skb, METER_A_FUNC_FILE, sn->names + f->file_off)) ||
	    (f->line && nla_put_u32(skb, METER_A_FUNC_LINE, f->line)) ||
	    (f->cost_ps &&
	     nla_put_u64_64bit(skb, METER_A_FUNC_COST_PS, f->cost_ps,
			       METER_A_FUNC_PAD))) {
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

int meter_put_addr(struct sk_buff *skb, const struct meter_snap *sn,
		   const struct meter_stack_entry *e)
{
	const u32 *key = &sn->addr_pool[e->off];
	struct nlattr *nest = nla_nest_start(skb, METER_A_ADDR);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, METER_A_ADDR_IP,
			      (u64)key[2] << 32 | key[1], METER_A_ADDR_PAD) ||
	    nla_put_u32(skb, METER_A_ADDR_FUNC, key[0]) ||
	    nla_put_u64_64bit(skb, METER_A_ADDR_SAMPLES, e->samples,
			      METER_A_ADDR_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

int meter_put_map(struct sk_buff *skb, const struct meter_maps *m, u32 i)
{
	const struct meter_map *mp = &m->v[i];
	struct nlattr *nest = nla_nest_start(skb, METER_A_MAP);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, METER_A_MAP_START, mp->start,
			      METER_A_MAP_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_MAP_END, mp->end, METER_A_MAP_PAD) ||
	    nla_put_u64_64bit(skb, METER_A_MAP_PGOFF, mp->pgoff,
			      METER_A_MAP_PAD) ||
	    nla_put_string(skb, METER_A_MAP_PATH, m->text + mp->path_off)) {
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
	    nla_put_u32(skb, METER_A_THREAD_STATE, th->state) ||
	    nla_put_string(skb, METER_A_THREAD_COMM, th->comm) ||
	    (th->folded &&
	     nla_put_u32(skb, METER_A_THREAD_FOLDED, th->folded))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}
