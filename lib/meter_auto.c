// SPDX-License-Identifier: MIT
/*
 * Automatic instrumentation: the hooks GCC and Clang call from every
 * function compiled with -finstrument-functions.
 *
 * A function's record is found by its address in one global open-addressing
 * table: lock-free to read, written only under the registry lock the first
 * time a function is seen (then never again).  Its name is looked up in the
 * ELF symbol tables later, when the name is needed (meter_symbols.c).
 *
 * A frame is identified by the instrumented function's canonical frame
 * address (CFA: the stack pointer before the call), as METER_FUNCTION()
 * does with __builtin_dwarf_cfa().  A hook only knows its own CFA; the
 * function's is found where its return address (the call_site argument)
 * is stored, just below it.  The distance from the enter hook's CFA to the
 * function's is constant per function: it is found once by scanning the
 * stack and cached with the record, then only checked (one load).
 */
#include <string.h>

#include "meter_internal.h"

#define TABLE_BITS 18
#define TABLE_SIZE (1U << TABLE_BITS)
#define TABLE_MASK (TABLE_SIZE - 1)
#define TABLE_FILL (TABLE_SIZE / 2)	/* at most half full: short probes */

struct slot {
	uintptr_t addr;		/* 0: empty; written last */
	uint32_t id;
	uint32_t cfa_off;	/* function's CFA - enter hook's CFA */
};

static struct slot table[TABLE_SIZE];	/* .bss: pages touched on use */
static uint32_t table_used;

/* as libmeter loads: the table's pages stay small (meter_memory.c) */
static void __attribute__((constructor)) table_small_pages(void)
{
	meter_small_pages(table, sizeof(table), false);
}

/*
 * Functions are 16-byte aligned and a module's code is contiguous: the
 * address bits above the alignment spread one module's functions over the
 * table without collisions (linear probing takes care of the rest).
 */
static inline METER_NOINSTR uint32_t hash_addr(uintptr_t a)
{
	return (uint32_t)(a >> 4) & TABLE_MASK;
}

/* The slot of a function, or NULL; lock-free. */
static METER_NOINSTR struct slot *find_slot(uintptr_t addr)
{
	uint32_t i = hash_addr(addr);
	uintptr_t k;

	for (;;) {
		k = __atomic_load_n(&table[i].addr, __ATOMIC_ACQUIRE);
		if (k == addr)
			return &table[i];
		if (!k)
			return NULL;
		i = (i + 1) & TABLE_MASK;
	}
}

uint32_t METER_NOINSTR meter_auto_find(uintptr_t addr)
{
	struct slot *sl = find_slot(addr);

	return sl ? sl->id : 0;
}

static METER_NOINSTR uint32_t auto_create(uintptr_t addr)
{
	uint32_t id = 0, i;

	pthread_mutex_lock(&meter_g.lock);
	i = hash_addr(addr);
	for (;;) {
		uintptr_t k = table[i].addr;

		if (k == addr) {
			id = table[i].id;
			goto out;
		}
		if (!k)
			break;
		i = (i + 1) & TABLE_MASK;
	}
	if (table_used >= TABLE_FILL)
		goto out;
	/* the name is resolved later, when it is needed */
	id = meter_record_new_locked(METER_REC_AUTO, NULL, addr);
	if (!id)
		goto out;
	table[i].id = id;
	__atomic_store_n(&table[i].addr, addr, __ATOMIC_RELEASE);
	table_used++;
	if (meter_tstate == METER_T_LIVE)
		meter_send_names_locked();
out:
	pthread_mutex_unlock(&meter_g.lock);
	return id;
}

/*
 * The CFA of the instrumented function: the word above its return address
 * (site), searched for upward from the hook's CFA, within the thread's
 * stack.  0 when not found.  The words passed over may be uninitialised
 * padding of the function's frame (valgrind's memcheck says so, once per
 * function): only an equal word matters.
 */
static METER_NOINSTR uintptr_t find_cfa(uintptr_t hook_cfa, uintptr_t site)
{
	uintptr_t hi = meter_self ? meter_self->stack_hi : 0;
	uintptr_t p, lim = hook_cfa + 4096 * sizeof(uintptr_t);

	if (hi && lim > hi)
		lim = hi;
	if (!hi)
		lim = hook_cfa + 64 * sizeof(uintptr_t);
	/* from the hook's own return address: the exit hook may be jumped to */
	for (p = hook_cfa - sizeof(uintptr_t); p + sizeof(uintptr_t) <= lim;
	     p += sizeof(uintptr_t))
		if (*(const uintptr_t *)p == site)
			return p + sizeof(uintptr_t);
	return 0;
}

void meter_auto_reserve(uintptr_t addr, uint32_t id)
{
	uint32_t i;

	pthread_mutex_lock(&meter_g.lock);
	for (i = hash_addr(addr); table[i].addr && table[i].addr != addr;
	     i = (i + 1) & TABLE_MASK)
		;
	if (!table[i].addr) {
		table[i].id = id;
		__atomic_store_n(&table[i].addr, addr, __ATOMIC_RELEASE);
		table_used++;
	}
	pthread_mutex_unlock(&meter_g.lock);
}

/*
 * The common cases the hook's fast path leaves out, without the full slow
 * path: a function displaced from its home slot by a collision, and a
 * function inlined into the function on top of the stack (its hooks run in
 * the caller's frame, so its frame address is the caller's).  Pushes the
 * call and returns true, or returns false for the slow path.
 */
static METER_NOINSTR bool enter_quick(uintptr_t fn, uintptr_t hook_cfa,
				      uintptr_t site)
{
	struct meter_page *pg = meter__tls.page;
	uintptr_t *sps = METER__SPS(pg), *sites = METER__SITES(pg);
	uint32_t d = pg->depth;
	struct slot *sl;
	uintptr_t cfa;
	uint32_t id;

	if (d >= METER_STACK_CAP || !(sl = find_slot(fn)))
		return false;
	cfa = hook_cfa + sl->cfa_off;
	id = sl->id;
	if (((const uintptr_t *)cfa)[-1] != site)
		return false;
	if (cfa >= sps[(int)d - 1] &&
	    (cfa != sps[d - 1] || sites[d - 1] != site ||
	     pg->stack[d - 1] == id))
		return false;
	METER__COUNTS(pg)[id]++;
	sps[d] = cfa;
	sites[d] = site;
	pg->stack[d] = id;
	meter_set_cd(pg, id, d + 1);
	return true;
}

static METER_NOINSTR __attribute__((noinline)) void
enter_slow(uintptr_t fn, uintptr_t hook_cfa, uintptr_t site)
{
	struct slot *sl;
	uintptr_t cfa;
	uint32_t id;

	if (enter_quick(fn, hook_cfa, site))
		return;
	meter_via_hooks = 1;
	if (meter_busy || !meter_thread_ready())
		return;
	id = meter_auto_find(fn);
	if (!id) {
		meter_busy = 1;
		id = auto_create(fn);
		meter_busy = 0;
		if (!id)
			return;
	}
	/* the cached distance, if it holds, else a search */
	sl = find_slot(fn);
	cfa = hook_cfa + (sl ? sl->cfa_off : 0);
	if (!sl || ((const uintptr_t *)cfa)[-1] != site)
		cfa = find_cfa(hook_cfa, site);
	if (cfa) {
		/* cache the distance where the fast path looks */
		if (sl)
			__atomic_store_n(&sl->cfa_off,
					 (uint32_t)(cfa - hook_cfa),
					 __ATOMIC_RELAXED);
	} else {
		cfa = hook_cfa;
	}
	meter_count_slow();
	meter_counts()[id]++;
	meter_push(id, cfa, site, NULL);
}

static METER_NOINSTR __attribute__((noinline)) void
exit_slow(uintptr_t fn, uintptr_t hook_cfa, uintptr_t site)
{
	struct meter_page *pg = meter__tls.page;
	uint32_t d = pg->depth;
	uintptr_t cfa, *sps, *sites;

	(void)fn;
	if (pg == METER_NO_PAGE || d == 0)
		return;
	sps = meter_sps();
	sites = meter_sites();
	cfa = find_cfa(hook_cfa, site);
	if (d > METER_STACK_CAP) {
		if (!cfa || sps[METER_STACK_CAP - 1] >= cfa) {
			/* a frame past the capacity */
			meter_pop_to(d - 1);
			return;
		}
		d = METER_STACK_CAP;	/* all of them were unwound */
	}
	if (cfa) {
		/* frames below this one were unwound (longjmp, exception) */
		while (d > 0 && sps[d - 1] < cfa)
			d--;
		if (d > 0 && sps[d - 1] == cfa)
			d--;
	} else {
		while (d > 0 && sps[d - 1] <= hook_cfa)
			d--;
		if (d > 0 && sites[d - 1] == site)
			d--;
	}
	meter_pop_to(d);
}

void METER_NOINSTR __cyg_profile_func_enter(void *fn, void *call_site)
{
	struct meter__page_hdr *pg = (struct meter__page_hdr *)meter__tls.page;
	uintptr_t hook_cfa = (uintptr_t)__builtin_dwarf_cfa();
	uintptr_t a = (uintptr_t)fn, site = (uintptr_t)call_site, cfa;
	uintptr_t id, d = pg->depth, *slot;
	struct slot *sl;

	/* not registered (depth UINT32_MAX) or deep */
	if (__builtin_expect(d >= METER_STACK_CAP, 0))
		goto slow;
	/* the home slot only: a function displaced by a collision is found
	 * by enter_quick() */
	sl = &table[hash_addr(a)];
	if (__builtin_expect(__atomic_load_n(&sl->addr, __ATOMIC_ACQUIRE) != a,
			     0))
		goto slow;
	/* the function's frame, checked by its return address */
	cfa = hook_cfa + sl->cfa_off;
	if (__builtin_expect(((const uintptr_t *)cfa)[-1] != site, 0))
		goto slow;
	/* stale frame on top, or inlined into the caller on top: slow path;
	 * slot[0] is sps[d - 1], slot[1] sps[d] */
	slot = &METER__SP_BELOW(pg, d);
	if (__builtin_expect(cfa >= slot[0], 0))
		goto slow;
	id = sl->id;
	METER__COUNTS(pg)[id]++;
	slot[1] = cfa;
	slot[1 + (METER__BLOCK_SITES - METER__BLOCK_SPS) / 8] = site;
	pg->stack[d] = (uint32_t)id;
	/* current, then depth (as METER_FUNCTION does) */
	METER__FENCE();
	pg->current_id = (uint32_t)id;
	METER__FENCE();
	pg->depth = (uint32_t)d + 1;
	return;
slow:
	enter_slow(a, hook_cfa, site);
}

void METER_NOINSTR __cyg_profile_func_exit(void *fn, void *call_site)
{
	struct meter__page_hdr *pg = (struct meter__page_hdr *)meter__tls.page;
	uintptr_t hook_cfa = (uintptr_t)__builtin_dwarf_cfa();
	uintptr_t site = (uintptr_t)call_site;
	/* the new depth; the top frame is dn */
	uintptr_t dn = (uintptr_t)pg->depth - 1, top_sp;
	/* top[0] is sites[dn]; top[-(sites - sps)] is sps[dn] */
	const uintptr_t *top = METER__SITES(pg) + dn;

	/*
	 * The top frame is this one if it returns where this one does and
	 * its return address is still in place, at or above this hook's
	 * frame (the exit hook may be reached by a jump after the epilogue,
	 * its CFA then being the function's own).  An unwound frame below
	 * fails this: the hook's own call has overwritten that slot.
	 * Unregistered threads (depth UINT32_MAX) fail the first test.
	 */
	if (__builtin_expect(dn < METER_STACK_CAP && top[0] == site &&
			     (top_sp = top[-(METER__BLOCK_SITES -
					     METER__BLOCK_SPS) / 8]) >= hook_cfa &&
			     ((const uintptr_t *)top_sp)[-1] == site, 1)) {
		/*
		 * depth, then current: the frame below, stack[dn - 1]; for
		 * dn == 0 that is stack[-1], the header's last reserved
		 * word, always 0 ("none").
		 */
		METER__FENCE();
		pg->depth = (uint32_t)dn;
		METER__FENCE();
		pg->current_id = pg->stack[(intptr_t)dn - 1];
		return;
	}
	exit_slow((uintptr_t)fn, hook_cfa, site);
}
