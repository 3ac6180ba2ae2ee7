/* SPDX-License-Identifier: MIT */
/*
 * libmeter: Appel-style profiling of C programs.
 *
 * Every profiled function has a call count and a sample count.  On entry a
 * function counts its call and stores "I am current" into a word of a page
 * the thread shares with the sampler (meter.ko, or a SIGPROF timer); when it
 * returns, its caller is current again.  A shadow stack in the same page
 * gives exact caller attribution.
 *
 * Three ways to instrument a program (they can be mixed):
 *
 *   manual      METER_FUNCTION(); as the first statement of a function.
 *               The cheapest: a few loads and stores, no call.
 *
 *   automatic   compile with -finstrument-functions and link -lmeter:
 *               every function is profiled; names come from the ELF
 *               symbol tables of the executable and its shared libraries.
 *
 *   explicit    for interpreters and language runtimes:
 *                   meter_record_t *r = meter_record_register("lambda@12");
 *                   meter_enter(r); ...run the closure... meter_leave(r);
 *
 * The environment chooses the backend: METER_BACKEND=kernel|signal|off|auto,
 * METER_PERIOD_NS, METER_OUTPUT, METER_QUIET, and METER_ALLOC=1 counts
 * allocations per function (see Documentation/libmeter.md).
 *
 * Everything whose name starts with meter__ is internal: it is visible only
 * because METER_FUNCTION() expands inline.
 */
#ifndef METER_H
#define METER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A function record: one per profiled function. */
struct meter_record {
	uint32_t id;		/* dense from 1; 0 until registered */
	uint32_t magic;		/* METER__RECORD_MAGIC */
	const char *name;
	const char *file;
	uint32_t line;
	uint32_t flags;
} __attribute__((aligned(32)));

typedef struct meter_record meter_record_t;

/*
 * Explicit API.  meter_record_register() makes a record named name (the
 * name is copied) and returns it, or NULL when no id is left; the same
 * name registered twice gives two records.  meter_enter() and
 * meter_leave() bracket one activation of it on the calling thread; they
 * must pair up (a runtime that unwinds non-locally calls meter_leave() for
 * each frame it drops).  meter_leave() of a record that is not on top of
 * the shadow stack pops down to its nearest activation, or does nothing if
 * there is none.  All three are thread-safe; enter and leave do not lock
 * or allocate once the thread is registered.
 */
meter_record_t *meter_record_register(const char *name);
void meter_enter(meter_record_t *rec);
void meter_leave(meter_record_t *rec);

/* The backend in use: "kernel", "signal" or "off" (decided at first use). */
const char *meter_backend(void);

/*
 * Manual instrumentation: the first statement of a function.
 *
 *	int parse(const char *s)
 *	{
 *		METER_FUNCTION();
 *		...
 *	}
 *
 * The function's record lives in the linker section "meter_records" of the
 * executable or shared library; each module registers its section from a
 * constructor.  The caller becomes current again when the function returns,
 * however it returns (return, C++ exception with -fexceptions; after a
 * longjmp the next instrumented call or return puts the shadow stack right).
 */
#define METER_FUNCTION() METER__FUNCTION(__COUNTER__)

/* ---------------------------------------------------------------------- */
/* Internals used by the inline expansion.  Not API.                       */

#define METER__RECORD_MAGIC	0x4d524543U	/* "CERM" */

struct meter_page;

struct meter__frame {
	struct meter_page *page;	/* restored on return (a scratch page
					   when the call is not profiled) */
	uintptr_t depth;		/* depth before the call */
	uint32_t prev;			/* current before the call */
};

/*
 * Shadow-stack side entry: where each frame is (its canonical frame
 * address, the stack pointer before the call) and where it returns to.
 */
struct meter__side {
	uintptr_t sp;
	uintptr_t site;
};

struct meter__tls {
	/*
	 * The thread's page; until it is registered, a read-only page whose
	 * depth is UINT32_MAX, so that the depth check sends the first call
	 * to the slow path (one test fewer per call).
	 */
	struct meter_page *page;
	uint64_t *counts;		/* call counts indexed by id */
	struct meter__side *side;	/* side[-1] is a sentinel */
};

extern __thread struct meter__tls meter__tls
	__attribute__((tls_model("initial-exec")));

void meter__enter_slow(struct meter_record *rec, struct meter__frame *f,
		       uintptr_t sp, uintptr_t site) __attribute__((cold));
void meter__module_records(struct meter_record *start,
			   struct meter_record *stop);

/* Same layout as struct meter_page in <linux/meter.h>, header first. */
struct meter__page_hdr {
	uint32_t magic, version, current, depth;
	uint32_t reserved[12];
	uint32_t stack[];
};
#define METER__STACK_CAP	(4096 / 4 - 16)

#define METER__FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static inline __attribute__((always_inline, no_instrument_function)) void
meter__enter(struct meter_record *rec, struct meter__frame *f)
{
	struct meter__page_hdr *pg = (struct meter__page_hdr *)meter__tls.page;
	uintptr_t id = rec->id, d;
	/* the calling function's frame: inlined into its caller, the caller's */
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
	uintptr_t site = (uintptr_t)__builtin_return_address(0);

	d = pg->depth;
	/*
	 * Not registered, not yet numbered, deep, or the top frame may be
	 * stale (longjmp, exception), or this function is inlined into the
	 * caller on top (same frame address): the slow path sorts it out.
	 */
	if (__builtin_expect(d >= METER__STACK_CAP || !id ||
			     sp >= meter__tls.side[(intptr_t)d - 1].sp, 0))
		goto slow;
	meter__tls.counts[id]++;
	meter__tls.side[d].sp = sp;
	meter__tls.side[d].site = site;
	f->page = (struct meter_page *)pg;
	f->depth = d;
	f->prev = pg->current;
	pg->stack[d] = (uint32_t)id;
	METER__FENCE();
	pg->depth = (uint32_t)d + 1;
	METER__FENCE();
	pg->current = (uint32_t)id;
	return;
slow:
	meter__enter_slow(rec, f, sp, site);
}

static inline __attribute__((always_inline, no_instrument_function)) void
meter__leave(struct meter__frame *f)
{
	struct meter__page_hdr *pg = (struct meter__page_hdr *)f->page;

	pg->depth = (uint32_t)f->depth;
	METER__FENCE();
	pg->current = f->prev;
}

#define METER__CAT2(a, b) a##b
#define METER__CAT(a, b) METER__CAT2(a, b)

#define METER__SECTION_ATTR \
	__attribute__((section("meter_records"), used, aligned(32)))

#define METER__FUNCTION(n)						\
	static struct meter_record METER__CAT(meter__rec_, n)		\
		METER__SECTION_ATTR = {					\
		0, METER__RECORD_MAGIC, __func__, __FILE__, __LINE__, 0	\
	};								\
	struct meter__frame METER__CAT(meter__frame_, n)		\
		__attribute__((cleanup(meter__leave)));			\
	meter__enter(&METER__CAT(meter__rec_, n),			\
		     &METER__CAT(meter__frame_, n))

/*
 * One constructor per translation unit that includes this header hands
 * its module's section bounds to the library (duplicates are ignored).
 * The bounds are hidden weak symbols, so each executable or shared object
 * names its own section.
 */
extern struct meter_record __start_meter_records[]
	__attribute__((weak, visibility("hidden")));
extern struct meter_record __stop_meter_records[]
	__attribute__((weak, visibility("hidden")));

static void __attribute__((constructor, used, no_instrument_function))
meter__register_module(void)
{
	struct meter_record *start = &__start_meter_records[0];
	struct meter_record *stop = &__stop_meter_records[0];

	if (start != stop)
		meter__module_records(start, stop);
}

#ifdef __cplusplus
}
#endif

#endif /* METER_H */
