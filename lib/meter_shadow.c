// SPDX-License-Identifier: MIT
/*
 * The shadow stack: pushing a frame (after popping the frames a call shows
 * to be stale) and popping to a depth, and the quick half of the slow path
 * of enter, which does everything the slow path does but register a
 * thread or number a record met before its module's constructor.
 *
 * This file is built with -mgeneral-regs-only (lib/lib.mk): the x86-64
 * thunks (meter_thunk.c) call the quick half having saved the general
 * registers only, and save the vector state (XSAVE) only for the full slow
 * path, which runs once per thread.  So nothing here may call out of this
 * file but to inline helpers: a libc call could use any vector register.
 */
#include "meter_internal.h"

/*
 * The page of calls that are not profiled: their returns, and the inlined
 * copies in them, write into it; never read.
 */
union meter_whole_block meter_scratch_block __attribute__((aligned(4096)));

/*
 * True when side entry e cannot be a live frame under a call of id whose
 * frame is at sp (canonical frame address) returning to site.  Live
 * callers have frames above sp.  A frame below sp was unwound.  A frame
 * at sp is either a sibling that was unwound (called from the same caller:
 * a different return site, or the same site and function) or a live
 * caller into which this function was inlined (same site, other id; the
 * inline entries of <meter.h> and the plugin push that case themselves).
 * A function's own entry (own) is never inlined: there a frame at sp is
 * a sibling, also one called from the same site through a pointer.
 */
static inline bool stale_for_enter(uintptr_t e_sp, uintptr_t e_site,
				   uint32_t e_id, uintptr_t sp,
				   uintptr_t site, uint32_t id, bool own)
{
	if (e_sp != sp)
		return e_sp < sp;
	return own || e_site != site || e_id == id;
}

/* Sets depth to d and makes the frame below current. */
void meter_pop_to(uint32_t d)
{
	meter_set_cd(meter__tls.page, d ? meter_frame_id(d - 1) : 0, d);
}

/*
 * Takes off the frames a jump to stack pointer sp leaves behind (longjmp:
 * their frame addresses are at or below sp), before the jump, so that no
 * sample and no call after it sees them.  A frame of the explicit API
 * (METER_SP_API) stays, and those below it: its runtime leaves it.  Past
 * the capacity frames keep no address: all of them go when the last frame
 * that has one is left, as the slow path of enter has it, but for
 * libmeter-patch.so, which keeps their return addresses in step with the
 * depth: then the next call or return does it.  The depth moves first, in
 * one store; then the slots freed hold UINTPTR_MAX, as libmeter-patch.so
 * keeps them.  Freed first, a handler's jump that interrupted this one
 * would stop at them (UINTPTR_MAX is also the API's mark) and leave them
 * for good.
 */
void meter_pop_jumped(uintptr_t sp)
{
	struct meter_page *pg;
	uintptr_t *sps;
	uint32_t d, i, was;

	if (!meter_have_page())
		return;
	pg = meter__tls.page;
	sps = meter_sps();
	d = was = pg->depth;
	if (d > METER_STACK_CAP) {
		if (meter_patching() || sps[METER_STACK_CAP - 1] > sp)
			return;
		d = METER_STACK_CAP;
	}
	while (d > 0 && sps[d - 1] <= sp)
		d--;
	if (d == was)
		return;
	meter_pop_to(d);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (i = d; i < was && i < METER_STACK_CAP; i++)
		sps[i] = UINTPTR_MAX;
}

/*
 * Shows the kernel the frames nearest the leaf past the page's capacity
 * (<linux/meter.h>, deep[]): the window ending at frame top - 1.  The
 * sampler interrupts this thread, so it sees the window whole or, with
 * deep_top 0, none of it.
 */
static void show_deep_window(struct meter_page *pg, uint32_t top)
{
	uint32_t i;

	pg->deep_top = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (top - METER_STACK_CAP > METER_DEEP_MAX)
		return;
	/* top > METER_STACK_CAP > METER_DEEP_WINDOW */
	for (i = 0; i < METER_DEEP_WINDOW; i++)
		pg->deep[i] = meter_frame_id(top - METER_DEEP_WINDOW + i);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pg->deep_top = top;
}

/* Stores id as frame d (depth d + 1) and makes it current. */
static void put_frame(struct meter_page *pg, uint32_t d, uint32_t id,
		      uintptr_t sp, uintptr_t site)
{
	if (d < METER_STACK_CAP) {
		meter_sps()[d] = sp;
		meter_sites()[d] = site;
		pg->stack[d] = id;
	} else {
		if (d - METER_STACK_CAP < METER_DEEP_MAX)
			meter_deep()[d - METER_STACK_CAP] = id;
		show_deep_window(pg, d + 1);
	}
	meter_set_cd(pg, id, d + 1);
}

/* Pushes a frame of the explicit API (meter_enter). */
void meter_push_api(uint32_t id)
{
	struct meter_page *pg = meter__tls.page;

	put_frame(pg, pg->depth, id, METER_SP_API, 0);
}

/*
 * Pushes id for a frame at sp, first popping frames the call shows to be
 * stale.  Fills f (if given) for the manual leave: the caller's current
 * is the frame below, as the inline entry has made id current already.
 */
void meter_push(uint32_t id, uintptr_t sp, uintptr_t site,
		struct meter__frame *f)
{
	struct meter_page *pg = meter__tls.page;
	uintptr_t *sps = meter_sps(), *sites = meter_sites();
	uint32_t d = pg->depth, d0 = d;
	bool own = sp & METER__SP_OWN;

	sp &= ~(uintptr_t)METER__SP_OWN;
	if (d > METER_STACK_CAP) {
		/* frames past the capacity have no side entry */
		if (stale_for_enter(sps[METER_STACK_CAP - 1],
				    sites[METER_STACK_CAP - 1],
				    pg->stack[METER_STACK_CAP - 1], sp, site,
				    id, own))
			d = METER_STACK_CAP;
	}
	if (d <= METER_STACK_CAP)
		while (d > 0 && stale_for_enter(sps[d - 1], sites[d - 1],
						pg->stack[d - 1], sp, site,
						id, own))
			d--;
	if (d != d0)
		meter_pop_to(d);
	if (f) {
		f->page = pg;
		f->cd = METER__CD(d ? meter_frame_id(d - 1) : 0, d);
	}
	put_frame(pg, d, id, sp, site);
}

/* A call that is not profiled, and will not be without registering. */
static inline bool unprofiled(void)
{
	return meter_tstate == METER_T_DEAD || meter_busy ||
	       !__atomic_load_n(&meter_g.loaded, __ATOMIC_ACQUIRE);
}

/*
 * The slow path of a stacked entry, where it needs nothing of the rest of
 * libmeter: a registered thread's call past the stack's capacity or over
 * a stale frame (counted as a slow-path entry), or a call that is not
 * profiled.  A frame whose page is NULL asks for the full slow path
 * (meter__enter_slow).
 */
struct meter__frame meter_enter_quick(struct meter_record *rec, uintptr_t sp,
				      uintptr_t site)
{
	struct meter__frame f = { NULL, 0 };
	uint32_t id;

	if (!meter_have_page()) {
		if (unprofiled())
			f.page = METER_SCRATCH_PAGE;
		return f;
	}
	id = __atomic_load_n(&rec->id, __ATOMIC_ACQUIRE);
	if (!id)
		return f;
	meter_count_slow();
	meter_counts()[id]++;
	meter_push(id, sp, site, &f);
	return f;
}

/* The same for a flat entry, which is slow only before registration. */
struct meter__frame meter_enter_flat_quick(struct meter_record *rec)
{
	struct meter__frame f = { NULL, 0 };

	(void)rec;
	if (!meter_have_page() && unprofiled())
		f.page = METER_SCRATCH_PAGE;
	return f;
}

/*
 * The page for the GCC plugin's counted copies in a function that has no
 * entry of its own: slow only before registration (meter_page_slow).
 */
struct meter__frame meter_page_quick(void)
{
	struct meter__frame f = { NULL, 0 };

	if (meter_have_page())
		f.page = meter__tls.page;
	else if (unprofiled())
		f.page = METER_SCRATCH_PAGE;
	return f;
}

/* The explicit API (<meter.h>): a runtime's frames on the shadow stack. */
void meter_enter(meter_record_t *rec)
{
	if (!rec || !rec->id || !meter_thread_ready())
		return;
	meter_counts()[rec->id]++;
	meter_push_api(rec->id);
}

void meter_resume(meter_record_t *rec)
{
	if (!rec || !rec->id || !meter_thread_ready())
		return;
	meter_push_api(rec->id);
}

void meter_leave(meter_record_t *rec)
{
	struct meter_page *pg = meter__tls.page;
	uintptr_t *sps;
	uint32_t d, i;

	if (!rec || !meter_have_page())
		return;
	sps = meter_sps();
	d = pg->depth;
	if (d == 0)
		return;
	if (d > METER_STACK_CAP) {
		meter_pop_to(d - 1);
		return;
	}
	/* the nearest activation among the explicit frames on top */
	for (i = d; i > 0 && sps[i - 1] == METER_SP_API; i--) {
		if (pg->stack[i - 1] == rec->id) {
			meter_pop_to(i - 1);
			return;
		}
	}
}
