// SPDX-License-Identifier: MIT
/*
 * The program libmeter's tests profile.  Built three ways from this one
 * source: -DMODE_MANUAL (METER_FUNCTION), -finstrument-functions (automatic)
 * and -DMODE_API (meter_record_register/meter_enter/meter_leave), so that
 * the tests can check that the three give the same profile.
 *
 *   lib_workload counts N        top() N times: mid 3N-ish, leaf known
 *   lib_workload threads T N     T threads, each calls leaf() N times
 *   lib_workload longnames       records of 300-byte names differing at
 *                                the end, entered 3 and 5 times, and of
 *                                3000-byte names, 7 and 11 times
 *   lib_workload named N         N threads (at most 8) named worker-0..,
 *                                each spins 20 ms
 *   lib_workload short T MS      T threads one after the other, each spins
 *                                MS ms of its CPU time
 *   lib_workload churn T N       T threads one after the other, each calls
 *                                leaf() N times
 *   lib_workload spin MS         a() -> b() -> spin() MS ms; c() -> spin() MS ms
 *   lib_workload longjmp K D     K times: recurse D deep and longjmp out
 *   lib_workload siblings K MS [D]  K times, from one call site through
 *                                a pointer: thrower() longjmps back (from
 *                                D frames of fall() deep, if given), then
 *                                runner() spins MS ms in spin()
 *   lib_workload siblings_libc K MS  the same, thrower() calling the C
 *                                library's longjmp itself, not libmeter's
 *   lib_workload deep D MS       recurse D deep, spin MS ms at the bottom
 *   lib_workload fork_exit N     as fork, the child leaves with _exit()
 *   lib_workload vfork N         N times: leaf(), a vfork child _exit()s
 *   lib_workload deepback D MS   recurse D deep; the bottom calls spin(0),
 *                                which returns at once, then burns MS ms
 *                                itself
 *   lib_workload fork N          leaf() N times, fork; child: leaf() 2N times,
 *                                spins 100 ms, exit()s
 *   lib_workload forkbusy K      4 threads call leaf() until told to stop;
 *                                meanwhile fork K children, each calls
 *                                leaf() 100 times and exits
 *   lib_workload inlined N       outer_inl() N times; it calls inl_small()
 *                                (always inlined, profiled) twice, then
 *                                spins 100 ms inside the second one
 *   lib_workload alloc N         allocator(): N x (malloc 100, calloc 10x10,
 *                                realloc to 200)
 *   lib_workload wall MS         wait_io() waits MS ms for a pipe that stays
 *                                empty; burn() spins MS ms of CPU
 *   lib_workload mutex MS        a thread takes a lock and holds it while
 *                                holder() spins MS ms; main's wait_lock()
 *                                blocks on the lock meanwhile
 *   lib_workload pages N         leaf() N times in main and in a thread,
 *                                which then prints what libmeter's memory
 *                                is made of (print_pages())
 *
 * Prints "depth=N" (the shadow-stack depth seen from main) at the end, so
 * that tests can check the stack came back right.
 */
#include <dlfcn.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "meter.h"

#if defined(MODE_MANUAL)
#define PROFILED(name) METER_FUNCTION()
#elif defined(MODE_API)
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { const char *name; meter_record_t *rec; } api_recs[32];

static meter_record_t *api_enter(const char *name)
{
	meter_record_t *r = NULL;
	int i;

	pthread_mutex_lock(&api_lock);
	for (i = 0; i < 32 && api_recs[i].name; i++)
		if (!strcmp(api_recs[i].name, name))
			break;
	if (i < 32 && !api_recs[i].name) {
		api_recs[i].name = name;
		api_recs[i].rec = meter_record_register(name);
	}
	if (i < 32)
		r = api_recs[i].rec;
	pthread_mutex_unlock(&api_lock);
	meter_enter(r);
	return r;
}

static void api_leave(meter_record_t **r)
{
	meter_leave(*r);
}
#define PROFILED(name)							\
	meter_record_t *api_rec__ __attribute__((cleanup(api_leave))) =	\
		api_enter(#name)
#else
#define PROFILED(name) do { } while (0)
#endif

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;

__attribute__((no_instrument_function)) static unsigned long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000 + (unsigned long)ts.tv_nsec / 1000000;
}

NOINLINE static int leaf(int x)
{
	PROFILED(leaf);
	sink += (unsigned long)x;
	return x + 1;
}

NOINLINE static int mid(int x)
{
	PROFILED(mid);
	int i, s = 0;

	for (i = 0; i < 3; i++)
		s += leaf(x + i);
	return s;
}

NOINLINE static int top(int x)
{
	PROFILED(top);
	return mid(x) + leaf(x);
}

NOINLINE static void spin(unsigned long ms)
{
	PROFILED(spin);
	unsigned long end = now_ms() + ms;

	while (now_ms() < end)
		sink++;
}

NOINLINE static void b(unsigned long ms)
{
	PROFILED(b);
	spin(ms);
}

NOINLINE static void a(unsigned long ms)
{
	PROFILED(a);
	b(ms);
}

NOINLINE static void c(unsigned long ms)
{
	PROFILED(c);
	spin(ms);
}

static jmp_buf jb;
static volatile int do_jump = 1;

/* Not profiled: the longjmp leaves from inside the deepest recurse(). */
NOINLINE __attribute__((no_instrument_function)) static void jump_out(void)
{
	longjmp(jb, 1);
}

NOINLINE static void recurse(int d)
{
	PROFILED(recurse);
	if (d > 1)
		recurse(d - 1);
	else if (do_jump)
		jump_out();
	sink++;
}

NOINLINE static void jumper(int d)
{
	PROFILED(jumper);
	if (!setjmp(jb))
		recurse(d);
	leaf(d);
}

/*
 * dispatcher() calls thrower() and runner() from one call site, so that
 * runner's frame is where the frame thrower's longjmp left lies.
 */
static jmp_buf sib_jb;
static void (*sib_longjmp)(struct __jmp_buf_tag *, int) = longjmp;

static int sib_depth;

NOINLINE static void fall(int d)
{
	PROFILED(fall);
	if (d > 1)
		fall(d - 1);
	sib_longjmp(sib_jb, 1);
}

NOINLINE static void thrower(unsigned long ms)
{
	PROFILED(thrower);
	sink += ms;
	if (sib_depth)
		fall(sib_depth);
	sib_longjmp(sib_jb, 1);
	abort();
}

/* The C library's longjmp, which libmeter's stands in front of. */
static int use_libc_longjmp(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	sib_longjmp = libc ? (void (*)(struct __jmp_buf_tag *, int))
		      dlsym(libc, "longjmp") : NULL;
	return sib_longjmp && sib_longjmp != longjmp ? 0 : -1;
}

NOINLINE static void runner(unsigned long ms)
{
	PROFILED(runner);
	spin(ms);
}

static void (*volatile sib_calls[2])(unsigned long) = { thrower, runner };

NOINLINE static void dispatcher(int k, unsigned long ms)
{
	PROFILED(dispatcher);
	volatile int i;

	for (i = 0; i < 2 * k; i++)
		if (!setjmp(sib_jb))
			sib_calls[i & 1](ms);
}

NOINLINE static void deep(int d, unsigned long ms)
{
	PROFILED(deep);
	if (d > 1)
		deep(d - 1, ms);
	else
		spin(ms);
	sink++;
}

/* The child shares this process's memory until it leaves with _exit. */
NOINLINE static pid_t vfork_child_exits(void)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(0);
	return pid;
}

NOINLINE static int vfork_children(long n)
{
	long k;
	int st;

	for (k = 0; k < n; k++) {
		pid_t pid;

		leaf((int)k);
		pid = vfork_child_exits();
		if (pid < 0 || waitpid(pid, &st, 0) < 0)
			return 1;
	}
	return 0;
}

/* The bottom's own time comes after a call returns past the capacity. */
NOINLINE static void deepback(int d, unsigned long ms)
{
	PROFILED(deepback);
	unsigned long end;

	if (d > 1) {
		deepback(d - 1, ms);
	} else {
		/*
		 * No time of its own: a VM whose host is busy stalls for tens
		 * of ms, and a stall is charged to whatever is current (a
		 * spin(1) got 29 of 240 samples so).
		 */
		spin(0);
		end = now_ms() + ms;
		while (now_ms() < end)
			sink++;
	}
	sink++;
}

NOINLINE static void allocator(long n)
{
	PROFILED(allocator);
	long i;

	for (i = 0; i < n; i++) {
		char *p = malloc(100), *q = calloc(10, 10), *r;

		r = realloc(p, 200);
		sink += (unsigned long)(r != NULL) + (unsigned long)(q != NULL);
		free(q);
		free(r);
	}
}

static inline __attribute__((always_inline)) int inl_small(int x, int burn)
{
	PROFILED(inl_small);
	if (burn)
		spin(100);
	sink += (unsigned long)x;
	return x * 2;
}

NOINLINE static int outer_inl(int x, int last)
{
	PROFILED(outer_inl);
	return inl_small(x, 0) + inl_small(x + 1, last);
}

/* Blocks in poll() on a pipe nobody writes: a wait for I/O. */
NOINLINE static void wait_io(unsigned long ms)
{
	PROFILED(wait_io);
	struct pollfd pfd = { .events = POLLIN };
	int fds[2];

	if (pipe(fds))
		return;
	pfd.fd = fds[0];
	poll(&pfd, 1, (int)ms);
	close(fds[0]);
	close(fds[1]);
}

NOINLINE static void burn(unsigned long ms)
{
	PROFILED(burn);
	spin(ms);
}

static pthread_mutex_t lock_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int lock_taken;

NOINLINE static void *holder(void *arg)
{
	PROFILED(holder);
	pthread_mutex_lock(&lock_held);
	pthread_mutex_lock(&ready_lock);
	lock_taken = 1;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
	spin((unsigned long)arg);
	pthread_mutex_unlock(&lock_held);
	return NULL;
}

NOINLINE static void wait_lock(void)
{
	PROFILED(wait_lock);
	pthread_mutex_lock(&lock_held);
	pthread_mutex_unlock(&lock_held);
}

static volatile int stop_busy;

NOINLINE static void *busy(void *arg)
{
	PROFILED(busy);
	(void)arg;
	while (!stop_busy)
		leaf(1);
	return NULL;
}

static int per_thread;

NOINLINE static void *worker(void *arg)
{
	PROFILED(worker);
	int i;

	(void)arg;
	for (i = 0; i < per_thread; i++)
		leaf(i);
	return NULL;
}

/*
 * Records whose names differ only in their last bytes: two of 300 bytes,
 * entered 3 and 5 times, and two of 3000 bytes (past what meter.ko keeps),
 * entered 7 and 11 times (the explicit API).
 */
__attribute__((no_instrument_function)) static void longnames(void)
{
	static const int len[4] = { 300, 300, 3000, 3000 };
	static const int times[4] = { 3, 5, 7, 11 };
	static char name[3010];
	meter_record_t *r[4];
	int i, k;

	for (k = 0; k < 4; k++) {
		memset(name, 'x', len[k]);
		snprintf(name + len[k], sizeof(name) - len[k], "_%c", 'a' + k);
		r[k] = meter_record_register(name);
	}
	for (k = 0; k < 4; k++)
		for (i = 0; i < times[k]; i++) {
			meter_enter(r[k]);
			sink++;
			meter_leave(r[k]);
		}
}

/* Names itself "worker-N" (after its first profiled call), then spins. */
NOINLINE static void *named_worker(void *arg)
{
	PROFILED(named_worker);
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	spin(20);
	return NULL;
}

static unsigned long threads_cpu_us;

NOINLINE static void *spinner(void *arg)
{
	PROFILED(spinner);
	struct timespec ts;

	spin((unsigned long)(long)arg);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	__atomic_fetch_add(&threads_cpu_us, (unsigned long)ts.tv_sec *
			   1000000 + (unsigned long)ts.tv_nsec / 1000,
			   __ATOMIC_RELAXED);
	return NULL;
}

__attribute__((no_instrument_function)) static unsigned depth_now(void)
{
	const struct meter__page_hdr *pg =
		(const struct meter__page_hdr *)meter__tls.page;

	return pg ? pg->depth : 0;
}

/*
 * What libmeter's memory is made of (/proc/self/smaps): the anonymous huge
 * pages in its mappings (text, data, .bss) and in the blocks of main and
 * of the calling thread ("libmeter's AnonHugePages: N kB in P
 * segments"), not the process's at large (on 6.1 a thread's stack may get
 * one, whatever libmeter does); and how many of the mappings that hold
 * those blocks and the unregistered threads' block carry the small-page
 * advice ("nh": "small-page advice on K of M mappings").
 */
struct span {
	uintptr_t lo, hi;
};
static struct span segs[8], blocks[3];
static int nsegs;
static const void *main_block;

__attribute__((no_instrument_function)) static int
libmeter_segs(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	if (!strstr(info->dlpi_name, "libmeter.so"))
		return 0;
	for (i = 0; i < info->dlpi_phnum && nsegs < 8; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			segs[nsegs++] = (struct span){
				info->dlpi_addr + info->dlpi_phdr[i].p_vaddr,
				info->dlpi_addr + info->dlpi_phdr[i].p_vaddr +
				info->dlpi_phdr[i].p_memsz };
	return 1;
}

/* an object's whole pages, which the advice covers */
__attribute__((no_instrument_function)) static struct span
whole_pages(const void *p, size_t n)
{
	uintptr_t pg = (uintptr_t)getpagesize();

	return (struct span){ ((uintptr_t)p + pg - 1) & ~(pg - 1),
			      ((uintptr_t)p + n) & ~(pg - 1) };
}

__attribute__((no_instrument_function)) static bool
overlaps(const struct span *v, int n, uintptr_t lo, uintptr_t hi)
{
	bool any = false;
	int i;

	for (i = 0; i < n; i++)
		any |= lo < v[i].hi && v[i].lo < hi;
	return any;
}

__attribute__((no_instrument_function)) static void print_pages(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long lo, hi, kb, huge = 0, maps = 0, advised = 0;
	bool ours = false, held = false;
	char line[512];

	nsegs = 0;
	dl_iterate_phdr(libmeter_segs, NULL);
	blocks[0] = whole_pages(main_block, METER__BLOCK_BYTES);
	blocks[1] = whole_pages(meter__tls.page, METER__BLOCK_BYTES);
	blocks[2] = whole_pages(dlsym(RTLD_DEFAULT, METER__NO_BLOCK_SYMBOL),
				METER__BLOCK_BYTES);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			held = overlaps(blocks, 3, lo, hi);
			ours = held || overlaps(segs, nsegs, lo, hi);
			maps += held;
		} else if (ours &&
			   sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
			huge += kb;
		} else if (held && !strncmp(line, "VmFlags:", 8)) {
			advised += strstr(line, " nh") != NULL;
		}
	}
	if (f)
		fclose(f);
	printf("libmeter's AnonHugePages: %lu kB in %d segments\n", huge,
	       nsegs);
	printf("small-page advice on %lu of %lu mappings\n", advised, maps);
}

NOINLINE static void *pages_worker(void *arg)
{
	PROFILED(pages_worker);
	long i, n = (long)arg;

	for (i = 0; i < n; i++)
		leaf((int)i);
	print_pages();
	return NULL;
}

/* the "pages" command: n calls in main, n in a thread, which reports */
NOINLINE static void pages(long n)
{
	PROFILED(pages);
	pthread_t t;
	long i;

	for (i = 0; i < n; i++)
		leaf((int)i);
	main_block = meter__tls.page;
	pthread_create(&t, NULL, pages_worker, (void *)n);
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	PROFILED(main);
	const char *cmd = argc > 1 ? argv[1] : "counts";
	long n = argc > 2 ? atol(argv[2]) : 1000;
	long m = argc > 3 ? atol(argv[3]) : 0;
	long i;

	if (!strcmp(cmd, "counts")) {
		for (i = 0; i < n; i++)
			top((int)i);
	} else if (!strcmp(cmd, "threads")) {
		pthread_t t[64];

		per_thread = (int)m;
		for (i = 0; i < n && i < 64; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (i = 0; i < n && i < 64; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(cmd, "pages")) {
		pages(n);
	} else if (!strcmp(cmd, "longnames")) {
		longnames();
	} else if (!strcmp(cmd, "named")) {
		pthread_t t[8];

		for (i = 0; i < n && i < 8; i++)
			pthread_create(&t[i], NULL, named_worker, (void *)i);
		for (i = 0; i < n && i < 8; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(cmd, "short")) {
		pthread_t t;

		for (i = 0; i < n; i++) {
			pthread_create(&t, NULL, spinner, (void *)(long)m);
			pthread_join(t, NULL);
		}
		/* the CPU time the threads used, for the test to compare */
		printf("threads_cpu_us=%lu\n", threads_cpu_us);
	} else if (!strcmp(cmd, "churn")) {
		pthread_t t;

		per_thread = (int)m;
		for (i = 0; i < n; i++) {
			pthread_create(&t, NULL, worker, NULL);
			pthread_join(t, NULL);
		}
	} else if (!strcmp(cmd, "spin")) {
		a((unsigned long)n);
		c((unsigned long)n);
	} else if (!strcmp(cmd, "longjmp")) {
		for (i = 0; i < n; i++)
			jumper((int)m);
		spin(50);
	} else if (!strcmp(cmd, "siblings")) {
		sib_depth = argc > 4 ? atoi(argv[4]) : 0;
		dispatcher((int)n, (unsigned long)m);
	} else if (!strcmp(cmd, "siblings_libc")) {
		if (use_libc_longjmp())
			return 1;
		dispatcher((int)n, (unsigned long)m);
	} else if (!strcmp(cmd, "deep")) {
		deep((int)n, (unsigned long)m);
	} else if (!strcmp(cmd, "deepback")) {
		deepback((int)n, (unsigned long)m);
	} else if (!strcmp(cmd, "vfork")) {
		if (vfork_children(n))
			return 1;
		spin(50);
	} else if (!strcmp(cmd, "forkbusy")) {
		pthread_t t[4];
		int st, bad = 0;

		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, busy, NULL);
		for (i = 0; i < n; i++) {
			pid_t pid;
			int j;

			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				for (j = 0; j < 100; j++)
					leaf(j);
				exit(0);
			}
			if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
			    WEXITSTATUS(st))
				bad++;
		}
		stop_busy = 1;
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("children_failed=%d\n", bad);
	} else if (!strcmp(cmd, "inlined")) {
		for (i = 0; i < n; i++)
			outer_inl((int)i, i == n - 1);
	} else if (!strcmp(cmd, "alloc")) {
		allocator(n);
	} else if (!strcmp(cmd, "wall")) {
		wait_io((unsigned long)n);
		burn((unsigned long)n);
	} else if (!strcmp(cmd, "mutex")) {
		pthread_t t;

		pthread_create(&t, NULL, holder, (void *)(unsigned long)n);
		pthread_mutex_lock(&ready_lock);
		while (!lock_taken)
			pthread_cond_wait(&ready_cond, &ready_lock);
		pthread_mutex_unlock(&ready_lock);
		wait_lock();
		pthread_join(t, NULL);
	} else if (!strcmp(cmd, "fork") || !strcmp(cmd, "fork_exit")) {
		pid_t pid;
		int st;

		for (i = 0; i < n; i++)
			leaf((int)i);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			for (i = 0; i < 2 * n; i++)
				leaf((int)i);
			spin(100);
			if (!strcmp(cmd, "fork"))
				exit(0);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
		printf("child=%d\n", (int)pid);
	}
	printf("depth=%u\n", depth_now());
	return 0;
}
