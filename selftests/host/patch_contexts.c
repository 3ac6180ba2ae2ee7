// SPDX-License-Identifier: MIT
/*
 * Patched functions on other stacks (test_patch_counts): coroutines
 * (makecontext and swapcontext) that call and return across the switches,
 * and a signal handler on an alternate stack (sigaltstack), each with the
 * other stack placed below the thread's and then above it, so that frames
 * of one stack look stale from the other.  Each function counts its own
 * calls and the program prints "name count" lines for the profile's to
 * be compared with; a return meter loses track of aborts the program.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define STACK_LEN	(256 * 1024)

static long n_step, n_coro_body, n_leaf, n_on_alt, n_run;
static volatile long sink;
static ucontext_t main_ctx, coro_ctx;

__attribute__((noinline)) long leaf(long x)
{
	n_leaf++;
	sink += x;
	return x + 1;
}

/* called on the coroutine's stack; suspends in the middle */
__attribute__((noinline)) long step(long x)
{
	long r;

	n_step++;
	r = leaf(x);
	swapcontext(&coro_ctx, &main_ctx);
	return r + leaf(x);
}

__attribute__((noinline)) void coro_body(void)
{
	long i;

	n_coro_body++;
	for (i = 0; i < 100; i++)
		sink += step(i);
}

__attribute__((noinline)) void on_alt(int sig)
{
	n_on_alt++;
	sink += leaf(sig);
}

/* the thread's side: switches to the coroutine from inside patched frames */
__attribute__((noinline)) long run(char *coro_stack)
{
	stack_t ss = { .ss_sp = NULL, .ss_size = STACK_LEN };
	struct sigaction sa;
	long i;

	n_run++;
	getcontext(&coro_ctx);
	coro_ctx.uc_stack.ss_sp = coro_stack;
	coro_ctx.uc_stack.ss_size = STACK_LEN;
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, coro_body, 0);
	for (i = 0; i <= 100; i++) {
		sink += leaf(i);
		swapcontext(&main_ctx, &coro_ctx);
	}
	ss.ss_sp = coro_stack;		/* done with it: the handler's now */
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alt;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < 50; i++) {
		sink += leaf(i);
		raise(SIGUSR1);
	}
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return sink;
}

static void *thread_main(void *arg)
{
	run(arg);
	return NULL;
}

/* run() on a thread whose stack lies below (or above) the other one */
static void on_thread(char *thread_stack, char *other)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, thread_stack, 4 * STACK_LEN);
	if (pthread_create(&t, &attr, thread_main, other)) {
		perror("pthread_create");
		exit(1);
	}
	pthread_join(t, NULL);
}

int main(void)
{
	char *a = mmap(NULL, 5 * STACK_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b = mmap(NULL, 5 * STACK_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *lo = a < b ? a : b, *hi = a < b ? b : a;

	if (a == MAP_FAILED || b == MAP_FAILED)
		return 1;
	run(lo);			/* the other stack below the thread's */
	on_thread(lo, hi);		/* above it */
	on_thread(hi, lo);		/* below it */
	printf("step %ld\ncoro_body %ld\nleaf %ld\non_alt %ld\nrun %ld\n",
	       n_step, n_coro_body, n_leaf, n_on_alt, n_run);
	return 0;
}
