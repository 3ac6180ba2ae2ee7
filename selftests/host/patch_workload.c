// SPDX-License-Identifier: MIT
/*
 * A program built as users build (-O2 -g, no meter flags) for meter-run
 * --patch (test_patch_counts): recursion, longjmp and siglongjmp out of
 * patched frames, both past the shadow stack's page (1008 frames), a tail
 * call, a signal handler, threads, and fork (the child returning through
 * a caught return before it calls anything), each a corner where a
 * patched entry or a caught return could go wrong; and
 * burn(ARGV[1] iterations), where the samples go.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf jb;
static sigjmp_buf sjb;
long sink;

__attribute__((noinline)) long rec(long n)
{
	long r;

	if (n <= 0)
		return 0;
	sink += n;
	r = rec(n - 1);
	sink -= r;
	return r + 1;
}

__attribute__((noinline)) void deep_jump(int n)
{
	if (n == 0)
		longjmp(jb, 1);
	deep_jump(n - 1);
	sink++;
}

__attribute__((noinline)) void deep_sigjump(int n)
{
	if (n == 0)
		siglongjmp(sjb, 1);
	deep_sigjump(n - 1);
	sink++;
}

/* deeper than the page's 1008 frames: the return addresses kept apart */
__attribute__((noinline)) long deep_rec(long n)
{
	long r;

	if (n <= 0)
		return 0;
	r = deep_rec(n - 1);
	sink ^= r;
	return r + 1;
}

__attribute__((noinline)) long tail_target(long x)
{
	sink += x;
	return x * 2 + sink % 3;
}

/* entered by a jump from tail_caller at -O2: a call all the same */
__attribute__((noinline)) long tail_caller(long x)
{
	return tail_target(x + 1);
}

__attribute__((noinline)) void in_handler(int x)
{
	sink += x;
}

static void handler(int sig)
{
	in_handler(sig);
}

__attribute__((noinline)) void *worker(void *arg)
{
	long i, n = (long)arg;

	for (i = 0; i < n; i++)
		__atomic_fetch_add(&sink, rec(10), __ATOMIC_RELAXED);
	/* past the page's frames, then the thread ends */
	__atomic_fetch_add(&sink, deep_rec(1200), __ATOMIC_RELAXED);
	return NULL;
}

/* most of the CPU time: the samples' function */
__attribute__((noinline)) long burn(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += (i ^ (i >> 3)) % 7;
	return s;
}

__attribute__((noinline)) long child_work(long n)
{
	return rec(n);
}

/* both processes return from it: the child before registering */
__attribute__((noinline)) int forked(void)
{
	int pid = fork();

	sink++;
	return pid;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	long i;
	int st;

	for (i = 0; i < 100; i++)
		sink += rec(20);
	sink += burn(argc > 1 ? atol(argv[1]) : 1000);
	for (i = 0; i < 50; i++)
		if (!setjmp(jb))
			deep_jump(10);
	for (i = 0; i < 50; i++)
		if (!sigsetjmp(sjb, 1))
			deep_sigjump(7);
	for (i = 0; i < 5; i++)
		sink += deep_rec(2500);
	for (i = 0; i < 3; i++)
		if (!setjmp(jb))
			deep_jump(1500);
	for (i = 0; i < 1000; i++)
		sink += tail_caller(i);
	signal(SIGUSR1, handler);
	for (i = 0; i < 20; i++)
		raise(SIGUSR1);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)100);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	if (forked() == 0) {
		sink += child_work(5);
		_exit(0);
	}
	wait(&st);
	printf("done\n");
	return 0;
}
