// SPDX-License-Identifier: MIT
/*
 * The signal backend: what meter.ko's tick does, done by a SIGPROF handler
 * driven by a per-thread CPU-time POSIX timer.  It works without the
 * module, but the kernel fires such timers at most once per scheduler tick
 * (CONFIG_HZ), whatever period is asked for.
 *
 * The handler is async-signal-safe and lock-free: it reads the interrupted
 * thread's page and bumps atomic counters; sampled stacks go into a fixed
 * open-addressing table whose slots are claimed with compare-and-swap.
 *
 * As in meter.ko, a sample is a period of the thread's CPU time: a signal
 * that comes late (the timer's overrun count, at most one signal per
 * scheduler tick) weighs every period that passed, so samples per
 * CPU-second are the requested rate; ticks count the signals taken.  But
 * at most LATE_MAX_NS of them: on a loaded machine a signal can come
 * hundreds of milliseconds late, and charging all of that to the function
 * current when it lands would give it another function's time.  The rest
 * is counted as missed (unsampled_ns, at the thread's end).
 *
 * Each sample is also counted at the address the thread was interrupted
 * at, with the current function, in a second table of the same kind whose
 * key is three words (the function, the address's two halves), as meter.ko
 * counts them: the reports read them by address (analysis/byaddr.c).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "meter_internal.h"
#include "profile.h"

#define LATE_MAX_NS 10000000ULL	/* 10 ms: two ticks at 250 Hz */
#define STACK_SLOTS 4096U	/* power of two */
#define STACK_PROBES 64

enum { SLOT_EMPTY, SLOT_WRITING, SLOT_READY };

struct stack_slot {
	_Atomic uint32_t state;
	uint32_t depth;
	uint32_t hash;
	uint32_t truncated;
	uint32_t tid;		/* the thread sampled, part of the key */
	_Atomic uint64_t samples;
	uint32_t frames[METER_SAMPLE_DEPTH_MAX];
};

static struct stack_slot *stacks, *addrs;

static uint32_t hash_frames(const uint32_t *f, uint32_t n, uint32_t trunc,
			    uint32_t tid)
{
	uint32_t h = (2166136261U ^ trunc ^ tid * 2654435761U) * 16777619U;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = (h ^ f[i]) * 16777619U;
	return h ^ n;
}

/* lost: what counts the samples of a key that finds no slot */
static void add_stack(struct stack_slot *table, uint32_t tid,
		      const uint32_t *frames, uint32_t n, uint32_t trunc,
		      uint64_t w, _Atomic uint64_t *lost)
{
	uint32_t h = hash_frames(frames, n, trunc, tid);
	uint32_t i = h & (STACK_SLOTS - 1), probe;

	for (probe = 0; probe < STACK_PROBES; probe++) {
		struct stack_slot *s = &table[i];
		uint32_t st = atomic_load_explicit(&s->state,
						   memory_order_acquire);
		int spin;

		if (st == SLOT_EMPTY) {
			uint32_t expect = SLOT_EMPTY;

			if (atomic_compare_exchange_strong(&s->state, &expect,
							   SLOT_WRITING)) {
				s->depth = n;
				s->hash = h;
				s->truncated = trunc;
				s->tid = tid;
				memcpy(s->frames, frames, n * sizeof(*frames));
				atomic_store_explicit(&s->state, SLOT_READY,
						      memory_order_release);
				atomic_fetch_add_explicit(&s->samples, w,
						memory_order_relaxed);
				return;
			}
			st = expect;
		}
		/* another thread is filling it: it finishes in a moment */
		for (spin = 0; st == SLOT_WRITING && spin < 10000; spin++)
			st = atomic_load_explicit(&s->state,
						  memory_order_acquire);
		if (st == SLOT_READY && s->hash == h && s->depth == n &&
		    s->truncated == trunc && s->tid == tid &&
		    !memcmp(s->frames, frames, n * sizeof(*frames))) {
			atomic_fetch_add_explicit(&s->samples, w,
						  memory_order_relaxed);
			return;
		}
		i = (i + 1) & (STACK_SLOTS - 1);
	}
	atomic_fetch_add_explicit(lost, w, memory_order_relaxed);
}

/* The sample at the interrupted address, with the current function. */
static void add_addr(uint32_t cur, const void *uc, uint64_t w)
{
#ifdef REG_RIP
	const ucontext_t *ctx = uc;
	uint64_t ip = uc ? (uint64_t)ctx->uc_mcontext.gregs[REG_RIP] : 0;
	uint32_t key[3] = { cur, (uint32_t)ip, (uint32_t)(ip >> 32) };

	if (ip)
		add_stack(addrs, 0, key, 3, 0, w, &meter_g.addrs_lost);
#else
	(void)cur;
	(void)uc;
	(void)w;
#endif
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	struct meter_page *pg = meter__tls.page;
	struct meter_thr *th = meter_self;
	uint32_t frames[METER_SAMPLE_DEPTH_MAX];
	uint32_t cur, depth, n, i, maxid, trunc;
	int saved = errno;
	uint64_t w = 1;

	(void)sig;
	if (pg == METER_NO_PAGE || !th ||
	    !atomic_load_explicit(&meter_g.sampling,
						memory_order_relaxed))
		goto out;
	if (si && si->si_code == SI_TIMER && si->si_overrun > 0)
		w += (uint64_t)si->si_overrun;
	if (w > 1 && w * meter_g.period_ns > LATE_MAX_NS)
		w = LATE_MAX_NS / meter_g.period_ns > 1 ?
		    LATE_MAX_NS / meter_g.period_ns : 1;
	th->samples += w;
	atomic_fetch_add_explicit(&meter_g.ticks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&meter_g.samples, w, memory_order_relaxed);
	maxid = atomic_load_explicit(&meter_g.next_id,
				     memory_order_acquire) - 1;
	cur = pg->current_id;
	depth = pg->depth;
	if (pg->magic != METER_PAGE_MAGIC ||
	    pg->version != METER_PAGE_VERSION || cur > maxid) {
		atomic_fetch_add_explicit(&meter_g.invalid, w,
					  memory_order_relaxed);
		goto out;
	}
	if (!cur) {
		atomic_fetch_add_explicit(&meter_g.no_current, w,
					  memory_order_relaxed);
		goto out;
	}
	atomic_fetch_add_explicit(&meter_g.self_samples[cur], w, memory_order_relaxed);
	/*
	 * The kernel's rule (<linux/meter.h>): the frames nearest the leaf,
	 * then the current function when it is not the top (a flat function,
	 * or a call between its two stores), dropping the root-most frame to
	 * make room.  This thread is the one interrupted, so its frames past
	 * the page's capacity are all here (meter_frame_id), not only the
	 * page's window of them.
	 */
	n = depth < METER_SAMPLE_DEPTH_MAX ? depth : METER_SAMPLE_DEPTH_MAX;
	if (depth > METER_STACK_CAP + METER_DEEP_MAX)
		n = 0;	/* the frames nearest the leaf were not kept */
	trunc = depth > n;
	for (i = 0; i < n; i++) {
		frames[i] = meter_frame_id(depth - n + i);
		if (!frames[i] || frames[i] > maxid) {
			atomic_fetch_add_explicit(&meter_g.invalid, w,
						  memory_order_relaxed);
			goto out;
		}
	}
	if (!n || frames[n - 1] != cur) {
		if (n == METER_SAMPLE_DEPTH_MAX) {
			for (i = 0; i + 1 < n; i++)
				frames[i] = frames[i + 1];
			n--;
			trunc = 1;
		}
		frames[n++] = cur;
	}
	if (trunc)
		atomic_fetch_add_explicit(&meter_g.truncated, w,
					  memory_order_relaxed);
	add_stack(stacks, (uint32_t)th->tid, frames, n, trunc, w,
		  &meter_g.lost);
	add_addr(cur, uc, w);
out:
	errno = saved;
}

int meter_signal_setup(void)
{
	struct sigaction sa;

	meter_g.self_samples = meter_map((size_t)(METER_FUNCS_MAX + 1) *
				 sizeof(*meter_g.self_samples));
	stacks = meter_map(STACK_SLOTS * sizeof(*stacks));
	addrs = meter_map(STACK_SLOTS * sizeof(*addrs));
	if (!meter_g.self_samples || !stacks || !addrs)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL))
		return -1;
	atomic_store(&meter_g.sampling, true);
	return 0;
}

int meter_signal_thread_start(struct meter_thr *th)
{
	struct sigevent sev;
	struct itimerspec its;

	th->cpu_start_ns = meter_now_ns(CLOCK_THREAD_CPUTIME_ID);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = th->tid;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &th->timer))
		return -1;
	its.it_interval.tv_sec = (time_t)(meter_g.period_ns / 1000000000ULL);
	its.it_interval.tv_nsec = (long)(meter_g.period_ns % 1000000000ULL);
	its.it_value = its.it_interval;
	if (timer_settime(th->timer, 0, &its, NULL)) {
		timer_delete(th->timer);
		return -1;
	}
	th->timer_armed = true;
	return 0;
}

/*
 * Called by the thread itself as it ends (or the process does).  A timer
 * on the thread's CPU time fires only at a scheduler tick that finds the
 * period over: a thread shorter than a tick (4 ms at 250 Hz) is often
 * never sampled.  What no tick covered is counted, so that the report can
 * say how much CPU time is missing from it.
 */
void meter_signal_thread_stop(struct meter_thr *th)
{
	uint64_t ran, covered;

	if (!th->timer_armed)
		return;
	timer_delete(th->timer);
	th->timer_armed = false;
	ran = meter_now_ns(CLOCK_THREAD_CPUTIME_ID) - th->cpu_start_ns;
	covered = th->samples * meter_g.period_ns;
	if (ran > covered)
		atomic_fetch_add_explicit(&meter_g.unsampled_ns, ran - covered,
					  memory_order_relaxed);
}

static void clear_table(struct stack_slot *table)
{
	uint32_t i;

	for (i = 0; table && i < STACK_SLOTS; i++)
		if (atomic_load(&table[i].state) != SLOT_EMPTY)
			memset(&table[i], 0, sizeof(table[i]));
}

/* In a forked child: the parent's samples are the parent's. */
void meter_signal_reset(void)
{
	atomic_store(&meter_g.samples, 0);
	atomic_store(&meter_g.ticks, 0);
	atomic_store(&meter_g.unsampled_ns, 0);
	atomic_store(&meter_g.no_current, 0);
	atomic_store(&meter_g.invalid, 0);
	atomic_store(&meter_g.lost, 0);
	atomic_store(&meter_g.truncated, 0);
	atomic_store(&meter_g.addrs_lost, 0);
	if (meter_g.self_samples)
		memset((void *)meter_g.self_samples, 0,
		       (size_t)atomic_load(&meter_g.next_id) *
		       sizeof(*meter_g.self_samples));
	clear_table(stacks);
	clear_table(addrs);
}

/*
 * The stacks sampled, up to cap of them into out; returns how many it
 * stored, or with out NULL how many there are.
 */
size_t meter_signal_stacks(struct meter_stack *out, size_t cap)
{
	size_t n = 0;
	uint32_t i;

	if (!stacks)
		return 0;
	for (i = 0; i < STACK_SLOTS; i++) {
		struct stack_slot *s = &stacks[i];
		uint64_t samples = atomic_load(&s->samples);

		if (atomic_load(&s->state) != SLOT_READY || !samples)
			continue;
		if (out && n < cap)
			out[n] = (struct meter_stack){
				.depth = s->depth, .frames = s->frames,
				.samples = samples, .truncated = s->truncated,
				.tid = s->tid,
			};
		n++;
	}
	return out && n > cap ? cap : n;
}

/*
 * The samples by address, up to cap of them into out; returns how many it
 * stored, or with out NULL how many there are.
 */
size_t meter_signal_addrs(struct meter_addr *out, size_t cap)
{
	size_t n = 0;
	uint32_t i;

	if (!addrs)
		return 0;
	for (i = 0; i < STACK_SLOTS; i++) {
		struct stack_slot *s = &addrs[i];
		uint64_t samples = atomic_load(&s->samples);

		if (atomic_load(&s->state) != SLOT_READY || !samples)
			continue;
		if (out && n < cap)
			out[n] = (struct meter_addr){
				.ip = (uint64_t)s->frames[2] << 32 | s->frames[1],
				.func = s->frames[0], .samples = samples,
			};
		n++;
	}
	return out && n > cap ? cap : n;
}
