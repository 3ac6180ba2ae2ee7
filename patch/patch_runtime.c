// SPDX-License-Identifier: MIT
/*
 * libmeter-patch.so's hooks (patch_install.c patches the entries).
 *
 * A patched entry jumps to a stub of its own (push the function's index,
 * jump to meter_patch_entry in patch_hook.S), which calls
 * meter_patch_enter(): libmeter's meter_enter() for the function's record
 * (the count, current, the shadow stack) and the caller's return address
 * swapped for meter_patch_return, the real one kept on a per-thread
 * return stack with the address of its slot.  A return comes to
 * meter_patch_leave(): meter_leave() and the real address back.  Frames
 * dropped without returning (longjmp) are found by their slots, which lie
 * at or below the next entry's, and left then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "patch_runtime.h"

struct patched *patched;

struct ret_entry {
	uint64_t slot;		/* where the return address was */
	uint64_t ra;		/* the real one */
	uint64_t index;
};

struct ret_stack {
	struct ret_entry *v;
	size_t n, cap;
};

static __thread struct ret_stack rets;

static void die(const char *why)
{
	fprintf(stderr, "meter: patched program: %s\n", why);
	abort();
}

/* mremap, not malloc: a patched function may be malloc's caller. */
static void ret_stack_grow(struct ret_stack *s)
{
	size_t cap = s->cap ? s->cap * 2 : 4096;
	void *v;

	if (s->v)
		v = mremap(s->v, s->cap * sizeof(*s->v), cap * sizeof(*s->v),
			   MREMAP_MAYMOVE);
	else
		v = mmap(NULL, cap * sizeof(*s->v), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v == MAP_FAILED)
		die("no memory for the return stack");
	s->v = v;
	s->cap = cap;
}

uint64_t meter_patch_enter(uint64_t index, uint64_t *ra_slot)
{
	struct ret_stack *s = &rets;
	size_t i;

	/*
	 * Frames left by longjmp: their slots were at or below this one.
	 * And a tail call: the function that jumped here has ended, its
	 * slot is this one and still holds the hook, and the real return
	 * address goes back into it (a slot reused by a new call after a
	 * longjmp holds that call's own).
	 */
	while (s->n && s->v[s->n - 1].slot <= (uint64_t)ra_slot) {
		if (s->v[s->n - 1].slot == (uint64_t)ra_slot &&
		    *ra_slot == (uint64_t)meter_patch_return)
			*ra_slot = s->v[s->n - 1].ra;
		meter_leave(patched[s->v[s->n - 1].index].rec);
		s->n--;
	}
	if (s->n == s->cap)
		ret_stack_grow(s);
	/* reserved before it is written: a signal handler's calls go above */
	i = s->n++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->v[i].slot = (uint64_t)ra_slot;
	s->v[i].ra = *ra_slot;
	s->v[i].index = index;
	*ra_slot = (uint64_t)meter_patch_return;
	meter_enter(patched[index].rec);
	return patched[index].copy;
}

uint64_t meter_patch_leave(uint64_t sp)
{
	struct ret_stack *s = &rets;
	uint64_t slot = sp - 8, ra;

	while (s->n && s->v[s->n - 1].slot < slot) {
		meter_leave(patched[s->v[s->n - 1].index].rec);
		s->n--;
	}
	if (!s->n || s->v[s->n - 1].slot != slot)
		die("a return through the hook with no entry");
	ra = s->v[s->n - 1].ra;
	meter_leave(patched[s->v[s->n - 1].index].rec);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->n--;
	return ra;
}

