// SPDX-License-Identifier: GPL-2.0
/*
 * The bounded table of sampled stacks.
 *
 * Each session preallocates, in process context, an open-addressing hash
 * table of stack entries and a pool of frames.  The tick inserts under the
 * session's raw spinlock without allocating; when either the table or the
 * pool is full the stack is not kept and the caller counts it as lost.
 */
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "meter.h"

int meter_stacks_init(struct meter_stacks *st, u32 entries, u32 frames)
{
	memset(st, 0, sizeof(*st));
	entries = clamp_t(u32, entries, 16, 1U << 20);
	frames = clamp_t(u32, frames, METER_SAMPLE_DEPTH_MAX, 1U << 24);
	/* Keep the load factor at most 1/2 for short probe sequences. */
	st->nslots = roundup_pow_of_two(entries * 2);
	st->pool_size = frames;
	st->slots = kvcalloc(st->nslots, sizeof(*st->slots),
			     GFP_KERNEL_ACCOUNT);
	if (!st->slots)
		goto err;
	st->pool = kvcalloc(frames, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!st->pool)
		goto err_slots;
	return 0;

err_slots:
	kvfree(st->slots);
	st->slots = NULL;
err:
	return -ENOMEM;
}

/* An empty table of the same size as like (a reset's). */
int meter_stacks_init_like(struct meter_stacks *st,
			   const struct meter_stacks *like)
{
	return meter_stacks_init(st, like->nslots / 2, like->pool_size);
}

void meter_stacks_free(struct meter_stacks *st)
{
	kvfree(st->pool);
	kvfree(st->slots);
	st->pool = NULL;
	st->slots = NULL;
}

size_t meter_stacks_bytes(const struct meter_stacks *st)
{
	return (size_t)st->nslots * sizeof(*st->slots) +
	       (size_t)st->pool_size * sizeof(u32);
}

bool meter_stacks_add(struct meter_stacks *st, u32 tid, const u32 *frames,
		      u32 n, bool truncated, u8 state, u64 weight)
{
	u32 hash, key, mask = st->nslots - 1, i, probes;
	struct meter_stack_entry *e;

	if (!n || n > METER_SAMPLE_DEPTH_MAX)
		return false;
	/*
	 * The same frames in another thread or state are another entry: the
	 * seed holds both (a tid is below 2^22, pid_max's limit; cut and
	 * state take 3 bits), so the tick pays no second hash for them.
	 */
	key = tid ^ (truncated | (u32)state << 1) << 29;
	hash = jhash2(frames, n, key);
	for (i = hash & mask, probes = 0; probes < st->nslots;
	     i = (i + 1) & mask, probes++) {
		e = &st->slots[i];
		if (!e->depth)
			break;
		if (e->hash == hash && e->depth == n &&
		    e->truncated == truncated && e->state == state &&
		    e->tid == tid &&
		    !memcmp(&st->pool[e->off], frames, n * sizeof(u32))) {
			e->samples += weight;
			return true;
		}
	}
	/* Not found: insert if there is room for the entry and frames. */
	if (probes == st->nslots || st->nused * 2 >= st->nslots ||
	    st->pool_size - st->pool_used < n)
		return false;
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
	return true;
}
