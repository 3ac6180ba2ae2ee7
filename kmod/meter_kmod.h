/* SPDX-License-Identifier: GPL-2.0 */
/*
 * meter.ko internals: the objects every file of the module shares.
 *
 * Locking, outermost first:
 *   session->live_lock  mutex: the live call counters (live.c): calls
 *                     folded by ADD_CALLS, the threads' bases, and the
 *                     slow reads of the threads' memory, which are done
 *                     under it alone.  Taken with a session reference,
 *                     never under meter_mutex.
 *   meter_mutex       process context: the session list (add/remove),
 *                     function names and call counts, perf event
 *                     release and period changes, snapshots.
 *   meter_reg_lock    raw spinlock: the task -> thread registration
 *                     hash (taken from the exit probe and the tick).
 *   session->lock     raw spinlock: session state and thread counts,
 *                     the stack table (taken from the tick).
 * Self counts, sample counters and the function-chunk directory are
 * lock-free (atomic64 and READ_ONCE/smp_store_release).
 *
 * session.c and thread.c call each other, on purpose: a thread is
 * registered into a session (thread.c asks session.c for it, and to
 * finish it when its last thread goes), and a session's period change
 * reaches each of its threads (session.c asks thread.c).  The pair is one
 * object's two halves, each file owning its own struct and lock.
 */
#ifndef METER_KMOD_H
#define METER_KMOD_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <uapi/linux/meter.h>

struct perf_event;
struct perf_sample_data;
struct pt_regs;
struct page;
struct mm_struct;
struct mem_cgroup;
struct pid;
struct netlink_ext_ack;

/* main.c: module parameters. */
extern unsigned int meter_unpriv_period_min_ns;
extern bool meter_allow_unprivileged;
extern unsigned int meter_max_user_sessions;
extern unsigned int meter_max_finished;
extern unsigned int meter_max_user_finished;
extern unsigned int meter_max_finished_mb;
extern unsigned long meter_evicted;
extern unsigned int meter_max_session_mb;
extern bool meter_tick_floor;
extern bool meter_cpu_timer;
extern unsigned int meter_stack_entries;
extern unsigned int meter_stack_frames;
extern unsigned int meter_addr_entries;
extern unsigned int meter_max_sessions;
extern unsigned int meter_max_threads;
extern unsigned int meter_max_user_threads;
extern unsigned int meter_max_funcs;
extern unsigned int meter_max_user_funcs;
extern unsigned int meter_max_user_snap_mb;
extern unsigned int meter_user_wall_ticks;
extern unsigned int meter_max_thread_rows;

/* Registrations holding a pin and a perf counter, all users. */
extern atomic_t meter_threads_held;

extern struct mutex meter_mutex;
extern struct workqueue_struct *meter_wq;

/*
 * budget.c: what one user's threads may cost everyone else.  A user's
 * sessions share one of these by euid, and a user namespace's sessions
 * one by namespace; the wall-clock tick reads their thread counts to
 * stretch its period within the budget.
 */
struct meter_user {
	struct hlist_node node;		/* meter_users, meter_users_lock */
	kuid_t uid;			/* a euid's share (ns NULL) */
	const struct user_namespace *ns;	/* a namespace's share */
	refcount_t ref;			/* the sessions */
	atomic_t wall_threads;		/* registered on the wall clock */
};

struct meter_session;
int meter_budget_init(struct meter_session *s);
void meter_budget_free(struct meter_session *s);
void meter_budget_wall_thread(struct meter_session *s, int d);
u64 meter_budget_stretch(const struct meter_session *s, u64 period_ns);

/* stacks.c: the bounded per-session table of sampled stacks. */
struct meter_stack_entry {
	u64 samples;
	u32 hash;
	u32 off;		/* first frame in the frame pool */
	u16 depth;		/* 0: slot empty */
	u8 truncated;
	u8 state;		/* enum meter_sample_state, part of the key */
	u32 tid;		/* the sampled thread, part of the key */
};

struct meter_stacks {
	u32 nslots;		/* power of two */
	u32 nused;		/* in slots and old together */
	u32 pool_size;		/* frames */
	u32 pool_used;
	u32 max_slots;		/* what growth may reach */
	u32 max_pool;
	struct meter_stack_entry *slots;
	u32 *pool;
	/* while slots grow: the smaller table, emptied a piece at a time */
	struct meter_stack_entry *old;
	u32 old_nslots;
};

int meter_stacks_init(struct meter_stacks *st, u32 entries, u32 frames);
int meter_stacks_init_like(struct meter_stacks *st,
			   const struct meter_stacks *like);
void meter_stacks_free(struct meter_stacks *st);
/* What meter_stacks_add() did with a sample's stack. */
enum meter_stack_added {
	METER_STACK_COUNTED,	/* an entry that was there */
	METER_STACK_NEW,	/* a new entry */
	METER_STACK_LOST,	/* no room: the table is full */
};
/* Caller holds the session lock. */
enum meter_stack_added meter_stacks_add(struct meter_stacks *st, u32 tid,
					const u32 *frames, u32 n,
					bool truncated, u8 state, u64 weight);
/*
 * Caller holds the session lock: the table is filling up, grow it.  Only
 * an entry that is new (or lost) can change the answer, so the tick asks
 * only then.
 */
static inline bool meter_stacks_want_grow(const struct meter_stacks *st)
{
	return (st->nused * 4 >= st->nslots && st->nslots < st->max_slots) ||
	       (st->pool_used * 4 >= st->pool_size &&
		st->pool_size < st->max_pool);
}
/* Process context, caller holds meter_mutex and a session reference. */
void meter_stacks_grow(struct meter_stacks *st, raw_spinlock_t *lock,
		       size_t room, size_t *grown);
size_t meter_stacks_bytes(const struct meter_stacks *st);

/*
 * The address table is a stack table whose key is three words: the
 * current function's id and the user address the thread was interrupted
 * at (low, high), in no thread and always on a CPU.
 */
#define METER_ADDR_KEY_WORDS	3
enum meter_stack_added meter_addrs_add(struct meter_stacks *st, u32 cur,
				       u64 ip, u64 weight);

/* maps.c: the session's executable file mappings. */
#define METER_MAPS_MAX		4096
#define METER_MAP_PATH_MAX	2048	/* a MAP nest fits a page-sized read */
#define METER_MAPS_TEXT_MAX	BIT(20)
struct meter_map {
	u64 start, end;
	u64 pgoff;		/* the file offset at start, bytes */
	u32 path_off;		/* into text */
};

struct meter_maps {
	u32 n;
	u32 seen;		/* the VMAs read, kept or not ... */
	u64 sum;		/* ... and their summary: has anything changed */
	struct meter_map *v;
	char *text;		/* the paths, NUL-terminated */
	size_t text_len, text_cap;
};

void meter_maps_update(void);
int meter_maps_copy(const struct meter_maps *m, struct meter_maps *out);
size_t meter_maps_bytes(const struct meter_maps *m);
void meter_maps_free(struct meter_maps *m);

/* session.c: one profiled process. */
#define METER_CHUNK_SHIFT	10
#define METER_CHUNK_IDS		BIT(METER_CHUNK_SHIFT)
#define METER_NCHUNKS		((METER_FUNCS_MAX >> METER_CHUNK_SHIFT) + 1)

/*
 * A function's name, with its source and its own call cost where
 * ADD_FUNCS gave them: one allocation, so that a slot stays 56 bytes (a
 * session naming every id fits max_session_mb's 64 MB).
 */
struct meter_func_text {
	u64 cost_ps;		/* a call's instrumentation; 0: the session's */
	u32 line;		/* the definition's first line; 0: none */
	u32 file_off;		/* FILE's offset in text; 0: none */
	u32 len;		/* text's bytes, NULs included */
	char text[];		/* "NAME", or "NAME\0FILE" */
};

struct meter_func_slot {
	atomic64_t self;	/* the tick's counter */
	atomic64_t self_off[2];	/* of self: RUNQ, BLOCKED (wall clock) */
	u64 calls;		/* under meter_mutex */
	u64 alloc_calls;
	u64 alloc_bytes;
	struct meter_func_text *name;	/* under meter_mutex */
};

struct meter_session {
	struct list_head node;		/* meter_sessions, RCU */
	struct hlist_node tgid_node;	/* meter_tgid_hash, RCU */
	struct rcu_work free_work;	/* the last put frees after a grace
					 * period, on meter_wq
					 */
	refcount_t ref;
	u64 seq;			/* creation order, for dumps */
	u64 cookie;
	u64 parent_cookie;
	u64 call_cost_ps;
	struct pid *tgid;		/* referenced: process identity */
	pid_t pid;
	kuid_t uid;			/* creator's euid, snapshot */
	struct user_namespace *user_ns;	/* creator's, referenced: caps */
	bool privileged;		/* creator had CAP_PERFMON */
	bool restricted;		/* non-dumpable or set-id: readers
					 * need CAP_PERFMON (READ_ONCE)
					 */
	u32 max_funcs;			/* highest function id accepted */
	atomic_t threads_held;		/* registrations not yet released */
	char comm[TASK_COMM_LEN];
	struct mm_struct *mm;		/* mmgrab'd: identity while live */
	u64 start_ns, end_ns;
	u64 period_ns;			/* under meter_mutex */
	u32 clock;			/* enum meter_clock, fixed */
	struct mutex live_lock;		/* live.c: see the locking notes */
	size_t live_bytes;		/* the threads' bases; live_lock */

	raw_spinlock_t lock;
	u32 state;			/* enum meter_session_state */
	u32 threads_live;
	u32 threads_total;
	struct list_head threads;	/* meter_thread, until released */
	struct meter_stacks stacks;
	struct meter_stacks addrs;	/* CPU clock: (function, address) */
	struct mutex maps_lock;		/* maps.c: one reader of the mm */
	struct meter_maps maps;		/* changed under maps_lock and
					 * meter_mutex; read under either
					 */

	atomic64_t samples;
	atomic64_t ticks;		/* interrupts taken */
	atomic64_t no_current;
	atomic64_t invalid;
	atomic64_t lost;
	atomic64_t truncated;
	atomic64_t addrs_lost;		/* samples with no address kept */
	atomic64_t samples_off[2];	/* RUNQ, BLOCKED (wall clock) */
	u64 slow_entries;		/* ADD_CALLS; under meter_mutex */
	atomic64_t stretched;		/* ticks the user's budget delayed */
	struct meter_user *share[2];	/* euid's, namespace's; budget.c */

	u32 max_id;			/* highest id named; READ_ONCE */
	u32 nfuncs;			/* ids with a slot in use */
	struct meter_func_slot **chunks; /* METER_NCHUNKS, lazily filled */
	size_t bytes;			/* memory held, for retention */
	struct work_struct grow_work;	/* the stack table's, on meter_wq */
	unsigned long grow_queued;	/* bit 0: grow_work holds a ref */
	struct mem_cgroup *memcg;	/* the creator's: growth is charged */

	/* ended.c, under meter_mutex */
	struct meter_ended *ended;	/* rows of released threads */
	u32 nended, ended_cap;
	u32 folded_threads;		/* released threads past the rows */
	u64 folded_samples;
};

extern struct list_head meter_sessions;
void meter_sessions_group_dead(struct pid *tgid);

struct meter_session *meter_session_find_live(struct task_struct *tsk);
struct meter_thread_reg;
struct meter_session *meter_session_create(struct task_struct *tsk,
					   const struct meter_thread_reg *reg,
					   u64 period_ns, bool privileged,
					   struct netlink_ext_ack *extack);
bool meter_task_restricted(struct task_struct *tsk);
struct meter_session *meter_session_lookup(u64 cookie, pid_t pid);
/* The reader's pid namespace sees the session's process. */
bool meter_session_visible(const struct meter_session *s);
bool meter_session_may_read(struct meter_session *s, bool privileged);
void meter_session_get(struct meter_session *s);
void meter_session_put(struct meter_session *s);
void meter_session_finish(struct meter_session *s);
void meter_session_want_grow(struct meter_session *s);
void meter_session_finish_locked(struct meter_session *s);
void meter_session_unlink(struct meter_session *s);
int meter_session_reset(struct meter_session *s,
			struct netlink_ext_ack *extack);
void meter_sessions_evict(void);
void meter_sessions_destroy(void);
int meter_session_set_period(struct meter_session *s, u64 period_ns);
/* What a function's name takes of its session's memory. */
static inline size_t meter_func_text_bytes(const struct meter_func_text *t)
{
	return t ? sizeof(*t) + t->len : 0;
}

/* One function of ADD_FUNCS. */
struct meter_func_name {
	u32 id;
	struct meter_func_text *t;
};

int meter_session_name_funcs(struct meter_session *s,
			     struct meter_func_name *fn, size_t n,
			     struct netlink_ext_ack *extack);
int meter_session_add_calls(struct meter_session *s, pid_t tid,
			    const struct meter_call_counts *c, size_t n,
			    u64 slow, bool last, struct netlink_ext_ack *extack);
struct meter_func_slot *meter_session_slot(struct meter_session *s, u32 id,
					   bool create);
static inline struct meter_func_slot *
meter_session_slot_tick(struct meter_session *s, u32 id)
{
	struct meter_func_slot *chunk;

	/* id comes from the user's page: no speculation past its bound */
	id = array_index_nospec(id, METER_FUNCS_MAX + 1);
	/* Pairs with smp_store_release() in meter_session_slot(). */
	chunk = smp_load_acquire(&s->chunks[id >> METER_CHUNK_SHIFT]);
	if (!chunk)
		return NULL;
	return &chunk[id & (METER_CHUNK_IDS - 1)];
}

u64 meter_period_clamp(u64 period_ns, bool privileged,
		       struct netlink_ext_ack *extack, int *err);

/* thread.c: one registered thread. */
enum meter_end_reason {
	METER_END_UNREGISTER,
	METER_END_EXIT,
	METER_END_EXEC,
	METER_END_UNLOAD,
};

struct meter_thread {
	struct list_head node;		/* session->threads */
	struct hlist_node hnode;	/* meter_reg_hash, RCU */
	struct meter_session *session;	/* referenced while resources held */
	struct task_struct *task;	/* identity; referenced (wall) */
	struct pid *pid;		/* referenced with the record: its
					 * tid in a reader's pid namespace
					 */
	struct mm_struct *mm;		/* mmgrab'd until release */
	pid_t tid;
	u32 seq;			/* registration order in its session */
	char comm[TASK_COMM_LEN];	/* at registration, then at its end;
					 * under session->lock
					 */
	u32 state;			/* enum meter_thread_state, cmpxchg */
	u64 samples;			/* written by the thread's tick only */
	u64 samples_reset;		/* samples at the last reset; under
					 * session->lock (a reset never writes
					 * samples: a tick could undo it)
					 */
	u64 clock_seen;			/* task clock accounted, ns (tick) */
	struct page *page;
	const struct meter_page *kpage;	/* kernel mapping of the page */
	struct perf_event *event;	/* CPU clock; under meter_mutex */
	struct hrtimer timer;		/* wall clock, or cpu_timer */
	u64 period_ns;			/* hrtimers; READ_ONCE */
#ifdef CONFIG_PREEMPT_NOTIFIERS
	/* cputimer.c: the thread's own CPU-time hrtimer */
	struct preempt_notifier pn;	/* added and removed by the thread */
	s64 cpu_left_ns;		/* to the next tick, switched out */
	bool cpu_timer;
	bool cpu_hooked;
#endif
	struct work_struct release;
	struct rcu_head rcu;		/* freed after its release */
	/* live.c, under meter_mutex */
	u64 counts_addr;		/* live counters; 0: none or folded */
	u32 counts_folded;		/* ids 1..counts_folded were sent */
	u64 *counts_base;		/* what the last reset saw, or NULL */
	u32 counts_base_n;		/* ids in counts_base, with 0 */
};

/* REGISTER's request; cookie, period_ns and clock are also its reply. */
struct meter_thread_reg {
	u64 page_addr;
	u64 period_ns;		/* 0: the module's default */
	u64 cookie;
	u64 parent_cookie;
	u64 call_cost_ps;
	u64 counts_addr;	/* 0: no live counts */
	u32 clock;		/* enum meter_clock of a new session */
	bool privileged;	/* the sender and the socket's opener */
};

int meter_thread_register(struct meter_thread_reg *reg,
			  struct netlink_ext_ack *extack);
int meter_thread_unregister(struct netlink_ext_ack *extack);
struct meter_thread *meter_thread_find(struct task_struct *tsk);
void meter_thread_end(struct meter_thread *t, enum meter_end_reason why);
int meter_thread_set_period(struct meter_thread *t, u64 period_ns);
void meter_threads_end_all(void);
/* Every listed thread; only where nothing can change the list. */
void meter_threads_visit(void (*fn)(struct meter_thread *t));

/* ended.c: a released thread as the session keeps it, for the profile. */
struct meter_ended {
	struct pid *pid;		/* referenced: the reader's tid */
	u64 samples;			/* since the last reset */
	pid_t tid;			/* global, as the stacks key it */
	u32 seq;			/* registration order, as listed */
	char comm[TASK_COMM_LEN];
};

void meter_ended_add(struct meter_session *s, struct meter_thread *t);
void meter_ended_reset(struct meter_session *s);
void meter_ended_free(struct meter_session *s);

/* cputimer.c: the CPU clock on meter's own hrtimer (cpu_timer). */
#ifdef CONFIG_PREEMPT_NOTIFIERS
void meter_cputimer_init(struct meter_thread *t, u64 period_ns);
void meter_cputimer_hook(struct meter_thread *t);
void meter_cputimer_unhook(struct meter_thread *t);
void meter_cputimer_unhook_all(void);
void meter_cputimer_release(struct meter_thread *t);
void meter_cputimer_set_period(struct meter_thread *t);
void meter_cputimer_exit(void);
static inline bool meter_cputimer_on(const struct meter_thread *t)
{
	return t->cpu_timer;
}
#else
static inline void meter_cputimer_init(struct meter_thread *t, u64 p) {}
static inline void meter_cputimer_hook(struct meter_thread *t) {}
static inline void meter_cputimer_unhook(struct meter_thread *t) {}
static inline void meter_cputimer_unhook_all(void) {}
static inline void meter_cputimer_release(struct meter_thread *t) {}
static inline void meter_cputimer_set_period(struct meter_thread *t) {}
static inline void meter_cputimer_exit(void) {}
static inline bool meter_cputimer_on(const struct meter_thread *t)
{
	return false;
}
#endif

/*
 * live.c: the call counts a live thread keeps in its own memory.  Callers
 * hold the session's live_lock (each function says what else); these may
 * sleep.
 */
struct meter_live_set {
	struct meter_thread **t;	/* threads with live counters */
	u64 **base;			/* a reset's new bases, or NULL */
	u32 n;
	u32 max_id;			/* highest id named when collected */
};

int meter_live_read(struct meter_thread *t, u32 max_id, u64 *out);
struct meter_thread *meter_live_thread(struct meter_session *s, pid_t tid);
u64 meter_live_base(const struct meter_thread *t, u32 id);
void meter_live_fold(struct meter_thread *t, u32 upto, bool last);
int meter_live_collect(struct meter_session *s, struct meter_live_set *ls);
int meter_live_bases_alloc(struct meter_session *s, struct meter_live_set *ls);
void meter_live_rebase(struct meter_session *s, struct meter_live_set *ls);
void meter_live_set_free(struct meter_live_set *ls);

/* snapshot.c: a session copied for PROFILE_GET and SESSION_GET. */
struct meter_session_info {
	u64 cookie, parent_cookie, period_ns, start_ns, end_ns;
	u64 samples, ticks, no_current, invalid, lost, truncated;
	u64 samples_off[2];
	u64 call_cost_ps, slow_entries;
	u64 stretched, addrs_lost;
	u32 clock;
	u32 pid, uid, state, threads, threads_total, nfuncs, nstacks, naddrs;
	u32 nmaps;
	char comm[TASK_COMM_LEN];
};

struct meter_snap_func {
	u64 calls, self, total, alloc_calls, alloc_bytes;
	u64 self_off[2];
	u32 id;
	u32 name_off;		/* into names; U32_MAX: no name */
	u32 file_off;		/* into names; U32_MAX: no file */
	u32 line;
	u64 cost_ps;
	u32 last_stack;		/* for totals: last stack counted + 1 */
};

struct meter_snap_thread {
	u64 samples;
	u32 tid;			/* in the reader's pid namespace */
	u32 global_tid;			/* as the stacks key it */
	u32 state;
	u32 folded;			/* ended threads in this row; tid 0 */
	u32 seq;			/* the order of the THREAD nests */
	char comm[TASK_COMM_LEN];
};

struct meter_snap {
	int err;			/* deferred error of the dump start */
	const char *errmsg;
	struct meter_session_info si;
	u32 nfuncs, nstacks, nthreads, naddrs;
	struct meter_snap_func *funcs;	/* sorted by id */
	char *names;
	struct meter_stack_entry *stacks;
	u32 *pool;
	struct meter_stack_entry *addrs;	/* keys in addr_pool */
	u32 *addr_pool;
	struct meter_maps maps;
	struct meter_snap_thread *threads;
	struct meter_live_set live;	/* while it is taken */
	kuid_t uid;			/* charged: max_user_snap_mb */
	size_t charged;
};

/* Caller holds meter_mutex and s->lock. */
void meter_session_info_fill(struct meter_session *s,
			     struct meter_session_info *si);
/* Caller holds a reference on s, not meter_mutex. */
int meter_snap_take(struct meter_session *s, struct meter_snap *sn);
/* Frees what the snapshot holds, not the snapshot itself. */
void meter_snap_clear(struct meter_snap *sn);
/* The nests and attributes of the dumps; -EMSGSIZE when skb is full. */
struct sk_buff;
int meter_put_session(struct sk_buff *skb,
		      const struct meter_session_info *si);
int meter_put_func(struct sk_buff *skb, const struct meter_snap *sn,
		   const struct meter_snap_func *f);
int meter_put_stack(struct sk_buff *skb, const struct meter_snap *sn,
		    const struct meter_stack_entry *e);
int meter_put_thread(struct sk_buff *skb,
		     const struct meter_snap_thread *th);
int meter_put_addr(struct sk_buff *skb, const struct meter_snap *sn,
		   const struct meter_stack_entry *e);
int meter_put_map(struct sk_buff *skb, const struct meter_maps *m, u32 i);

/* sample.c: the ticks: CPU clock (perf, or cpu_timer), wall clock. */
void meter_sample_tick(struct perf_event *event,
		       struct perf_sample_data *data, struct pt_regs *regs);
enum hrtimer_restart meter_sample_wall_tick(struct hrtimer *timer);
enum hrtimer_restart meter_sample_cpu_timer_tick(struct hrtimer *timer);

/* lifecycle.c: exit tracepoint. */
int meter_lifecycle_init(void);
void meter_lifecycle_exit(void);

/* netlink.c */
int meter_netlink_init(void);
void meter_netlink_exit(void);

#endif /* METER_KMOD_H */
