// SPDX-License-Identifier: MIT
/*
 * The workloads of `make bench` (bench/run.sh), one program built several
 * ways (bench/bench.mk):
 *
 *   plain    -O2 -g -fno-omit-frame-pointer: baseline, perf
 *   manual   METER_FUNCTION() in every function (-DMETER_MANUAL), -lmeter
 *   auto     -finstrument-functions, -lmeter
 *   plugin   meter's GCC plugin (-fplugin=build/plugin/meter.so), -lmeter
 *   pg       -pg: gprof, uftrace
 *   gperf    linked with libprofiler (CPUPROFILE=FILE turns it on)
 *
 *   workloads WORKLOAD [SCALE]
 *
 *   spin     one function spinning on a fixed amount of arithmetic: the
 *            per-tick cost runs.  BENCH_SIGNAL_HZ=N also arms a
 *            CLOCK_MONOTONIC POSIX timer that sends SIGPROF to the main
 *            thread N times a second, so that libmeter's signal handler
 *            runs at a rate the CPU-time timers cannot reach (see
 *            Documentation/performance.md).
 *   tree     call-heavy: an expression-tree interpreter, small recursive
 *            functions (eval, apply, lookup)
 *   matrix   compute-bound: dense matrix products and a hash over a buffer,
 *            few calls
 *   threads  multi-threaded: 2 threads (BENCH_THREADS=N: N, up to 256)
 *            hashing keys into private tables through small functions
 *   split    known split: heavy, medium and light run the same loop body
 *            5, 3 and 2 units per call, called equally often (50/30/20)
 *   appel    Appel's example: f calls is_prime on large primes, g on small
 *            ones, equally often; prints the share of is_prime's work
 *            done under f (the truth for caller attribution)
 *   switch   two threads calling sched_yield() SCALE x 1000 times each;
 *            prints their context switches in the loop.  BENCH_ICOUNT_OUT=
 *            FILE (in the counted VM) counts the guest's instructions of
 *            the loop and writes them to FILE as vm-icount does
 *
 * Prints one line "workload=W work_cpu_ns=N cpu_ns=N wall_ns=N" on stdout:
 * the CPU time of the process (all threads) from the start of main to the
 * end of the work, the same counted from exec (loader and constructors
 * too), and the wall time of the work.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "../selftests/icount/icount.h"

#ifdef METER_MANUAL
#include "meter.h"
#define PROFILED() METER_FUNCTION()
#else
#define PROFILED() do { } while (0)
#endif

/* Every workload function is a real function for every tool to see. */
#define FN __attribute__((noinline, noclone))
#define NOINSTR __attribute__((no_instrument_function))

static volatile uint64_t sink;

NOINSTR static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- spin ---------------------------------------------------------------- */

FN static uint64_t spin(uint64_t n, uint64_t x)
{
	PROFILED();
	uint64_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

NOINSTR static void arm_monotonic_sigprof(long hz)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t t;
	long ns = 1000000000L / hz;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &t)) {
		perror("timer_create");
		exit(1);
	}
	its.it_interval.tv_sec = ns / 1000000000L;
	its.it_interval.tv_nsec = ns % 1000000000L;
	its.it_value = its.it_interval;
	if (timer_settime(t, 0, &its, NULL)) {
		perror("timer_settime");
		exit(1);
	}
}

FN static void run_spin(uint64_t scale)
{
	PROFILED();
	const char *hz = getenv("BENCH_SIGNAL_HZ");
	uint64_t x = 88172645463325252ULL, k;

	/* libmeter's thread set-up happened at the first profiled call */
	if (hz && atol(hz) > 0)
		arm_monotonic_sigprof(atol(hz));
	for (k = 0; k < scale; k++)
		x = spin(1000000, x);
	sink = x;
}

/* ---- tree: an expression interpreter -------------------------------------- */

enum { OP_NUM, OP_VAR, OP_ADD, OP_SUB, OP_MUL, OP_IF };

struct node {
	int op;
	int64_t val;
	struct node *a, *b, *c;
};

static int64_t vars[16];

FN static struct node *make(int depth, uint64_t *seed)
{
	PROFILED();
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		abort();
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	if (depth == 0) {
		n->op = (*seed >> 33) & 1 ? OP_NUM : OP_VAR;
		n->val = (int64_t)((*seed >> 40) & 15);
		return n;
	}
	n->op = OP_ADD + (int)((*seed >> 35) % 4);
	n->a = make(depth - 1, seed);
	n->b = make(depth - 1, seed);
	if (n->op == OP_IF)
		n->c = make(depth - 1, seed);
	return n;
}

FN static int64_t lookup(int64_t v)
{
	PROFILED();
	return vars[v & 15];
}

FN static int64_t eval(const struct node *n);

FN static int64_t apply(int op, int64_t x, int64_t y)
{
	PROFILED();
	switch (op) {
	case OP_ADD: return x + y;
	case OP_SUB: return x - y;
	default: return (x * y) & 0xffff;
	}
}

FN static int64_t eval(const struct node *n)
{
	PROFILED();
	switch (n->op) {
	case OP_NUM: return n->val;
	case OP_VAR: return lookup(n->val);
	case OP_IF: return eval(n->a) & 1 ? eval(n->b) : eval(n->c);
	default: return apply(n->op, eval(n->a), eval(n->b));
	}
}

FN static void run_tree(uint64_t scale)
{
	PROFILED();
	uint64_t seed = 42, r;
	struct node *root = make(12, &seed);
	int64_t acc = 0;

	for (r = 0; r < scale * 40; r++) {
		vars[r & 15] = (int64_t)r;
		acc += eval(root);
	}
	sink = (uint64_t)acc;
}

/* ---- matrix and hash ------------------------------------------------------ */

#define MN 96

FN static void matmul(double *c, const double *a, const double *b)
{
	PROFILED();
	int i, j, k;

	for (i = 0; i < MN; i++)
		for (j = 0; j < MN; j++) {
			double s = 0;

			for (k = 0; k < MN; k++)
				s += a[i * MN + k] * b[k * MN + j];
			c[i * MN + j] = s;
		}
}

FN static uint64_t hash_buf(const unsigned char *p, size_t n)
{
	PROFILED();
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

FN static void run_matrix(uint64_t scale)
{
	PROFILED();
	static double a[MN * MN], b[MN * MN], c[MN * MN];
	static unsigned char buf[1 << 16];
	uint64_t r, h = 0;
	int i;

	for (i = 0; i < MN * MN; i++) {
		a[i] = (double)(i % 7) * 0.5;
		b[i] = (double)(i % 11) * 0.25;
	}
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 31);
	for (r = 0; r < scale * 2; r++) {
		matmul(c, a, b);
		a[r % (MN * MN)] = c[(r * 7) % (MN * MN)] * 1e-6;
		h ^= hash_buf(buf, sizeof(buf));
		buf[r % sizeof(buf)] ^= (unsigned char)h;
	}
	sink = h + (uint64_t)c[5];
}

/* ---- threads: hash tables ------------------------------------------------ */

#define TBITS 14

struct table {
	uint64_t keys[1 << TBITS];
	uint32_t vals[1 << TBITS];
};

FN static uint64_t mix(uint64_t k)
{
	PROFILED();
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

FN static void insert(struct table *t, uint64_t k)
{
	PROFILED();
	uint64_t i = mix(k) & ((1 << TBITS) - 1);

	while (t->keys[i] && t->keys[i] != k)
		i = (i + 1) & ((1 << TBITS) - 1);
	t->keys[i] = k;
	t->vals[i]++;
}

FN static uint32_t find(const struct table *t, uint64_t k)
{
	PROFILED();
	uint64_t i = mix(k) & ((1 << TBITS) - 1);

	while (t->keys[i] && t->keys[i] != k)
		i = (i + 1) & ((1 << TBITS) - 1);
	return t->keys[i] == k ? t->vals[i] : 0;
}

FN static void *worker(void *arg)
{
	PROFILED();
	uint64_t scale = *(uint64_t *)arg, r, k, s = 0;
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	for (r = 0; r < scale * 12; r++) {
		memset(t, 0, sizeof(*t));
		for (k = 1; k <= 8000; k++)
			insert(t, k * 2654435761ULL + r);
		for (k = 1; k <= 8000; k++)
			s += find(t, k * 2654435761ULL + r);
	}
	free(t);
	sink += s;
	return NULL;
}

FN static void run_threads(uint64_t scale)
{
	PROFILED();
	const char *env = getenv("BENCH_THREADS");
	int i, n = env ? atoi(env) : 2;
	pthread_t th[256];

	if (n < 1 || n > 256)
		n = 2;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, &scale))
			abort();
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* ---- switch: two threads hand the CPU to each other ---------------------- */

/* On one CPU every sched_yield() switches to the other thread: the
 * context switches of a profiled thread, counted (bench/insns.py).
 * BENCH_ICOUNT_OUT: the instructions are counted from both threads'
 * first yield to their last, so that only switches are in the count:
 * not the threads' registration with meter.ko (under a profiler) nor
 * its release at their exit, nor the exec of the profiler and of this
 * program.
 */
struct yielder {
	uint64_t scale;
	int first;		/* the one that marks the region */
	long switches;		/* in the loop */
};

static pthread_barrier_t yield_bar;

FN static void *yielder(void *arg)
{
	PROFILED();
	struct yielder *y = arg;
	struct rusage r0, r1;
	uint64_t i;

	if (getrusage(RUSAGE_THREAD, &r0))
		abort();
	pthread_barrier_wait(&yield_bar);
	if (y->first)
		ICOUNT_BEGIN();
	for (i = 0; i < y->scale * 1000; i++)
		sched_yield();
	pthread_barrier_wait(&yield_bar);
	if (y->first)
		ICOUNT_END();
	if (getrusage(RUSAGE_THREAD, &r1))
		abort();
	y->switches = r1.ru_nvcsw + r1.ru_nivcsw - r0.ru_nvcsw - r0.ru_nivcsw;
	return NULL;
}

FN static void run_switch(uint64_t scale)
{
	PROFILED();
	struct yielder y[2] = { { scale, 1, 0 }, { scale, 0, 0 } };
	const char *out = getenv("BENCH_ICOUNT_OUT");
	int fd = out ? icount_open() : -1;
	pthread_t th[2];
	struct icount c;
	FILE *f;
	int i;

	if ((out && fd < 0) || pthread_barrier_init(&yield_bar, NULL, 2))
		abort();
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, yielder, &y[i]))
			abort();
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("switches=%ld ", y[0].switches + y[1].switches);
	if (fd < 0)
		return;
	f = fopen(out, "w");
	if (icount_read(fd, &c) || !f ||
	    fprintf(f, "icount user %" PRIu64 " kernel %" PRIu64 "\n",
		    c.user, c.kernel) < 0 || fclose(f))
		abort();
	close(fd);
}

/* ---- split: 50/30/20 ------------------------------------------------------ */

/* inlined and not instrumented: its time is its caller's own */
static inline __attribute__((always_inline, no_instrument_function)) uint64_t
body(uint64_t units, uint64_t x)
{
	uint64_t i;

	for (i = 0; i < units * 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

FN static uint64_t heavy(uint64_t x)
{
	PROFILED();
	return body(5, x);
}

FN static uint64_t medium(uint64_t x)
{
	PROFILED();
	return body(3, x);
}

FN static uint64_t light(uint64_t x)
{
	PROFILED();
	return body(2, x);
}

FN static void run_split(uint64_t scale)
{
	PROFILED();
	uint64_t x = 7, r;

	for (r = 0; r < scale * 10; r++) {
		x = heavy(x);
		x = medium(x);
		x = light(x);
	}
	sink = x;
	printf("truth heavy=50 medium=30 light=20 ");
}

/* ---- appel: f and g share is_prime --------------------------------------- */

static uint64_t steps_f, steps_g;

FN static int is_prime(uint64_t n, uint64_t *steps)
{
	PROFILED();
	uint64_t d, s = 0;
	int r = n >= 2;

	for (d = 2; d * d <= n; d++) {
		s++;
		if (n % d == 0) {
			r = 0;
			break;
		}
	}
	*steps += s;
	return r;
}

FN static int f(uint64_t i)
{
	PROFILED();
	/* large primes: about sqrt(n) divisions */
	static const uint64_t big[] = { 100000007ULL, 100000037ULL,
					100000039ULL, 100000049ULL };

	int r = is_prime(big[i & 3], &steps_f);

	sink += (uint64_t)r;	/* no tail call: f stays on the stack */
	return r;
}

FN static int g(uint64_t i)
{
	PROFILED();
	/* small numbers: a handful of divisions */
	int r = is_prime(11 + (i & 7), &steps_g);

	sink += (uint64_t)r;
	return r;
}

FN static void run_appel(uint64_t scale)
{
	PROFILED();
	uint64_t i;
	int n = 0;

	for (i = 0; i < scale * 1000; i++) {
		n += f(i);
		n += g(i);
	}
	sink = (uint64_t)n;
	/* is_prime's work is its loop: the share of iterations under f */
	printf("truth_f_share=%.4f ",
	       100.0 * (double)steps_f / (double)(steps_f + steps_g));
}

int main(int argc, char **argv)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	const char *w = argc > 1 ? argv[1] : "";
	uint64_t scale = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	uint64_t cpu, wall;

	if (!strcmp(w, "spin"))
		run_spin(scale);
	else if (!strcmp(w, "tree"))
		run_tree(scale);
	else if (!strcmp(w, "matrix"))
		run_matrix(scale);
	else if (!strcmp(w, "threads"))
		run_threads(scale);
	else if (!strcmp(w, "split"))
		run_split(scale);
	else if (!strcmp(w, "appel"))
		run_appel(scale);
	else if (!strcmp(w, "switch"))
		run_switch(scale);
	else {
		fprintf(stderr, "usage: %s spin|tree|matrix|threads|split|appel|switch [SCALE]\n",
			argv[0]);
		return 2;
	}
	cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	wall = clock_ns(CLOCK_MONOTONIC) - t0;
	printf("workload=%s work_cpu_ns=%llu cpu_ns=%llu wall_ns=%llu\n", w,
	       (unsigned long long)(cpu - c0), (unsigned long long)cpu,
	       (unsigned long long)wall);
	return 0;
}
