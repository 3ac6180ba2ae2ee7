// SPDX-License-Identifier: MIT
/*
 * libmeter core: the per-thread page and shadow stack, lazy registration,
 * the slow paths of enter and leave, thread exit, process exit and fork
 * (the record registry: meter_registry.c).  The fast paths are inline in meter.h (manual)
 * and in meter_auto.c (-finstrument-functions).
 *
 * Shadow stack.  The page holds the ids (the kernel reads them); the rest
 * of the thread's block (include/meter.h) holds, for each of the first
 * METER_STACK_CAP frames, where the frame is (its CFA, sps[]) and where it
 * returns to (sites[]).  sps[-1] is a sentinel, UINTPTR_MAX.  Depth and
 * current change together, in one 64-bit store (meter_set_cd).  A frame is stale (left by longjmp or by
 * an exception through code without cleanups) when a new call arrives at
 * or above it (stale_for_enter in meter_shadow.c, which keeps the shadow
 * stack's code): the slow path pops such frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "meter_internal.h"
#include "nlreg.h"

_Static_assert(sizeof(struct meter_record) == 32, "record is 32 bytes");
_Static_assert(METER__STACK_CAP == METER_STACK_CAP, "stack capacity");
_Static_assert(offsetof(struct meter_page, stack) ==
	       offsetof(struct meter__page_hdr, stack), "page layout");
_Static_assert(offsetof(struct meter_page, depth) ==
	       offsetof(struct meter__page_hdr, depth), "page layout");
_Static_assert(offsetof(struct meter_page, current_id) + 4 ==
	       offsetof(struct meter_page, depth), "current, depth: one word");
_Static_assert(METER__FUNCS_MAX == METER_FUNCS_MAX, "function ids");
_Static_assert(offsetof(struct meter_page, reserved) + 4 ==
	       offsetof(struct meter_page, stack), "stack[-1] is reserved");
_Static_assert(METER__BLOCK_SITES + 8 * (METER_STACK_CAP + 1) <=
	       METER__BLOCK_COUNTS, "block layout");

/*
 * The block of threads not (yet) registered: its depth sends a function's
 * own entry to the slow path; the entries store current into it first and
 * the plugin's inlined copies without a host's page count into it, for
 * nobody to read (<meter.h>, struct meter__tls).  Zeroes, not to be 8 MB
 * of the library's file: meter_loaded() gives it its depth.
 */
union meter_whole_block meter_no_block __attribute__((aligned(4096)));

__thread struct meter__tls meter__tls
	__attribute__((tls_model("initial-exec"))) = {
	.page = METER_NO_PAGE,
};
__thread struct meter_thr *meter_self;
__thread int meter_tstate;
__thread int meter_busy;
__thread int meter_via_hooks;

struct meter_global meter_g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.next_id = 1,
};

/* ld.so's: the main thread's stack at start-up, above main's frames */
extern void *__libc_stack_end;

static pthread_key_t thread_key;

#define FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

uint64_t meter_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define ID_ARRAY_BYTES ((size_t)(METER_FUNCS_MAX + 1) * sizeof(uint64_t))

/* ------------------------------------------------------------------ */
/* kernel backend: names and counts                                    */

/* Names every id not yet named; the lock is held, the thread is live. */
void meter_send_names_locked(void)
{
	uint32_t hi = atomic_load_explicit(&meter_g.next_id,
					   memory_order_acquire) - 1;
	struct meter_nl_func *f;
	char err[256];
	uint32_t id, n;

	if (meter_g.backend != METER_BK_KERNEL || !meter_g.registered ||
	    !meter_g.nl || hi <= meter_g.names_sent)
		return;
	n = hi - meter_g.names_sent;
	f = malloc(n * sizeof(*f));
	if (!f)
		return;
	for (id = meter_g.names_sent + 1; id <= hi; id++) {
		f[id - meter_g.names_sent - 1].id = id;
		f[id - meter_g.names_sent - 1].name = meter_rec_name(id);
		f[id - meter_g.names_sent - 1].file = meter_g.recs[id].file;
		f[id - meter_g.names_sent - 1].line = meter_g.recs[id].line;
		f[id - meter_g.names_sent - 1].cost_ps = meter_rec_cost_ps(id);
	}
	if (meter_nl_add_funcs(meter_g.nl, f, n, err, sizeof(err)) == 0)
		meter_g.names_sent = hi;
	else if (!meter_g.quiet)
		fprintf(stderr, "meter: naming functions: %s\n", err);
	free(f);
}

/* Sends a thread's call counts to its session; the lock is held. */
static void send_calls_locked(struct meter_thr *th)
{
	uint32_t hi = atomic_load_explicit(&meter_g.next_id,
					   memory_order_acquire) - 1;
	struct meter_call_counts *c;
	char err[256];
	size_t n = 0;
	uint32_t id;

	c = malloc((size_t)(hi + 1) * sizeof(*c));
	if (!c)
		return;
	for (id = 1; id <= hi; id++) {
		uint64_t ac = th->alloc_calls ? th->alloc_calls[id] : 0;
		uint64_t ab = th->alloc_bytes ? th->alloc_bytes[id] : 0;

		if (!th->counts[id] && !ac)
			continue;
		c[n].id = id;
		c[n].reserved = 0;
		c[n].calls = th->counts[id];
		c[n].alloc_calls = ac;
		c[n].alloc_bytes = ab;
		n++;
	}
	if (n && meter_nl_add_calls(meter_g.nl, (uint32_t)th->tid, c, n,
				    __atomic_load_n(&th->slow_entries,
						    __ATOMIC_RELAXED),
				    err, sizeof(err)) &&
	    !meter_g.quiet)
		fprintf(stderr, "meter: sending call counts: %s\n", err);
	free(c);
}

/* ------------------------------------------------------------------ */
/* process set-up                                                      */

static void thread_exit(void *arg);
static void at_fork_prepare(void);
static void at_fork_parent(void);
static void at_fork_child(void);

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !v)
		return dflt;
	return v;
}

void meter_notice(const char *msg)
{
	if (!meter_g.quiet)
		fprintf(stderr, "meter: %s\n", msg);
}

/* METER_NOTICE_SIGNAL=0: meter-run has said it once for the whole run */
static bool signal_notice_wanted(void)
{
	const char *v = getenv("METER_NOTICE_SIGNAL");

	return !v || strcmp(v, "0");
}

static bool open_kernel(char *err, size_t errlen)
{
	return meter_nl_open(&meter_g.nl, err, errlen) == 0;
}

static void new_cookie(void)
{
	meter_g.cookie = ((uint64_t)getpid() << 32) ^
			 meter_now_ns(CLOCK_BOOTTIME);
	if (!meter_g.cookie)
		meter_g.cookie = 1;
}

/* METER_CLOCK: cpu (the default) or wall, which needs meter.ko. */
static uint32_t env_clock(void)
{
	const char *c = getenv("METER_CLOCK");

	if (!c || !*c || !strcmp(c, "cpu"))
		return METER_CLOCK_CPU;
	if (!strcmp(c, "wall"))
		return METER_CLOCK_WALL;
	fprintf(stderr, "meter: unknown METER_CLOCK=%s (cpu or wall), using cpu\n",
		c);
	return METER_CLOCK_CPU;
}

/* Once per process, with the lock held. */
static void process_init_locked(void)
{
	const char *b = getenv("METER_BACKEND");
	const char *q = getenv("METER_QUIET");
	const char *o = getenv("METER_OUTPUT");
	char err[256] = "";

	if (meter_g.inited)
		return;
	meter_g.inited = true;
	meter_g.pid = getpid();
	meter_g.quiet = q && !strcmp(q, "1");
	meter_g.alloc = getenv("METER_ALLOC") &&
			!strcmp(getenv("METER_ALLOC"), "1");
	if (meter_g.alloc && !meter_alloc_preloaded()) {
		meter_notice("METER_ALLOC=1 without libmeter-alloc.so preloaded (meter-run --alloc): allocations not counted");
		meter_g.alloc = false;
	}
	meter_g.period_ns = env_u64("METER_PERIOD_NS", 0);
	meter_g.period_set = meter_g.period_ns != 0;
	if (!meter_g.period_set)
		meter_g.period_ns = METER_PERIOD_DEFAULT_NS;
	if (meter_g.period_ns < METER_PERIOD_MIN_NS ||
	    meter_g.period_ns > METER_PERIOD_MAX_NS) {
		fprintf(stderr, "meter: METER_PERIOD_NS=%llu is outside %llu..%llu, using %llu\n",
			(unsigned long long)meter_g.period_ns,
			METER_PERIOD_MIN_NS, METER_PERIOD_MAX_NS,
			METER_PERIOD_DEFAULT_NS);
		meter_g.period_ns = METER_PERIOD_DEFAULT_NS;
	}
	snprintf(meter_g.output, sizeof(meter_g.output), "%s",
		 o && *o ? o : "meter.out.%p");
	meter_g.clock = env_clock();
	/*
	 * METER_PARENT_COOKIE: the nearest profiled ancestor's session, or
	 * meter-run --follow-fork's token for the run where there is none
	 * (pass_tree_link()).  A forked child links to its parent's instead.
	 */
	if (!meter_g.parent_cookie)
		meter_g.parent_cookie = env_u64("METER_PARENT_COOKIE", 0);

	if (!b || !*b || !strcmp(b, "auto")) {
		meter_g.chose_auto = true;
		if (open_kernel(err, sizeof(err))) {
			meter_g.backend = METER_BK_KERNEL;
		} else if (!o || !*o) {
			/*
			 * Nobody asked for a profile (no meter-run, no
			 * METER_OUTPUT, no backend named): a program run in a
			 * build or a test says nothing and writes nothing.
			 */
			meter_g.backend = METER_BK_OFF;
			meter_g.output[0] = '\0';
		} else {
			meter_g.backend = METER_BK_SIGNAL;
			if (signal_notice_wanted())
				meter_notice("meter.ko not available, using the signal backend (samples limited to the scheduler tick)");
		}
	} else if (!strcmp(b, "kernel")) {
		if (open_kernel(err, sizeof(err))) {
			meter_g.backend = METER_BK_KERNEL;
		} else {
			if (!meter_g.quiet)
				fprintf(stderr, "meter: METER_BACKEND=kernel: %s; counting calls only\n",
					err);
			meter_g.backend = METER_BK_OFF;
		}
	} else if (!strcmp(b, "signal")) {
		meter_g.backend = METER_BK_SIGNAL;
		if (signal_notice_wanted())
			meter_notice("signal backend: samples are limited to the scheduler tick");
	} else {
		if (strcmp(b, "off"))
			fprintf(stderr, "meter: unknown METER_BACKEND=%s, using off\n",
				b);
		meter_g.backend = METER_BK_OFF;
	}
	if (meter_g.backend != METER_BK_KERNEL &&
	    meter_g.clock == METER_CLOCK_WALL) {
		/* a signal timer on wall time would interrupt the program's
		 * own waits: the wall clock is the module's alone
		 */
		if (!meter_g.quiet)
			fprintf(stderr, "meter: METER_CLOCK=wall needs meter.ko; sampling CPU time\n");
		meter_g.clock = METER_CLOCK_CPU;
	}
	if (meter_g.backend == METER_BK_SIGNAL && meter_signal_setup()) {
		meter_notice("cannot set up SIGPROF; counting calls only");
		meter_g.backend = METER_BK_OFF;
	}
	meter_g.calls_done = meter_map(ID_ARRAY_BYTES);
	if (meter_g.alloc) {
		meter_g.alloc_calls_done = meter_map(ID_ARRAY_BYTES);
		meter_g.alloc_bytes_done = meter_map(ID_ARRAY_BYTES);
	}
	meter_registry_ready();
	pthread_key_create(&thread_key, thread_exit);
	pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
	meter_g.start_ns = meter_now_ns(CLOCK_BOOTTIME);
	new_cookie();
}

/* ------------------------------------------------------------------ */
/* threads                                                             */

static void thread_free_maps(struct meter_thr *th)
{
	if (th->alloc_calls)
		munmap(th->alloc_calls, ID_ARRAY_BYTES);
	if (th->alloc_bytes)
		munmap(th->alloc_bytes, ID_ARRAY_BYTES);
	if (th->page)
		munmap(th->page, METER_BLOCK_ALL_BYTES);
}

static struct meter_thr *thread_alloc(void)
{
	struct meter_thr *th = calloc(1, sizeof(*th));

	if (!th)
		return NULL;
	th->tid = gettid();
	/* the page, the shadow stack's side arrays, the call counts, the
	 * frames past the page's capacity
	 */
	th->page = meter_map(METER_BLOCK_ALL_BYTES);
	if (th->page)
		th->counts = METER__COUNTS(th->page);
	if (meter_g.alloc) {
		th->alloc_calls = meter_map(ID_ARRAY_BYTES);
		th->alloc_bytes = meter_map(ID_ARRAY_BYTES);
	}
	if (!th->page ||
	    (meter_g.alloc && (!th->alloc_calls || !th->alloc_bytes))) {
		thread_free_maps(th);
		free(th);
		return NULL;
	}
	th->page->magic = METER_PAGE_MAGIC;
	th->page->version = METER_PAGE_VERSION;
	METER__SPS(th->page)[-1] = UINTPTR_MAX;
	if (gettid() == getpid()) {
		/* what glibc reads /proc/self/maps for, 120,000 instructions */
		th->stack_hi = (uintptr_t)__libc_stack_end;
	} else {
		pthread_attr_t attr;
		void *lo;
		size_t sz;

		if (!pthread_getattr_np(pthread_self(), &attr)) {
			if (!pthread_attr_getstack(&attr, &lo, &sz))
				th->stack_hi = (uintptr_t)lo + sz;
			pthread_attr_destroy(&attr);
		}
	}
	return th;
}

/*
 * A process exec'd below this one through programs that are not
 * instrumented (sh -c, make, xargs) links its session to this one: it
 * inherits METER_PARENT_COOKIE, which meter-run --follow-fork set for the
 * run and each profiled process replaces with its own cookie once it has
 * one.  Only an existing variable is replaced: glibc then swaps one
 * pointer in environ and never reallocates the array under a thread that
 * is reading it.
 */
static void pass_tree_link(void)
{
	char v[24];

	if (!getenv("METER_PARENT_COOKIE"))
		return;
	snprintf(v, sizeof(v), "%" PRIu64, meter_g.cookie);
	setenv("METER_PARENT_COOKIE", v, 1);
}

/* Registers the calling thread with the backend; the lock is held. */
static int thread_register_locked(struct meter_thr *th)
{
	struct meter_nl_reg reg = { 0 };
	char err[256];
	uint64_t cookie = 0, period = 0;
	int rc;

	switch (meter_g.backend) {
	case METER_BK_KERNEL:
		if (!meter_g.nl && meter_nl_open(&meter_g.nl, err, sizeof(err)))
			goto fail;
		reg.page_addr = (uintptr_t)th->page;
		/* not asked for: the module's default (and its floors) */
		reg.period_ns = meter_g.period_set ? meter_g.period_ns : 0;
		reg.parent_cookie = meter_g.registered ? 0 :
				    meter_g.parent_cookie;
		reg.call_cost_ps = meter_g.call_cost_ps;
		reg.counts_addr = (uintptr_t)th->counts;
		reg.clock = meter_g.clock;
		rc = meter_nl_register(meter_g.nl, &reg, &cookie, &period,
				       err, sizeof(err));
		if (rc && meter_g.chose_auto && !meter_g.registered &&
		    !meter_signal_setup()) {
			/* the module is there but will not have us: fall back */
			if (!meter_g.quiet)
				fprintf(stderr, "meter: meter.ko refused registration (%s), using the signal backend (samples limited to the scheduler tick)\n",
					err);
			meter_nl_close(meter_g.nl);
			meter_g.nl = NULL;
			meter_g.backend = METER_BK_SIGNAL;
			return thread_register_locked(th);
		}
		if (rc)
			goto fail;
		if (!meter_g.registered) {
			meter_g.cookie = cookie;
			if (period)
				meter_g.period_ns = period;
			meter_g.clock = reg.clock;
		}
		break;
	case METER_BK_SIGNAL:
		if (meter_signal_thread_start(th)) {
			snprintf(err, sizeof(err), "timer_create: %s",
				 strerror(errno));
			goto fail;
		}
		break;
	case METER_BK_OFF:
		break;
	}
	if (!meter_g.registered && meter_g.backend != METER_BK_OFF)
		pass_tree_link();
	meter_g.registered = true;
	return 0;
fail:
	if (!meter_g.quiet)
		fprintf(stderr, "meter: registering thread %d: %s\n",
			(int)th->tid, err);
	return -1;
}

/*
 * Calls made before this (from .preinit_array, or from constructors of
 * objects initialised before libmeter) run unprofiled: libnl and libc's
 * locale and stdio may not be set up yet, so nothing here may start.
 */
static void __attribute__((constructor)) meter_loaded(void)
{
	/* the large .bss in small pages (meter_memory.c) */
	meter_small_pages(&meter_no_block, sizeof(meter_no_block), true);
	meter_small_pages(&meter_scratch_block, sizeof(meter_scratch_block),
			  true);
	/* Until now (.preinit_array) the block's depth was 0: a function's
	 * own stacked entry found sps[-1] zero and took the slow path,
	 * which left the call unprofiled (its inlined copies count into the
	 * scratch block it got); flat entries counted, and copies without a
	 * host's page pushed, into this block, for nobody. */
	meter_no_block.page.magic = METER_PAGE_MAGIC;
	meter_no_block.page.version = METER_PAGE_VERSION;
	meter_no_block.page.depth = UINT32_MAX;
	__atomic_store_n(&meter_g.loaded, true, __ATOMIC_RELEASE);
}

/* Sets the calling thread up on its first instrumented call. */
bool meter_thread_ready(void)
{
	struct meter_thr *th;
	uint32_t cur, depth;
	bool first;

	if (meter_have_page())
		return true;
	if (meter_tstate == METER_T_DEAD || meter_busy ||
	    !__atomic_load_n(&meter_g.loaded, __ATOMIC_ACQUIRE))
		return false;
	meter_busy = 1;
	pthread_mutex_lock(&meter_g.lock);
	process_init_locked();
	first = !meter_g.call_cost_ps && !meter_g.registered;
	th = meter_self ? meter_self : thread_alloc();
	if (!th)
		goto dead;
	meter_self = th;
	if (first) {
		/* the stub runs on this thread's page before sampling starts */
		pthread_mutex_unlock(&meter_g.lock);
		meter__tls.page = th->page;	/* the stub's calls stay fast */
		meter_busy = 0;
		meter_g.call_cost_ps = meter_calibrate(meter_via_hooks,
						       &meter_g.flat_cost_ps);
		meter_busy = 1;
		meter__tls.page = METER_NO_PAGE;
		pthread_mutex_lock(&meter_g.lock);
	}
	/*
	 * A forked child's page keeps the parent's frames, ids that its new
	 * session learns only from the names sent after the registration:
	 * until then the kernel sees no current function (registering is
	 * libmeter's time), not ids it would count as invalid.
	 */
	cur = th->page->current_id;
	depth = th->page->depth;
	__atomic_store_n(&th->page->depth, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&th->page->current_id, 0, __ATOMIC_RELEASE);
	if (thread_register_locked(th))
		goto dead;
	if (!th->listed) {
		th->next = meter_g.threads;
		meter_g.threads = th;
		th->listed = true;
	}
	pthread_setspecific(thread_key, th);
	meter_tstate = METER_T_LIVE;
	meter_send_names_locked();
	__atomic_store_n(&th->page->depth, depth, __ATOMIC_RELAXED);
	__atomic_store_n(&th->page->current_id, cur, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&meter_g.lock);
	meter__tls.page = th->page;
	meter_busy = 0;
	return true;
dead:
	meter_tstate = METER_T_DEAD;
	meter__tls.page = METER_NO_PAGE;
	pthread_mutex_unlock(&meter_g.lock);
	meter_busy = 0;
	return false;
}

/* Folds a thread's counts into the process totals; the lock is held. */
static void fold_counts_locked(struct meter_thr *th)
{
	uint32_t hi = atomic_load_explicit(&meter_g.next_id,
					   memory_order_acquire) - 1;
	uint32_t id;

	for (id = 1; id <= hi; id++) {
		meter_g.calls_done[id] += th->counts[id];
		if (th->alloc_calls && meter_g.alloc_calls_done) {
			meter_g.alloc_calls_done[id] += th->alloc_calls[id];
			meter_g.alloc_bytes_done[id] += th->alloc_bytes[id];
		}
	}
}

/* libmeter-patch.so's, told before a thread's block goes (meter.h) */
void (*meter_thread_end_hook)(struct meter_page *pg);

void meter__on_thread_end(void (*fn)(struct meter_page *pg))
{
	meter_thread_end_hook = fn;
}

static void thread_exit(void *arg)
{
	struct meter_thr *th = arg;
	char err[256];

	if (!th || th != meter_self || meter_g.finished)
		return;
	meter_busy = 1;
	/* its name as it ends, for the signal and off backends' file */
	if (!meter_thread_comm(th->tid, th->name, sizeof(th->name)))
		th->name[0] = '\0';
	if (meter_g.backend == METER_BK_SIGNAL)
		meter_signal_thread_stop(th);
	pthread_mutex_lock(&meter_g.lock);
	if (meter_g.backend == METER_BK_KERNEL && meter_g.nl) {
		send_calls_locked(th);
		meter_nl_unregister(meter_g.nl, err, sizeof(err));
	} else {
		fold_counts_locked(th);
	}
	th->exited = true;
	if (meter_thread_end_hook)
		meter_thread_end_hook(th->page);
	meter__tls.page = METER_NO_PAGE;
	meter_tstate = METER_T_DEAD;
	FENCE();
	/* the thread stays listed (tid, samples); its memory goes */
	thread_free_maps(th);
	th->page = NULL;
	th->counts = th->alloc_calls = th->alloc_bytes = NULL;
	pthread_mutex_unlock(&meter_g.lock);
}

/* ------------------------------------------------------------------ */
/* the slow paths of enter (the shadow stack itself: meter_shadow.c)   */

/*
 * The full slow path: the quick half (meter_shadow.c) first, then what
 * only this side may do, registering the thread and numbering a record
 * met before its module's constructor ran.
 */
struct meter__frame meter__enter_slow(struct meter_record *rec,
				      uintptr_t sp, uintptr_t site)
{
	struct meter__frame f = meter_enter_quick(rec, sp, site);
	uint32_t id;

	if (f.page)
		return f;
	f.page = METER_SCRATCH_PAGE;
	if (!meter_thread_ready())
		return f;
	id = __atomic_load_n(&rec->id, __ATOMIC_ACQUIRE);
	if (!id && !(id = meter_manual_record_id(rec)))
		return f;
	meter_count_slow();
	meter_counts()[id]++;
	meter_push(id, sp, site, &f);
	return f;
}

/* What the x86-64 thunks call (lib/meter_thunk.c): no PLT. */
extern __typeof__(meter__enter_slow) meter_enter_slow_hidden
	__attribute__((alias("meter__enter_slow"), cold)) METER_HIDDEN;

/* A flat call on a thread not yet registered (or not profiled). */
struct meter__frame meter__enter_flat_slow(struct meter_record *rec)
{
	struct meter__frame f = meter_enter_flat_quick(rec);
	struct meter_page *pg;
	uint32_t id;

	if (f.page)
		return f;
	f.page = METER_SCRATCH_PAGE;
	if (!meter_thread_ready())
		return f;
	id = __atomic_load_n(&rec->id, __ATOMIC_ACQUIRE);
	if (!id && !(id = meter_manual_record_id(rec)))
		return f;
	meter_count_slow();
	pg = meter__tls.page;
	meter_counts()[id]++;
	f.page = pg;
	f.cd = pg->current_id;
	FENCE();
	pg->current_id = id;
	FENCE();
	return f;
}

extern __typeof__(meter__enter_flat_slow) meter_enter_flat_slow_hidden
	__attribute__((alias("meter__enter_flat_slow"), cold)) METER_HIDDEN;

const char *meter_backend(void)
{
	if (!meter_g.inited) {
		pthread_mutex_lock(&meter_g.lock);
		process_init_locked();
		pthread_mutex_unlock(&meter_g.lock);
	}
	switch (meter_g.backend) {
	case METER_BK_KERNEL:
		return "kernel";
	case METER_BK_SIGNAL:
		return "signal";
	default:
		return "off";
	}
}

/* ------------------------------------------------------------------ */
/* process exit                                                        */

static void __attribute__((destructor)) meter_process_exit(void)
{
	meter_process_finish(false);
}

/* For libmeter-patch.so's detach (meter-run --pid): the profile ends. */
void meter__finish(void)
{
	meter_process_finish(false);
}

void meter_process_finish(bool before_exec)
{
	struct meter_thr *th;
	char err[256];

	if (!meter_g.inited || !meter_g.registered || meter_g.finished ||
	    meter_g.pid != getpid())
		return;
	meter_busy = 1;
	atomic_store(&meter_g.sampling, false);
	if (meter_g.backend == METER_BK_SIGNAL && meter_self &&
	    meter_tstate == METER_T_LIVE)
		meter_signal_thread_stop(meter_self);
	pthread_mutex_lock(&meter_g.lock);
	meter_g.finished = true;
	if (meter_g.backend == METER_BK_KERNEL) {
		if (meter_g.nl && meter_tstate == METER_T_LIVE) {
			for (th = meter_g.threads; th; th = th->next)
				if (!th->exited && th->counts)
					send_calls_locked(th);
			meter_nl_unregister(meter_g.nl, err, sizeof(err));
		}
	} else {
		meter_write_profile(before_exec);
	}
	pthread_mutex_unlock(&meter_g.lock);
}

/* ------------------------------------------------------------------ */
/* fork                                                                */

/* Lock order: meter_g.lock, then the symbol table's (names are looked up
 * with meter_g.lock held). */
static void at_fork_prepare(void)
{
	pthread_mutex_lock(&meter_g.lock);
	meter_symbols_lock();
}

static void at_fork_parent(void)
{
	meter_symbols_unlock(false);
	pthread_mutex_unlock(&meter_g.lock);
}

static void at_fork_child(void)
{
	struct meter_thr *th = meter_self, *o, *next;
	uint32_t hi = atomic_load_explicit(&meter_g.next_id,
					   memory_order_relaxed) - 1;

	meter_symbols_unlock(true);
	pthread_mutex_init(&meter_g.lock, NULL);
	meter_g.pid = getpid();
	meter_g.finished = false;
	if (meter_g.registered)
		meter_g.parent_cookie = meter_g.cookie;
	meter_g.registered = false;
	new_cookie();
	meter_g.start_ns = meter_now_ns(CLOCK_BOOTTIME);
	meter_g.names_sent = 0;
	/* the parent's socket is the parent's: this process opens its own */
	meter_g.nl = NULL;
	if (meter_g.calls_done)
		memset(meter_g.calls_done, 0, (hi + 1) * sizeof(uint64_t));
	if (meter_g.alloc_calls_done) {
		memset(meter_g.alloc_calls_done, 0, (hi + 1) * sizeof(uint64_t));
		memset(meter_g.alloc_bytes_done, 0, (hi + 1) * sizeof(uint64_t));
	}
	meter_signal_reset();
	/* only the forking thread exists here: the others' go */
	for (o = meter_g.threads; o; o = next) {
		next = o->next;
		if (o != th) {
			thread_free_maps(o);
			free(o);
		}
	}
	meter_g.threads = NULL;
	if (th && meter_tstate == METER_T_LIVE) {
		memset(th->counts, 0, (hi + 1) * sizeof(uint64_t));
		if (th->alloc_calls) {
			memset(th->alloc_calls, 0, (hi + 1) * sizeof(uint64_t));
			memset(th->alloc_bytes, 0, (hi + 1) * sizeof(uint64_t));
		}
		th->next = NULL;
		th->listed = false;
		th->tid = gettid();
		th->samples = 0;
		th->slow_entries = 0;
		th->timer_armed = false;
		/* re-registers lazily, keeping the frames live across fork */
		meter__tls.page = METER_NO_PAGE;
		meter_tstate = METER_T_NEW;
	}
}
