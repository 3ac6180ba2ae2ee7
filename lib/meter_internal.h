/* SPDX-License-Identifier: MIT */
/*
 * libmeter internals shared by its source files: the process-wide state,
 * the per-thread state, the record registry and the backends' hooks.
 * Not installed.
 *
 * meter_core.c is the hub the others call back into, on purpose: it owns
 * the process-wide state (meter_g), the thread's state (meter_tstate,
 * meter__tls) and the clock, which the registry, the shadow stack, the
 * signal backend and the output all read; and it drives each of them
 * through the process's life (set-up, threads, fork, exit).  What the
 * others call in it is that state, its helpers (the clock, notices, the
 * names sent to the kernel) and meter_thread_ready(), which sets a
 * thread up at its first profiled call wherever that call lands.
 */
#ifndef METER_INTERNAL_H
#define METER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <linux/meter.h>

#include "meter.h"

#define METER_HIDDEN __attribute__((visibility("hidden")))
#define METER_NOINSTR __attribute__((no_instrument_function))

/* The id reserved for the calibration stub; never handed out. */
#define METER_CALIB_ID METER_FUNCS_MAX
/* Frames pushed by the explicit API carry this stack pointer. */
#define METER_SP_API UINTPTR_MAX

enum meter_backend_kind {
	METER_BK_OFF,
	METER_BK_SIGNAL,
	METER_BK_KERNEL,
};

enum meter_rec_kind {
	METER_REC_MANUAL = 1,	/* static record in a meter_records section */
	METER_REC_AUTO,		/* -finstrument-functions, by address */
	METER_REC_API,		/* meter_record_register() */
};

/* What the registry knows of an id. */
struct meter_rec_info {
	char *name;		/* NULL for an automatic record not yet named */
	char *file;		/* API records: the source, or NULL */
	uint32_t line;		/* API records: the first line, or 0 */
	uintptr_t addr;		/* automatic records: function address */
	uint32_t kind;
	bool flat;		/* METER__REC_FLAT_CALLS: the flat sequence */
};

/* One profiled thread. */
struct meter_thr {
	struct meter_thr *next;
	pid_t tid;
	bool exited;
	bool listed;		/* on meter_g.threads */
	bool timer_armed;
	timer_t timer;
	uint64_t samples;	/* signal backend: ticks of this thread */
	uint64_t cpu_start_ns;	/* its CPU time when its timer started */
	char name[16];		/* as it ended (comm); "": still running */
	struct meter_page *page;
	uint64_t *counts;	/* in the block: METER__COUNTS(page) */
	uint64_t *alloc_calls;	/* allocation accounting, or NULL */
	uint64_t *alloc_bytes;
	uintptr_t stack_hi;	/* top of the thread's stack, 0: unknown */
	uint64_t slow_entries;	/* profiled calls that took the slow path;
				   written by the thread only */
};

struct meter_global {
	pthread_mutex_t lock;	/* registry growth, thread list, netlink */
	bool inited;		/* process_init done */
	bool loaded;		/* libmeter's constructor ran (and so its
				   dependencies': libnl) */
	bool chose_auto;	/* METER_BACKEND=auto picked the backend */
	bool quiet;
	bool alloc;		/* METER_ALLOC=1 */
	enum meter_backend_kind backend;
	uint64_t period_ns;
	bool period_set;	/* METER_PERIOD_NS given */
	uint32_t clock;		/* enum meter_clock: METER_CLOCK */
	char output[4096];
	pid_t pid;

	/* registry: ids 1 .. next_id - 1 */
	_Atomic uint32_t next_id;
	struct meter_rec_info *recs;	/* indexed by id */

	/* session */
	bool registered;	/* a session exists for this process */
	uint64_t cookie, parent_cookie;
	uint64_t start_ns;
	uint64_t call_cost_ps;
	uint64_t flat_cost_ps;	/* the same for a flat function */
	uint64_t api_extra_ps;	/* meter_api_call_cost(): a runtime's own */
	bool api_whole;		/* ... and the whole call's (libmeter adds none) */
	bool finished;		/* process exit handled */

	/* kernel backend */
	struct meter_nl *nl;
	uint32_t names_sent;	/* ids 1..names_sent have been named */

	/* threads */
	struct meter_thr *threads;
	uint64_t *calls_done;	/* counts of exited threads, by id */
	uint64_t *alloc_calls_done, *alloc_bytes_done;

	/* signal backend */
	_Atomic bool sampling;
	_Atomic uint64_t *self_samples;	/* the signal backend's, by id */
	_Atomic uint64_t samples, no_current, invalid, lost, truncated;
	_Atomic uint64_t addrs_lost;	/* samples with no address slot */
	_Atomic uint64_t ticks;	/* signals taken; samples weigh overruns */
	_Atomic uint64_t unsampled_ns;	/* of ended threads: no tick's */
};

extern struct meter_global meter_g METER_HIDDEN;

/*
 * A thread's whole block, page first (include/meter.h, METER__BLOCK_BYTES),
 * for the two that nobody reads: what meter__tls.page points to while the
 * thread is not registered, and the page a call that is not profiled
 * gets.  Whole, since the inline code counts and pushes into whatever
 * block its page begins (the plugin's inlined copies into their host's
 * page); zeroes in .bss, whose untouched pages cost nothing.
 */
union meter_whole_block {
	struct meter_page page;
	unsigned char block[METER__BLOCK_BYTES];
};
/* exported: an executable's own meter__tls starts here (<meter.h>) */
extern union meter_whole_block meter_no_block
	__asm__(METER__NO_BLOCK_SYMBOL);
#define METER_NO_PAGE (&meter_no_block.page)

static inline bool meter_have_page(void)
{
	return meter__tls.page != METER_NO_PAGE;
}

/* The registered thread's block (see include/meter.h). */
static inline uint64_t *meter_counts(void)
{
	return METER__COUNTS(meter__tls.page);
}

static inline uintptr_t *meter_sps(void)
{
	return METER__SPS(meter__tls.page);
}

static inline uintptr_t *meter_sites(void)
{
	return METER__SITES(meter__tls.page);
}

/*
 * Frames past the page's capacity, by depth - METER_STACK_CAP: in the
 * thread's block after the call counts (only libmeter reads them; the
 * page's deep[] window shows the kernel the ones nearest the leaf).
 * Deeper still, a frame's id is not kept.
 */
#define METER_DEEP_MAX		(1U << 18)
#define METER_BLOCK_DEEP	METER__BLOCK_BYTES
#define METER_BLOCK_ALL_BYTES	(METER_BLOCK_DEEP + 4ULL * METER_DEEP_MAX)

static inline uint32_t *meter_deep(void)
{
	return (uint32_t *)((char *)meter__tls.page + METER_BLOCK_DEEP);
}

/* The id of frame k (0 <= k < depth) of the thread's stack; 0: not kept. */
static inline uint32_t meter_frame_id(uint32_t k)
{
	if (k < METER_STACK_CAP)
		return meter__tls.page->stack[k];
	if (k - METER_STACK_CAP < METER_DEEP_MAX)
		return meter_deep()[k - METER_STACK_CAP];
	return 0;
}

/* Makes depth d and current cur visible together. */
static inline void meter_set_cd(struct meter_page *pg, uint32_t cur,
				uint32_t d)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	METER__CD_WORD(pg) = METER__CD(cur, d);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* meter_output.c: a thread's name, from /proc (false: not known). */
bool meter_thread_comm(pid_t tid, char *buf, size_t len) METER_HIDDEN;

/*
 * meter_shadow.c, built with -mgeneral-regs-only: the shadow stack, and
 * the quick half of the slow path that the thunks call before saving any
 * vector state (a frame with page NULL: the full slow path must run).
 */
extern union meter_whole_block meter_scratch_block METER_HIDDEN;
#define METER_SCRATCH_PAGE (&meter_scratch_block.page)
void meter_push(uint32_t id, uintptr_t sp, uintptr_t site,
		struct meter__frame *f) METER_HIDDEN;
void meter_pop_to(uint32_t d) METER_HIDDEN;
void meter_pop_jumped(uintptr_t sp) METER_HIDDEN;
/* libmeter-patch.so's hook at a thread's end (meter__on_thread_end) */
extern void (*meter_thread_end_hook)(struct meter_page *pg) METER_HIDDEN;

/* libmeter-patch.so is loaded (it keeps the deep frames' return addresses) */
static inline bool meter_patching(void)
{
	return meter_thread_end_hook != NULL;
}
void meter_push_api(uint32_t id) METER_HIDDEN;
struct meter__frame meter_enter_quick(struct meter_record *rec, uintptr_t sp,
				      uintptr_t site) METER_HIDDEN;
struct meter__frame meter_page_quick(void) METER_HIDDEN;
struct meter__frame meter_page_slow(void) METER_HIDDEN;
struct meter__frame meter_enter_flat_quick(struct meter_record *rec)
	METER_HIDDEN;

/* Per-thread state that only libmeter reads. */
enum meter_tstate {
	METER_T_NEW = 0,	/* never registered */
	METER_T_LIVE,
	METER_T_DEAD,		/* exited, or could not be set up */
};
extern __thread struct meter_thr *meter_self METER_HIDDEN
	__attribute__((tls_model("initial-exec")));
extern __thread int meter_tstate METER_HIDDEN
	__attribute__((tls_model("initial-exec")));
extern __thread int meter_busy METER_HIDDEN
	__attribute__((tls_model("initial-exec")));

/* One more profiled call on the slow path (the reports' slow_entries). */
static inline void meter_count_slow(void)
{
	struct meter_thr *th = meter_self;

	if (th)
		__atomic_store_n(&th->slow_entries, th->slow_entries + 1,
				 __ATOMIC_RELAXED);
}

/* meter_registry.c */
/* The id table, mapped once; false when it cannot be. */
bool meter_registry_ready(void) METER_HIDDEN;
uint32_t meter_record_new_at(const char *name, char *file, uint32_t line);
/* An API record's call cost where a runtime gave its own; 0: the header's */
uint64_t meter_rec_cost_ps(uint32_t id);
uint32_t meter_record_new(uint32_t kind, const char *name,
			  uintptr_t addr) METER_HIDDEN;
/* The same with meter_g.lock held, names not sent. */
uint32_t meter_record_new_locked(uint32_t kind, const char *name,
				 uintptr_t addr) METER_HIDDEN;
/* A METER_FUNCTION() or plugin record met before its module's
 * constructor ran: its id, given now (0: none left). */
uint32_t meter_manual_record_id(struct meter_record *rec) METER_HIDDEN;
const char *meter_rec_name(uint32_t id) METER_HIDDEN;

/* meter_core.c */
bool meter_thread_ready(void) METER_HIDDEN;	/* registers lazily */
/* Names new ids to the kernel; meter_g.lock held. */
void meter_send_names_locked(void) METER_HIDDEN;
uint64_t meter_now_ns(clockid_t clk) METER_HIDDEN;

/* meter_memory.c */
void *meter_map(size_t bytes) METER_HIDDEN;
void meter_small_pages(void *p, size_t bytes, bool unread) METER_HIDDEN;

/* meter_auto.c */
uint32_t meter_auto_find(uintptr_t addr) METER_HIDDEN;

/* meter_symbols.c: "name" or "module+0xoffset"; returns a malloc'd string */
char *meter_symbol_name(uintptr_t addr) METER_HIDDEN;
/* fork: its lock is taken before fork, released after (reset in the child) */
void meter_symbols_lock(void) METER_HIDDEN;
void meter_symbols_unlock(bool child) METER_HIDDEN;

/* meter_signal.c */
int meter_signal_setup(void) METER_HIDDEN;
int meter_signal_thread_start(struct meter_thr *th) METER_HIDDEN;
void meter_signal_thread_stop(struct meter_thr *th) METER_HIDDEN;
void meter_signal_reset(void) METER_HIDDEN;
struct meter_stack;
size_t meter_signal_stacks(struct meter_stack *out, size_t cap)
	METER_HIDDEN;
struct meter_addr;
size_t meter_signal_addrs(struct meter_addr *out, size_t cap) METER_HIDDEN;

/* meter_maps.c: the process's executable mappings, for the file */
struct meter_map_row;
size_t meter_maps_read(struct meter_map_row **out) METER_HIDDEN;
void meter_maps_free(struct meter_map_row *v, size_t n) METER_HIDDEN;

/* meter_alloc.c: libmeter-alloc.so is loaded */
bool meter_alloc_preloaded(void) METER_HIDDEN;

/*
 * meter_output.c: the signal or off backend's file, at process exit or
 * before an exec (then named apart: the next program has the same pid)
 */
void meter_write_profile(bool before_exec) METER_HIDDEN;
/*
 * The end of the process's profile, at exit or before an exec
 * (meter_exec.c): the calls sent to meter.ko, or the profile file
 * written.  Once; nothing is profiled after it.
 */
void meter_process_finish(bool before_exec) METER_HIDDEN;
void meter_notice(const char *msg) METER_HIDDEN;

/* meter_calibrate.c: cost of the manual or the automatic path, and of
 * the flat path into *flat_ps */
uint64_t meter_calibrate(bool automatic, uint64_t *flat_ps) METER_HIDDEN;
/*
 * meter_calib_cache.c: the figures kept for this machine and mode: a call,
 * a flat call, and a call of the uninstrumented stub (the speed check)
 */
bool meter_calib_cached(bool automatic, uint64_t *ps, uint64_t *flat_ps,
			uint64_t *plain_ps) METER_HIDDEN;
void meter_calib_store(bool automatic, uint64_t ps, uint64_t flat_ps,
		       uint64_t plain_ps) METER_HIDDEN;
/* Set by the automatic hooks before they first set a thread up. */
extern __thread int meter_via_hooks METER_HIDDEN
	__attribute__((tls_model("initial-exec")));

/* meter_auto.c: a table entry for the calibration stub */
void meter_auto_reserve(uintptr_t addr, uint32_t id) METER_HIDDEN;

#endif /* METER_INTERNAL_H */
