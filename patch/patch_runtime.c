// SPDX-License-Identifier: MIT
/*
 * libmeter-patch.so's slow paths (patch_install.c patches the entries,
 * patch_hook.S holds the fast paths).
 *
 * A patched function's frame is kept on the thread's shadow stack, in its
 * block (include/meter.h: page, sps[], sites[], counts[]), as the plugin's
 * code keeps it, with two rules of its own:
 *
 * - sps[i] is the address of frame i's return-address slot (rsp at the
 *   entry), and sites[i] the real return address, which the return hook
 *   goes back to: the shadow stack is the return stack.  Frames past the
 *   page's capacity (deep recursion) keep theirs here, in deep_rets.
 * - Every sps[] at or above the depth holds UINTPTR_MAX ("no frame"), and
 *   a push stores the depth before the frame's words: a signal handler
 *   that interrupts a push between the two finds a frame that is not
 *   stale (its calls push and pop above it), never one whose words it
 *   may overwrite.  A pop frees the frame before the depth moves.
 *
 * Frames dropped without returning (longjmp) have slots at or below the
 * next entry's, and are popped then, or at the next return.  A function
 * entered by a jump (a tail call) has the slot of the function that
 * jumped, which has ended: its real return address goes back into the
 * slot before the new frame takes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "patch_runtime.h"

#define CAP		METER__STACK_CAP
#define NO_FRAME	UINTPTR_MAX
#define TLS_IE		__attribute__((tls_model("initial-exec")))

struct patched *patched;
size_t patch_nfuncs;
uint64_t patch_hooks[PATCH_HOOKS_MAX];
unsigned int patch_nhooks;

/* The slow path's own calls (libmeter's, the C library's) are not the
 * program's: with those libraries patched, they run as they were. */
static __thread int in_slow_path TLS_IE;

/* A frame past the page's capacity: frame METER__STACK_CAP + i. */
struct deep_ret {
	uintptr_t slot;
	uintptr_t ra;
};

struct deep_rets {
	struct deep_ret *v;
	size_t n, cap;
};

static __thread struct deep_rets deep_rets TLS_IE;
/* The block whose free sps[] hold NO_FRAME: this thread's, once seen. */
static __thread struct meter__page_hdr *own_block TLS_IE;

/*
 * While patching (meter's own calls, into libraries it may have patched
 * already), the thread's page is one that sends every patched call to
 * the slow path, which lets it run uncounted.
 */
static struct meter__page_hdr quiet_page = { .depth = UINT32_MAX };
static __thread struct meter_page *quiet_saved TLS_IE;

void patch_quiet_begin(void)
{
	quiet_saved = meter__tls.page;
	in_slow_path++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	meter__tls.page = (struct meter_page *)&quiet_page;
}

void patch_quiet_end(void)
{
	meter__tls.page = quiet_saved;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	in_slow_path--;
}

int patch_reserve(void)
{
	void *v = mmap(NULL, PATCH_FUNCS_MAX * sizeof(*patched),
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (v == MAP_FAILED)
		return -1;
	patched = v;
	return 0;
}

static void die(const char *why)
{
	fprintf(stderr, "meter: patched program: %s\n", why);
	abort();
}

bool patch_is_hook(uint64_t addr)
{
	unsigned int i;

	for (i = 0; i < patch_nhooks; i++)
		if (patch_hooks[i] == addr)
			return true;
	return false;
}

static uintptr_t *sps_of(struct meter__page_hdr *h)
{
	return METER__SPS(h);
}

static uintptr_t *sites_of(struct meter__page_hdr *h)
{
	return METER__SITES(h);
}

static bool registered(const struct meter__page_hdr *h)
{
	return h->depth != UINT32_MAX;
}

/* mmap, not malloc: a patched function may be malloc's caller. */
static void deep_grow(struct deep_rets *s)
{
	size_t cap = s->cap ? s->cap * 2 : 4096, i;
	void *v;

	if (s->v)
		v = mremap(s->v, s->cap * sizeof(*s->v), cap * sizeof(*s->v),
			   MREMAP_MAYMOVE);
	else
		v = mmap(NULL, cap * sizeof(*s->v), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v == MAP_FAILED)
		die("no memory for the deep frames' return addresses");
	s->v = v;
	for (i = s->cap; i < cap; i++)	/* not memset: as own() says */
		((volatile struct deep_ret *)s->v)[i].slot = NO_FRAME;
	s->cap = cap;
}

/*
 * Frames popped without returning through the hook, by slot: the real
 * return address of the last frame popped at each.  Most were dropped
 * (longjmp) and never return, but a frame on another stack is only
 * suspended: a coroutine's (swapcontext) or a handler's on an alternate
 * signal stack, popped when the thread's frames elsewhere moved, returns
 * through the hook later with no frame of its own, and goes back here.
 */
struct lost_ret {
	uintptr_t slot;		/* 0: empty */
	uintptr_t ra;
};

struct lost_rets {
	struct lost_ret *v;
	size_t n, cap;		/* cap: a power of 2 */
};

static __thread struct lost_rets lost TLS_IE;

static struct lost_ret *lost_find(struct lost_ret *v, size_t cap,
				  uintptr_t slot)
{
	size_t i = (slot >> 3) * 0x9e3779b97f4a7c15ull >> 20;

	for (;; i++) {
		struct lost_ret *e = &v[i & (cap - 1)];

		if (!e->slot || e->slot == slot)
			return e;
	}
}

static void *map_zeroed(size_t len)
{
	void *v = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (v == MAP_FAILED)
		die("no memory for the return addresses of popped frames");
	return v;
}

static void lost_put(uintptr_t slot, uintptr_t ra)
{
	struct lost_rets *l = &lost;
	struct lost_ret *e;

	if (2 * (l->n + 1) > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024, i;
		struct lost_ret *v = map_zeroed(cap * sizeof(*v));

		for (i = 0; i < l->cap; i++)
			if (l->v[i].slot)
				*lost_find(v, cap, l->v[i].slot) = l->v[i];
		if (l->v)
			munmap(l->v, l->cap * sizeof(*l->v));
		l->v = v;
		l->cap = cap;
	}
	e = lost_find(l->v, l->cap, slot);
	if (!e->slot)
		l->n++;
	e->slot = slot;
	e->ra = ra;
}

static bool lost_take(uintptr_t slot, uintptr_t *ra)
{
	struct lost_ret *e;

	if (!lost.cap)
		return false;
	e = lost_find(lost.v, lost.cap, slot);
	if (!e->slot)
		return false;
	*ra = e->ra;
	return true;
}

/* Frame d - 1 off, d <= CAP: freed, then the depth, then current. */
static void pop_shallow(struct meter__page_hdr *h, uint32_t d)
{
	sps_of(h)[d - 1] = NO_FRAME;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h->depth = d - 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h->current_id = d >= 2 ? h->stack[d - 2] : 0;
}

/* Frame d - 1 off, d > CAP: libmeter keeps the deep window. */
static void pop_deep(struct meter__page_hdr *h, uint32_t d,
		     meter_record_t *rec)
{
	struct deep_rets *s = &deep_rets;

	if (s->n != d - CAP)
		die("the deep frames' return addresses are out of step");
	s->v[--s->n].slot = NO_FRAME;
	if (registered((struct meter__page_hdr *)meter__tls.page))
		meter_leave(rec);
	else
		h->depth = d - 1;
}

/*
 * Pops the frames whose slots lie at or below slot (an entry) or below it
 * (a return: strict), putting a tail-called frame's real return address
 * back.
 */
static void pop_stale(struct meter__page_hdr *h, uintptr_t slot,
			   bool strict, meter_record_t *rec)
{
	uintptr_t *at = (uintptr_t *)slot;
	uint32_t d;

	while ((d = h->depth) > 0) {
		uintptr_t s, ra;

		if (d > CAP) {
			struct deep_rets *dr = &deep_rets;

			if (dr->n != d - CAP)
				die("the deep frames' return addresses are out of step");
			s = dr->v[dr->n - 1].slot;
			ra = dr->v[dr->n - 1].ra;
		} else {
			s = sps_of(h)[d - 1];
			ra = sites_of(h)[d - 1];
		}
		if (s > slot || (strict && s == slot))
			break;
		if (s == slot && patch_is_hook(*at))
			*at = ra;
		else
			lost_put(s, ra);
		if (d > CAP)
			pop_deep(h, d, rec);
		else
			pop_shallow(h, d);
	}
}

/*
 * Every free frame's sps[] NO_FRAME, once for a thread's block.  Stored
 * through a volatile pointer: GCC would make the loop a call of memset,
 * which may be patched, and whose frame the loop would then overwrite.
 */
static void own(struct meter__page_hdr *h)
{
	volatile uintptr_t *sps = sps_of(h);
	uint32_t i;

	if (own_block == h)
		return;
	for (i = h->depth; i < CAP; i++)
		sps[i] = NO_FRAME;
	own_block = h;
}

/* The fast path's push, in C, for a frame below the capacity. */
static void push_shallow(struct meter__page_hdr *h, uint32_t id,
			 uintptr_t *slot)
{
	uint32_t d = h->depth;

	h->depth = d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h->current_id = id;
	h->stack[d] = id;
	sps_of(h)[d] = (uintptr_t)slot;
	sites_of(h)[d] = *slot;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = patch_hooks[0];
}

static void push_deep(struct meter__page_hdr *h, meter_record_t *rec,
		      uintptr_t *slot)
{
	struct deep_rets *s = &deep_rets;
	uint32_t d = h->depth;

	meter_resume(rec);
	if (h->depth != d + 1)
		return;		/* not pushed: its return is not caught */
	if (s->n == s->cap)
		deep_grow(s);
	s->v[s->n].ra = *slot;
	s->v[s->n].slot = (uintptr_t)slot;
	s->n++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = patch_hooks[0];
}

static void enter_slow(struct patched *p, struct meter__page_hdr *h,
		       uint64_t *ra_slot)
{
	struct meter__frame f;

	/* this thread's frames: a forked child's before it registers */
	if (!registered(h))
		h = own_block;
	if (h)
		pop_stale(h, (uintptr_t)ra_slot, false, p->rec);
	/* the count and current; registers the thread if need be */
	f = meter__enter_flat_slow(p->rec);
	h = (struct meter__page_hdr *)meter__tls.page;
	if ((void *)f.page != (void *)h || !registered(h))
		return;		/* not profiled: runs as it was */
	own(h);
	if (h->depth < CAP)
		push_shallow(h, p->id, (uintptr_t *)ra_slot);
	else
		push_deep(h, p->rec, (uintptr_t *)ra_slot);
}

/*
 * libmeter frees a thread's block as the thread ends (meter.h), with
 * frames still live whose returns the hook catches: the C library's own,
 * when it is patched (the thread's end runs inside them).  Their real
 * return addresses go where popped frames' go, and the block is never
 * looked at again.
 */
static void thread_ends(struct meter_page *pg)
{
	struct meter__page_hdr *h = (struct meter__page_hdr *)pg;
	struct deep_rets *s = &deep_rets;
	uint32_t i, d = h->depth < CAP ? h->depth : CAP;

	for (i = 0; i < d; i++)
		if (sps_of(h)[i] != NO_FRAME)
			lost_put(sps_of(h)[i], sites_of(h)[i]);
	while (s->n) {
		s->n--;
		lost_put(s->v[s->n].slot, s->v[s->n].ra);
	}
	if (s->v)		/* the thread had been deep: its frames are kept */
		munmap(s->v, s->cap * sizeof(*s->v));
	s->v = NULL;
	s->cap = 0;
	own_block = NULL;
}

void patch_runtime_init(void)
{
	meter__on_thread_end(thread_ends);
}

uint64_t meter_patch_enter(uint64_t index, uint64_t *ra_slot)
{
	struct patched *p = &patched[index];

	if (in_slow_path)
		return p->copy;
	in_slow_path = 1;
	enter_slow(p, (struct meter__page_hdr *)meter__tls.page, ra_slot);
	in_slow_path = 0;
	return p->copy;
}

static uint64_t leave_slow(uint64_t sp)
{
	struct meter__page_hdr *h = (struct meter__page_hdr *)meter__tls.page;
	uintptr_t slot = sp - 8, ra;
	uint32_t d;

	if (!registered(h))
		h = own_block;
	if (!h) {		/* the thread's block has gone (thread_ends) */
		if (!lost_take(slot, &ra))
			die("a return through the hook with no entry");
		return ra;
	}
	pop_stale(h, slot, true, patched[0].rec);
	d = h->depth;
	if (d > CAP) {
		struct deep_rets *s = &deep_rets;

		if (s->n && s->v[s->n - 1].slot == slot) {
			ra = s->v[s->n - 1].ra;
			pop_deep(h, d, patched[0].rec);
			return ra;
		}
	} else if (d && sps_of(h)[d - 1] == slot) {
		ra = sites_of(h)[d - 1];
		pop_shallow(h, d);
		return ra;
	}
	if (!lost_take(slot, &ra))
		die("a return through the hook with no entry");
	return ra;
}

uint64_t meter_patch_leave(uint64_t sp)
{
	int was = in_slow_path;
	uint64_t ra;

	in_slow_path = 1;
	ra = leave_slow(sp);
	in_slow_path = was;
	return ra;
}

/*
 * An unwinder (C++'s, patch_unwind.c) walks the stack by its return
 * addresses and cannot walk the hook's: the real ones go back into every
 * live frame's slot before it starts.
 */
void patch_unhook_all(void)
{
	struct meter__page_hdr *h = (struct meter__page_hdr *)meter__tls.page;
	struct deep_rets *s = &deep_rets;
	uint32_t i, d;
	size_t k;

	if (!registered(h))
		h = own_block;
	if (!h)
		return;
	d = h->depth < CAP ? h->depth : CAP;
	for (i = 0; i < d; i++) {
		uintptr_t *at = (uintptr_t *)sps_of(h)[i];

		if (sps_of(h)[i] != NO_FRAME && patch_is_hook(*at))
			*at = sites_of(h)[i];
	}
	for (k = 0; k < s->n; k++)
		if (patch_is_hook(*(uintptr_t *)s->v[k].slot))
			*(uintptr_t *)s->v[k].slot = s->v[k].ra;
}

/*
 * Where an exception was caught, by a frame whose callees' slots lie at
 * or below slot: their frames are popped, and the live frames' returns
 * caught again.
 */
void patch_rehook_from(uintptr_t slot)
{
	struct meter__page_hdr *h = (struct meter__page_hdr *)meter__tls.page;
	struct deep_rets *s = &deep_rets;
	uint32_t i, d;
	size_t k;

	if (!registered(h))
		return;
	pop_stale(h, slot, false, patched[0].rec);
	d = h->depth < CAP ? h->depth : CAP;
	for (i = 0; i < d; i++) {
		uintptr_t *at = (uintptr_t *)sps_of(h)[i];

		if (sps_of(h)[i] != NO_FRAME && *at == sites_of(h)[i])
			*at = patch_hooks[0];
	}
	for (k = 0; k < s->n; k++)
		if (*(uintptr_t *)s->v[k].slot == s->v[k].ra)
			*(uintptr_t *)s->v[k].slot = patch_hooks[0];
}
