// SPDX-License-Identifier: MIT
/*
 * In a VM started by `selftests/vm-run --count-insns --icount` (run by
 * selftests/host/test_vm_icount): the instruction counter counts exactly,
 * and the guest's clock is its instruction count.  TAP on stdout.
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "icount.h"

static int failed, n_test;

static void ok(int cond, const char *what, unsigned long long got,
	       unsigned long long want)
{
	printf("%sok %d - %s (got %llu, want %llu)\n", cond ? "" : "not ",
	       ++n_test, what, got, want);
	failed += !cond;
}

/* A region of exactly 2n + 1 user instructions between the markers. */
static void loop_region(unsigned long n)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x4d490001\n\t"
			 "mov %0, %%rcx\n"
			 "1:\tdec %%rcx\n\t"
			 "jnz 1b\n\t"
			 ".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x4d490002"
			 : : "r"(n) : "rcx", "cc", "memory");
}

/*
 * 20 instructions in one translation block with both markers: counted only
 * if the plugin leaves out what its block holds outside the region.
 */
static void straight_region(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x4d490001\n\t"
			 ".rept 20\n\tinc %%rax\n\t.endr\n\t"
			 ".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x4d490002"
			 : : : "rax", "cc", "memory");
}

/* 10 + 2n + 1 instructions; the blocks of the two markers differ in
 * length before and after them */
static void uneven_region(unsigned long n)
{
	__asm__ volatile(".rept 3\n\tnop\n\t.endr\n\t"
			 ".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x4d490001\n\t"
			 ".rept 10\n\tinc %%rax\n\t.endr\n\t"
			 "mov %0, %%rcx\n"
			 "1:\tdec %%rcx\n\t"
			 "jnz 1b\n\t"
			 ".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x4d490002\n\t"
			 ".rept 7\n\tinc %%rax\n\t.endr"
			 : : "r"(n) : "rax", "rcx", "cc", "memory");
}

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(void)
{
	static const unsigned long ns[] = { 1, 1000, 1000000, 50000000 };
	struct icount c;
	unsigned int i;
	int fd = icount_open();
	uint64_t t0, t1;

	printf("TAP version 13\n1..9\n");
	if (fd < 0) {
		printf("Bail out! no meter.icount port: not in vm-run --count-insns\n");
		return 1;
	}
	/*
	 * The counter counts every user instruction the vCPU runs, any
	 * process's: a process woken meanwhile (once in a few runs, about ten
	 * instructions) must not run inside the regions.  Real-time priority
	 * keeps them out; the regions are far shorter than the RT throttle.
	 */
	if (sched_setscheduler(0, SCHED_FIFO,
			       &(struct sched_param){ .sched_priority = 99 })) {
		printf("Bail out! SCHED_FIFO: %m\n");
		return 1;
	}
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		char what[96];

		loop_region(ns[i]);
		if (icount_read(fd, &c)) {
			printf("Bail out! no report from the plugin\n");
			return 1;
		}
		snprintf(what, sizeof(what),
			 "a loop of %lu iterations is %lu user instructions",
			 ns[i], 2 * ns[i] + 1);
		ok(c.user == 2 * ns[i] + 1 && c.cpu[0][0] == c.user, what,
		   c.user, 2 * ns[i] + 1);
	}
	ICOUNT_BEGIN();
	ICOUNT_END();
	icount_read(fd, &c);
	ok(c.user == 0 && c.kernel == 0,
	   "nothing between the markers counts nothing", c.user + c.kernel, 0);
	straight_region();
	icount_read(fd, &c);
	ok(c.user == 20, "20 instructions between markers in one block count 20",
	   c.user, 20);
	uneven_region(5000);
	icount_read(fd, &c);
	ok(c.user == 10 + 2 * 5000 + 1,
	   "markers in blocks of different shapes: the region's instructions only",
	   c.user, 10 + 2 * 5000 + 1);
	ICOUNT_BEGIN();
	for (i = 0; i < 100; i++)
		getppid();
	ICOUNT_END();
	icount_read(fd, &c);
	ok(c.kernel >= 100 * 20, "100 system calls count kernel instructions",
	   c.kernel, 100 * 20);
	/* guest time is the instruction count (shift 0: 1 ns each) */
	t0 = thread_ns();
	loop_region(100000000);
	t1 = thread_ns();
	icount_read(fd, &c);
	ok(llabs((long long)(t1 - t0) - (long long)(c.user + c.kernel)) <=
	   (long long)(c.user + c.kernel) / 100,
	   "-icount: the thread's CPU time is its instruction count, in ns (1%)",
	   t1 - t0, c.user + c.kernel);
	return failed ? 1 : 0;
}
