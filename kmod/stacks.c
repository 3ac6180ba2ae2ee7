// SPDX-License-Identifier: GPL-2.0
/*
 * The bounded table of sampled stacks.
 *
 * Each session's table is an open-addressing hash of stack entries and a
 * pool of frames.  The tick inserts under the session's raw spinlock
 * without allocating; when either the table or the pool is full the
 * stack is not kept and the caller counts it as lost.
 *
 * A table starts small (METER_STACKS_FIRST_SLOTS, METER_STACKS_FIRST_POOL)
 * and grows by METER_STACKS_GROWTH up to stack_entries and stack_frames:
 * most processes keep a few hundred stacks, and a short-lived one would
 * otherwise spend more on allocating, zeroing and freeing a table sized
 * for the worst case than on its work (bench/tree.sh).  The tick asks for
 * growth when the entries fill half of what the table may hold (a
 * quarter of its slots) or a quarter of the pool, so that the rest takes
 * the samples that come before the worker runs.  Growing holds the raw
 * lock for pieces only: frames below pool_used never change, so the pool
 * is copied with interrupts on and only its newest frames under the
 * lock; the entries move to the larger table METER_STACKS_MOVE_SLOTS
 * slots per hold, the tick looking in both tables meanwhile.
 */
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "meter_kmod.h"

#define METER_STACKS_FIRST_SLOTS	512
#define METER_STACKS_FIRST_POOL		4096
#define METER_STACKS_GROWTH		4
/* Per lock hold while growing, as in a snapshot (snapshot.c). */
#define METER_STACKS_MOVE_SLOTS		1024
#define METER_STACKS_MOVE_FRAMES	4096
/* The state of an entry moved to the larger table: matches no key. */
#define METER_STACK_MOVED		0xff

static int meter_stacks_alloc(struct meter_stacks *st, u32 nslots,
			      u32 pool_size, u32 max_slots, u32 max_pool)
{
	memset(st, 0, sizeof(*st));
	st->nslots = nslots;
	st->pool_size = pool_size;
	st->max_slots = max_slots;
	st->max_pool = max_pool;
	st->slots = kvcalloc(st->nslots, sizeof(*st->slots),
			     GFP_KERNEL_ACCOUNT);
	if (!st->slots)
		goto err;
	/* only what lies below pool_used is ever read */
	st->pool = kvmalloc_array(pool_size, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!st->pool)
		goto err_slots;
	return 0;

err_slots:
	kvfree(st->slots);
	st->slots = NULL;
err:
	return -ENOMEM;
}

int meter_stacks_init(struct meter_stacks *st, u32 entries, u32 frames)
{
	u32 max_slots, max_pool;

	entries = clamp_t(u32, entries, 16, 1U << 20);
	frames = clamp_t(u32, frames, METER_SAMPLE_DEPTH_MAX, 1U << 24);
	/* Keep the load factor at most 1/2 for short probe sequences. */
	max_slots = roundup_pow_of_two(entries * 2);
	max_pool = frames;
	return meter_stacks_alloc(st,
				  min_t(u32, max_slots,
					METER_STACKS_FIRST_SLOTS),
				  min_t(u32, max_pool,
					max_t(u32, METER_STACKS_FIRST_POOL,
					      METER_SAMPLE_DEPTH_MAX)),
				  max_slots, max_pool);
}

/* An empty table of the size like has grown to (a reset's). */
int meter_stacks_init_like(struct meter_stacks *st,
			   const struct meter_stacks *like)
{
	return meter_stacks_alloc(st, like->nslots, like->pool_size,
				  like->max_slots, like->max_pool);
}

void meter_stacks_free(struct meter_stacks *st)
{
	kvfree(st->pool);
	kvfree(st->slots);
	kvfree(st->old);
	st->pool = NULL;
	st->slots = NULL;
}

size_t meter_stacks_bytes(const struct meter_stacks *st)
{
	return (size_t)st->nslots * sizeof(*st->slots) +
	       (size_t)st->pool_size * sizeof(u32);
}

/*
 * Multiply and fold, a word at a time: a third of jhash2()'s instructions
 * for the few frames of a typical stack, and no more predictable than it
 * (its seed here would be fixed too).  Only a session's own stacks share
 * its table, so colliding ids slow only the profile that chose them.
 */
static __always_inline u32 meter_frames_hash(const u32 *frames, u32 n,
					     u32 key)
{
	u32 h = key, i;

	for (i = 0; i < n; i++)
		h = (h ^ frames[i]) * GOLDEN_RATIO_32;
	return h ^ (h >> 16);
}

/* Inlined: the kernel's memcmp() goes byte by byte past the first words. */
static __always_inline bool meter_frames_equal(const u32 *a, const u32 *b,
					       u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * The slot holding the key, or the empty slot where it would go (NULL).
 * Inlined: the tick's path, once per sample.
 */
static __always_inline struct meter_stack_entry *
meter_stacks_find(struct meter_stack_entry *slots, u32 nslots,
		  const u32 *pool, u32 hash, u32 tid, const u32 *frames,
		  u32 n, bool truncated, u8 state)
{
	u32 mask = nslots - 1, i, probes;
	struct meter_stack_entry *e;

	for (i = hash & mask, probes = 0; probes < nslots;
	     i = (i + 1) & mask, probes++) {
		e = &slots[i];
		if (!e->depth)
			return e;
		if (e->hash == hash && e->depth == n &&
		    e->truncated == truncated && e->state == state &&
		    e->tid == tid &&
		    meter_frames_equal(&pool[e->off], frames, n))
			return e;
	}
	return NULL;
}

/*
 * Inlined into each of the two below: the address table's key is always
 * three words, and with n constant its hash, compare and copy unroll.
 */
static __always_inline enum meter_stack_added
meter_stacks_count(struct meter_stacks *st, u32 tid, const u32 *frames, u32 n,
		   bool truncated, u8 state, u64 weight)
{
	struct meter_stack_entry *e;
	u32 hash, key;
	/*
	 * The same frames in another thread or state are another entry: the
	 * seed holds both (a tid is below 2^22, pid_max's limit; cut and
	 * state take 3 bits), so the tick pays no second hash for them.
	 */
	key = tid ^ (truncated | (u32)state << 1) << 29;
	hash = meter_frames_hash(frames, n, key);
	if (unlikely(st->old)) {
		/* not moved yet: counted where it is */
		e = meter_stacks_find(st->old, st->old_nslots, st->pool, hash,
				      tid, frames, n, truncated, state);
		if (e && e->depth) {
			e->samples += weight;
			return METER_STACK_COUNTED;
		}
	}
	e = meter_stacks_find(st->slots, st->nslots, st->pool, hash, tid,
			      frames, n, truncated, state);
	if (e && e->depth) {
		e->samples += weight;
		return METER_STACK_COUNTED;
	}
	/* Not found: insert if there is room for the entry and frames. */
	if (!e || st->nused * 2 >= st->nslots ||
	    st->pool_size - st->pool_used < n)
		return METER_STACK_LOST;
	memcpy(&st->pool[st->pool_used], frames, n * sizeof(u32));
	e->off = st->pool_used;
	e->hash = hash;
	e->depth = n;
	e->truncated = truncated;
	e->state = state;
	e->tid = tid;
	e->samples = weight;
	st->pool_used += n;
	st->nused++;
	return METER_STACK_NEW;
}

enum meter_stack_added meter_stacks_add(struct meter_stacks *st, u32 tid,
					const u32 *frames, u32 n,
					bool truncated, u8 state, u64 weight)
{
	if (!n || n > METER_SAMPLE_DEPTH_MAX)
		return METER_STACK_LOST;
	return meter_stacks_count(st, tid, frames, n, truncated, state,
				  weight);
}

enum meter_stack_added meter_addrs_add(struct meter_stacks *st, u32 cur,
				       u64 ip, u64 weight)
{
	u32 key[METER_ADDR_KEY_WORDS] = {
		cur, lower_32_bits(ip), upper_32_bits(ip)
	};

	return meter_stacks_count(st, 0, key, METER_ADDR_KEY_WORDS, false,
				  METER_SAMPLE_ONCPU, weight);
}

/* A pool of size frames, the old one's frames copied, swapped in. */
static int meter_stacks_grow_pool(struct meter_stacks *st,
				  raw_spinlock_t *lock, u32 size)
{
	u32 *pool, *gone, done = 0, used;
	unsigned long flags;

	pool = kvmalloc_array(size, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!pool)
		return -ENOMEM;
	for (;;) {
		raw_spin_lock_irqsave(lock, flags);
		used = st->pool_used;
		if (used - done <= METER_STACKS_MOVE_FRAMES)
			break;
		raw_spin_unlock_irqrestore(lock, flags);
		memcpy(pool + done, st->pool + done,
		       (used - done) * sizeof(u32));
		done = used;
	}
	memcpy(pool + done, st->pool + done, (used - done) * sizeof(u32));
	gone = st->pool;
	st->pool = pool;
	st->pool_size = size;
	raw_spin_unlock_irqrestore(lock, flags);
	kvfree(gone);
	return 0;
}

/* A table of nslots slots, the entries moved into it a piece at a time. */
static int meter_stacks_grow_slots(struct meter_stacks *st,
				   raw_spinlock_t *lock, u32 nslots)
{
	struct meter_stack_entry *slots, *e, *d;
	unsigned long flags;
	u32 i = 0, end, j;

	slots = kvcalloc(nslots, sizeof(*slots), GFP_KERNEL_ACCOUNT);
	if (!slots)
		return -ENOMEM;
	raw_spin_lock_irqsave(lock, flags);
	st->old = st->slots;
	st->old_nslots = st->nslots;
	st->slots = slots;
	st->nslots = nslots;
	raw_spin_unlock_irqrestore(lock, flags);

	while (i < st->old_nslots) {
		end = min(st->old_nslots, i + METER_STACKS_MOVE_SLOTS);
		raw_spin_lock_irqsave(lock, flags);
		for (; i < end; i++) {
			e = &st->old[i];
			if (!e->depth || e->state == METER_STACK_MOVED)
				continue;
			/* the key is in neither table twice: no compare */
			for (j = e->hash & (nslots - 1); slots[j].depth;
			     j = (j + 1) & (nslots - 1))
				;
			d = &slots[j];
			*d = *e;
			/* still a link in the old table's probe chains */
			e->state = METER_STACK_MOVED;
		}
		raw_spin_unlock_irqrestore(lock, flags);
		cond_resched();
	}
	raw_spin_lock_irqsave(lock, flags);
	e = st->old;
	st->old = NULL;
	st->old_nslots = 0;
	raw_spin_unlock_irqrestore(lock, flags);
	kvfree(e);
	return 0;
}

/*
 * Grows what the tick asked for, within room bytes; adds what it took to
 * *grown.  A growth that fails or does not fit is not tried again: the
 * table keeps its size, and what does not fit is counted as lost.
 * Caller holds meter_mutex (no reset or snapshot meanwhile).
 */
void meter_stacks_grow(struct meter_stacks *st, raw_spinlock_t *lock,
		       size_t room, size_t *grown)
{
	u32 nslots, pool_size, nused, pool_used;
	unsigned long flags;
	size_t more;

	raw_spin_lock_irqsave(lock, flags);
	nused = st->nused;
	pool_used = st->pool_used;
	raw_spin_unlock_irqrestore(lock, flags);

	if (pool_used * 4 >= st->pool_size && st->pool_size < st->max_pool) {
		pool_size = min_t(u64, st->max_pool,
				  (u64)st->pool_size * METER_STACKS_GROWTH);
		more = (size_t)(pool_size - st->pool_size) * sizeof(u32);
		if (more > room ||
		    meter_stacks_grow_pool(st, lock, pool_size)) {
			raw_spin_lock_irqsave(lock, flags);
			st->max_pool = st->pool_size;
			raw_spin_unlock_irqrestore(lock, flags);
		} else {
			room -= more;
			*grown += more;
		}
	}
	if (nused * 4 >= st->nslots && st->nslots < st->max_slots) {
		nslots = min_t(u64, st->max_slots,
			       (u64)st->nslots * METER_STACKS_GROWTH);
		more = (size_t)(nslots - st->nslots) * sizeof(*st->slots);
		if (more > room ||
		    meter_stacks_grow_slots(st, lock, nslots)) {
			raw_spin_lock_irqsave(lock, flags);
			st->max_slots = st->nslots;
			raw_spin_unlock_irqrestore(lock, flags);
		} else {
			*grown += more;
		}
	}
}
