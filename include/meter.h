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

/*
 * For runtimes whose functions have a source: meter_record_register_at()
 * also gives the record its file (copied; NULL for none) and the line its
 * definition starts on (0 for none), which the profile carries.
 * meter_resume() continues an activation that was left without ending (a
 * generator or coroutine resumed after a yield): it is pushed as
 * meter_enter() pushes it, but not counted as a call; meter_leave() ends
 * it again at the next yield.
 */
meter_record_t *meter_record_register_at(const char *name, const char *file,
					 uint32_t line);
void meter_resume(meter_record_t *rec);

/*
 * What a runtime's own work adds to each call it makes through
 * meter_enter() and meter_leave() (its dispatch to them, measured by the
 * runtime the way libmeter measures its own calls), in picoseconds.  The
 * records registered through this API then cost that plus libmeter's own
 * calibrated call, and the reports' correction takes both out.  Call it
 * before registering records.
 */
void meter_api_call_cost(uint64_t ps);

/*
 * The same, for a runtime that does libmeter's part of a call itself (the
 * count, the shadow stack: libmeter-patch.so's stubs): ps is the whole
 * call's cost, which libmeter adds nothing to.
 */
void meter_api_call_cost_whole(uint64_t ps);

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

/*
 * Flat instrumentation: Appel's scheme itself, for the hottest small
 * functions.  On entry the function counts its call and becomes current;
 * on return its caller is current again.  It pushes nothing on the shadow
 * stack: in a sampled stack a flat function appears only as the leaf, on
 * top of its nearest METER_FUNCTION() ancestors (see
 * Documentation/libmeter.md, "Flat functions").  Compiling with -DMETER_FLAT
 * makes every METER_FUNCTION() of the translation unit flat.
 */
#define METER_FUNCTION_FLAT() METER__FUNCTION_FLAT(__COUNTER__)

#ifdef METER_FLAT
#undef METER_FUNCTION
#define METER_FUNCTION() METER_FUNCTION_FLAT()
#endif

/* ---------------------------------------------------------------------- */
/* Internals used by the inline expansion.  Not API.                       */

#define METER__RECORD_MAGIC	0x4d524543U	/* "CERM" */
/* meter_record.flags: the function takes the flat form (its calls cost
 * what the flat sequence costs; the reports' correction needs to know) */
#define METER__REC_FLAT		1U
/*
 * Set by the GCC plugin once inlining is done, for each body of the
 * function the compiler keeps (its own, and each inlined copy): one that
 * became a leaf and takes the flat path, one that pushes.  A record with
 * leaf bodies only costs what a flat function's calls cost.
 */
#define METER__REC_LEAF_BODY	2U
#define METER__REC_PUSH_BODY	4U
#define METER__REC_FLAT_CALLS(flags)					\
	(((flags) & METER__REC_FLAT) ||					\
	 ((flags) & (METER__REC_LEAF_BODY | METER__REC_PUSH_BODY)) ==	\
	 METER__REC_LEAF_BODY)

struct meter_page;

/*
 * What a frame restores on return: the page's current and depth words as
 * they were before the call, written back in one 64-bit store.
 */
struct meter__frame {
	struct meter_page *page;	/* a scratch page when the call is
					   not profiled */
	uint64_t cd;			/* current and depth before the call */
};

struct meter__tls {
	/*
	 * The thread's block: its page, then the shadow stack's frame
	 * addresses and return addresses, then its call counts (offsets
	 * below).  Until the thread is registered, a whole block shared by
	 * all such threads whose depth is UINT32_MAX, so that the depth
	 * check sends a function's own entry to the slow path (one test
	 * fewer per call).  It is writable: the entries store current
	 * before that test, and the plugin's inlined copies that have no
	 * slow path nor their host's page count into it; nobody reads it.
	 */
	struct meter_page *page;
};

/*
 * The inline paths' layout is compiled into every profiled program, so the
 * symbol they reach it by names the layout's version: a program built
 * against another <meter.h> fails to load ("undefined symbol") instead of
 * misreading the thread block.  Bump it with any change to the structures
 * above or to what the inline code does with them (and lib/libmeter.map's
 * names with it).
 */
#define METER__ABI_VERSION "4"
#define METER__ABI_SYMBOL "meter__tls_abi" METER__ABI_VERSION
/* libmeter's block for threads not registered (meter__tls's first value):
 * what an executable, which defines meter__tls itself, needs of libmeter's
 * layout by name */
#define METER__NO_BLOCK_SYMBOL "meter__no_block_abi" METER__ABI_VERSION

/*
 * An executable (PIE or not: -fpie defines __PIE__, -fno-pic leaves
 * __PIC__ undefined) defines meter__tls itself, weak, and reads it at a
 * fixed offset from the thread pointer (local-exec: one load a call where
 * initial-exec's GOT makes two).  libmeter reaches its own definition
 * through its GOT, so the executable's takes its place everywhere; its
 * first value names libmeter's block, which also keeps a program built
 * against another layout from loading.  A shared object cannot know that
 * offset: it reads the pointer through its GOT.  The GCC plugin does the
 * same for the translation units it builds (plugin/meter_plugin.cc).
 */
#if (defined(__PIE__) || !defined(__PIC__)) && !defined(METER__LAYOUT_ONLY)
extern struct meter_page meter__no_block __asm__(METER__NO_BLOCK_SYMBOL);
__thread struct meter__tls meter__tls __asm__(METER__ABI_SYMBOL)
	__attribute__((weak, visibility("default"), tls_model("local-exec"))) =
	{ &meter__no_block };
#else
extern __thread struct meter__tls meter__tls __asm__(METER__ABI_SYMBOL)
	__attribute__((tls_model("initial-exec")));
#endif

struct meter__frame meter__enter_slow(struct meter_record *rec,
				      uintptr_t sp, uintptr_t site)
	__attribute__((cold));
/*
 * Set in the frame address the slow path is given (bit 0, which a
 * canonical frame address never has) by an entry that is a function's
 * own, never an inlined copy (the GCC plugin's): a frame at its own
 * address on top can then only be one left by longjmp.  An entry that may
 * be an inlined copy (the macro's) cannot tell that frame from its host's
 * when both were called from one call site.
 */
#define METER__SP_OWN 1
struct meter__frame meter__enter_flat_slow(struct meter_record *rec)
	__attribute__((cold));
void meter__module_records(struct meter_record *start,
			   struct meter_record *stop);
/* Ends the profile as exit does (libmeter-patch.so, meter-run --pid). */
void meter__finish(void);
/*
 * fn is called as a thread ends, before its block (its page) is freed:
 * libmeter-patch.so keeps the return addresses of the frames still live.
 */
void meter__on_thread_end(void (*fn)(struct meter_page *pg));

/*
 * x86-64: the slow paths are reached through thunks that preserve every
 * register but r10 and r11 (and the flags), so that the inline fast path
 * does not make the compiler save registers for a call it never makes.
 * In: r11 the record, rax the frame address (stacked entry only), r10
 * the return address (the thunk is jumped to: the caller's red zone and
 * stack stay untouched, and unwinding from inside it is exact).  Out:
 * r11 the frame's page, r10 its saved word.
 */
#if defined(__x86_64__) && !defined(METER_NO_THUNKS)
#define METER__THUNKS 1
#define METER__THUNK_CALL(thunk, rec, extra_in...)			\
	({								\
		register uintptr_t meter__r11 __asm__("r11") =		\
			(uintptr_t)(rec);				\
		register uint64_t meter__r10 __asm__("r10");		\
		struct meter__frame meter__f;				\
		__asm__ volatile("lea 1f(%%rip), %%r10\n\t"		\
				 "jmp *" thunk "@GOTPCREL(%%rip)\n"	\
				 "1:"					\
				 : "+r"(meter__r11), "=r"(meter__r10)	\
				 : extra_in				\
				 : "memory", "cc");			\
		meter__f.page = (struct meter_page *)meter__r11;	\
		meter__f.cd = meter__r10;				\
		meter__f;						\
	})
#endif

/* Same layout as struct meter_page in <linux/meter.h>, header first. */
struct meter__page_hdr {
	uint32_t magic, version, current_id, depth;
	uint32_t reserved[12];
	uint32_t stack[];
};
#define METER__STACK_CAP	(4096 / 4 - 16)
#define METER__FUNCS_MAX	(1U << 20)

/*
 * The thread's block, from the page (one thread-local pointer reaches it
 * all).  sps[d] and sites[d] are frame d's canonical frame address and
 * return address; sps[-1] is a sentinel (UINTPTR_MAX).  counts[id] is the
 * thread's call count of id.
 */
#define METER__BLOCK_SPS	4096			/* sps[-1] */
#define METER__BLOCK_SITES	(METER__BLOCK_SPS + 8 * (METER__STACK_CAP + 1))
#define METER__BLOCK_COUNTS	20480
#define METER__BLOCK_BYTES	(METER__BLOCK_COUNTS + \
				 8 * ((uint64_t)METER__FUNCS_MAX + 1))
#define METER__SPS(pg)		((uintptr_t *)((char *)(pg) + \
						METER__BLOCK_SPS) + 1)
/* sps[d - 1], indexed without a subtraction */
#define METER__SP_BELOW(pg, d)	(((uintptr_t *)((char *)(pg) + \
						METER__BLOCK_SPS))[d])
/*
 * The word at pg + d * 8 + off, as the entry addresses sps[] and sites[]
 * (off METER__BLOCK_SPS: sps[d - 1]; + 8: sps[d]): a scaled index and a
 * constant, which fold into the instruction's address.  A function, not
 * one expression: folded whole, it would become pg + (d + off / 8) * 8,
 * whose sum GCC computes apart.
 */
static inline __attribute__((always_inline, no_instrument_function))
uintptr_t *meter__slots(void *pg, uintptr_t d)
{
	return (uintptr_t *)((char *)pg + d * 8);
}
#define METER__SLOT(pg, d, off)	(meter__slots(pg, d)[(off) / 8])
#define METER__SITES(pg)	((uintptr_t *)((char *)(pg) + \
						METER__BLOCK_SITES) + 1)
#define METER__COUNTS(pg)	((uint64_t *)((char *)(pg) + \
					      METER__BLOCK_COUNTS))

/* current (low address) and depth as one 64-bit word */
typedef uint64_t __attribute__((may_alias, aligned(8))) meter__cd_t;
/*
 * The page's words are read through types that alias everything: a body
 * built by the plugin (which stores them in an alias set of its own) may
 * be inlined into one built by the macro, or the other way round, and
 * each must read what the other stored.
 */
typedef uint32_t __attribute__((may_alias)) meter__w32_t;
typedef uintptr_t __attribute__((may_alias)) meter__wptr_t;
#define METER__READ32(lvalue)	(*(const meter__w32_t *)&(lvalue))
#define METER__READPTR(lvalue)	(*(const meter__wptr_t *)&(lvalue))
#define METER__CD_WORD(pg)	(*(meter__cd_t *)(void *)	\
				 &((struct meter__page_hdr *)(pg))->current_id)
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define METER__CD(cur, depth)	(((uint64_t)(cur) << 32) | (uint32_t)(depth))
#define METER__CD_DEPTH(cd)	((uint32_t)(cd))
#else
#define METER__CD(cur, depth)	(((uint64_t)(depth) << 32) | (uint32_t)(cur))
#define METER__CD_DEPTH(cd)	((uint32_t)((cd) >> 32))
#endif

#define METER__FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
/*
 * The page's words the sampler reads are stored volatile: the compiler
 * keeps volatile accesses in their order and drops none, which is all the
 * order the page needs.  A fence would also pin the program's own loads
 * and stores on either side of every entry and return (a loop's
 * invariant loads could no longer leave it).
 */
#define METER__VSTORE(type, lvalue, v) (*(volatile type *)&(lvalue) = (v))
/* The same for a word at an indexed address, whose volatile store GCC
 * makes two instructions (the address apart, in an lea); the plugin's
 * too. */
#if defined(__x86_64__)
#define METER__STORE32_ASM	"movl %1, %0"
#define METER__STOREPTR_ASM	"movq %1, %0"
#define METER__VSTORE32(lvalue, v) \
	__asm__ volatile(METER__STORE32_ASM : "=m"(lvalue) : "r"((uint32_t)(v)))
#define METER__VSTOREPTR(lvalue, v) \
	__asm__ volatile(METER__STOREPTR_ASM : "=m"(lvalue) : "r"((uintptr_t)(v)))
#else
#define METER__VSTORE32(lvalue, v) METER__VSTORE(uint32_t, lvalue, v)
#define METER__VSTOREPTR(lvalue, v) METER__VSTORE(uintptr_t, lvalue, v)
#endif

/*
 * The push's last store, depth + 1, as one instruction that adds to the
 * word in place: GCC would compute d + 1 from the depth it loaded and
 * store it (two).  Nothing but the thread writes its depth, and an
 * interrupt comes between instructions, so the sampler sees the old depth
 * or the new one, as with a store.  The plugin's sequence does the same.
 */
#if defined(__x86_64__)
#define METER__DEPTH_UP_ASM	"addl $1, %0"	/* the plugin's too */
#define METER__DEPTH_UP(lvalue) \
	__asm__ volatile(METER__DEPTH_UP_ASM				\
			 : "+m"(*(meter__w32_t *)&(lvalue)))
#else
#define METER__DEPTH_UP(lvalue) \
	METER__VSTORE(uint32_t, lvalue, METER__READ32(lvalue) + 1)
#endif

/*
 * The longer test, with sp at sps[d - 1]: this function is inlined into
 * the one on top (the same frame and return address, another function:
 * pushed here, as -O2 makes this the common case), or the top frame is
 * stale (longjmp, exception): the slow path pops it.  The id and the
 * return address are loaded again for it: held in registers across it,
 * they would cost the fast path a saved register (the id's load volatile,
 * or GCC reuses the first one's register).  The depth goes through an
 * empty asm, as on the fast path (meter__enter()).
 */
static inline __attribute__((always_inline, no_instrument_function)) int
meter__top_is_other(struct meter_page *pg, uintptr_t d, uintptr_t sp,
		    struct meter_record *rec)
{
	struct meter__page_hdr *h = (struct meter__page_hdr *)pg;

	__asm__("" : "+r"(d));
	return __builtin_expect(sp != METER__READPTR(METER__SLOT(pg, d,
					       METER__BLOCK_SPS)), 0) ||
	       __builtin_expect(METER__READPTR(METER__SLOT(pg, d,
					       METER__BLOCK_SITES)) !=
				(uintptr_t)__builtin_return_address(0), 0) ||
	       __builtin_expect(METER__READ32(h->stack[d - 1]) ==
				*(volatile uint32_t *)&rec->id, 0);
}

/*
 * Entry.  The callee becomes current once the tests that may send it to
 * the slow path have passed (the page is the thread's own, registered and
 * not deep, and no stale frame is on top), and before the push: the slow
 * path sets current and depth itself, after taking stale frames off, so
 * no sample sees the callee over a frame about to go.  The window in
 * which the callee runs but its caller is sampled is the loads and tests
 * before (Documentation/libmeter.md, "Correction", says where a call's
 * cost is seen and how the reports take it out).  Until the depth store
 * the sampler sees the callee current over its caller's stack: the flat
 * functions' rule.  The record's id was set by its module's constructor.
 */
static inline __attribute__((always_inline, no_instrument_function))
struct meter__frame meter__enter(struct meter_record *rec)
{
	/*
	 * No named local holds what the frame keeps for the return (GCC's
	 * -Wclobbered would blame it in functions that call setjmp; the
	 * frame is set before any setjmp and never changed).
	 */
	struct meter__frame f = { meter__tls.page, 0 };
	struct meter__page_hdr *h = (struct meter__page_hdr *)f.page;
	uintptr_t d = METER__READ32(h->depth), id = rec->id;
	/* the calling function's frame: inlined into its caller, the caller's */
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();

	__asm__("" : "+r"(sp));	/* computed once, not rematerialised */
	__asm__("" : "+r"(id));	/* one register, on both paths */

	f.cd = METER__CD_WORD(f.page);
	/* not registered (depth UINT32_MAX: the shared page) or deep */
	if (__builtin_expect(d >= METER__STACK_CAP, 0))
		goto slow;
	/* a frame at or below ours on top (meter__top_is_other()) */
	if (__builtin_expect(sp >= METER__READPTR(METER__SLOT(f.page, d,
					METER__BLOCK_SPS)), 0) &&
	    meter__top_is_other(f.page, d, sp, rec))
		goto slow;
	/*
	 * The depth again, through an empty asm whose copy takes the test's
	 * register: GCC would otherwise compute &sps[d - 1] once, into a
	 * register (an lea), for the test and the stores; each address now
	 * folds into its instruction.
	 */
	__asm__("" : "+r"(d));
	METER__VSTORE(uint32_t, h->current_id, (uint32_t)id);
	METER__COUNTS(f.page)[id]++;
	METER__VSTOREPTR(METER__SLOT(f.page, d, METER__BLOCK_SPS + 8), sp);
	METER__VSTORE32(h->stack[d], id);
	/* last, through its own copy of the depth, for the same reason */
	__asm__("" : "+r"(d));
	METER__VSTOREPTR(METER__SLOT(f.page, d, METER__BLOCK_SITES + 8),
			 (uintptr_t)__builtin_return_address(0));
	METER__DEPTH_UP(h->depth);
	return f;
slow:
#ifdef METER__THUNKS
	return METER__THUNK_CALL("meter__enter_thunk", rec, "a"(sp));
#else
	return meter__enter_slow(rec, sp,
				 (uintptr_t)__builtin_return_address(0));
#endif
}

/* Flat entry: become current (first, as above), count the call; nothing
 * pushed. */
static inline __attribute__((always_inline, no_instrument_function))
struct meter__frame meter__enter_flat(struct meter_record *rec)
{
	struct meter__frame f = { meter__tls.page, 0 };
	struct meter__page_hdr *h = (struct meter__page_hdr *)f.page;
	uintptr_t id = rec->id;

	f.cd = METER__READ32(h->current_id);
	METER__VSTORE(uint32_t, h->current_id, (uint32_t)id);
	if (__builtin_expect(METER__READ32(h->depth) == UINT32_MAX, 0))
#ifdef METER__THUNKS
		return METER__THUNK_CALL("meter__enter_flat_thunk", rec, );
#else
		return meter__enter_flat_slow(rec);
#endif
	METER__COUNTS(f.page)[id]++;
	return f;
}

/* Return: the caller's current and depth, in one store. */
static inline __attribute__((always_inline, no_instrument_function)) void
meter__leave(struct meter__frame *f)
{
	METER__VSTORE(meter__cd_t, METER__CD_WORD(f->page), f->cd);
}

static inline __attribute__((always_inline, no_instrument_function)) void
meter__leave_flat(struct meter__frame *f)
{
	METER__VSTORE(uint32_t,
		      ((struct meter__page_hdr *)f->page)->current_id,
		      (uint32_t)f->cd);
}

#define METER__CAT2(a, b) a##b
#define METER__CAT(a, b) METER__CAT2(a, b)

#define METER__SECTION_ATTR \
	__attribute__((section("meter_records"), used, aligned(32)))

#define METER__RECORD(n, flags)						\
	static struct meter_record METER__CAT(meter__rec_, n)		\
		METER__SECTION_ATTR = {					\
		0, METER__RECORD_MAGIC, __func__, __FILE__, __LINE__, flags \
	}

#define METER__FUNCTION(n)						\
	METER__RECORD(n, 0);						\
	struct meter__frame METER__CAT(meter__frame_, n)		\
		__attribute__((cleanup(meter__leave), unused)) =	\
		meter__enter(&METER__CAT(meter__rec_, n))

#define METER__FUNCTION_FLAT(n)						\
	METER__RECORD(n, METER__REC_FLAT);				\
	struct meter__frame METER__CAT(meter__frame_, n)		\
		__attribute__((cleanup(meter__leave_flat), unused)) =	\
		meter__enter_flat(&METER__CAT(meter__rec_, n))

#ifndef METER__LAYOUT_ONLY	/* the GCC plugin reads the layout only */
/*
 * One constructor per translation unit that includes this header hands
 * its module's section bounds to the library (duplicates are ignored),
 * which numbers the records: the inline paths never test for an id of 0.
 * It runs before the module's constructors of default priority.
 * The bounds are hidden weak symbols, so each executable or shared object
 * names its own section.
 */
extern struct meter_record __start_meter_records[]
	__attribute__((weak, visibility("hidden")));
extern struct meter_record __stop_meter_records[]
	__attribute__((weak, visibility("hidden")));

static void __attribute__((constructor(101), used, no_instrument_function))
meter__register_module(void)
{
	/* the arrays themselves: no offset from a weak symbol that may be
	 * NULL (UBSan would say so in a module without records) */
	struct meter_record *start = __start_meter_records;
	struct meter_record *stop = __stop_meter_records;

	if (start != stop)
		meter__module_records(start, stop);
}
#endif /* METER__LAYOUT_ONLY */

#ifdef __cplusplus
}
#endif

#endif /* METER_H */
