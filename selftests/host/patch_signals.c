// SPDX-License-Identifier: MIT
/*
 * A signal storm over patched calls (test_patch_counts): a timer sends
 * SIGALRM every 20 us while main recurses, and the handler calls patched
 * functions itself, so that handlers land between every two instructions
 * of the patched entries and returns.  Prints how many handlers ran: with
 * N loops, rec's count is 6 N + 4 hits and in_handler's is hits, exactly,
 * or the shadow stack lost a frame (and the program most likely crashed).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long hits, sink;

__attribute__((noinline)) void in_handler(long x)
{
	sink += x;
}

__attribute__((noinline)) long rec(long n)
{
	long r;

	if (n <= 0)
		return 0;
	sink++;
	r = rec(n - 1);
	sink -= r;
	return r + 1;
}

static void handler(int sig)
{
	hits++;
	in_handler(sig);
	sink += rec(3);
}

int main(int argc, char **argv)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo = SIGALRM };
	struct itimerspec it = { { 0, 20000 }, { 0, 20000 } };
	long i, n = argc > 1 ? atol(argv[1]) : 1000000;
	timer_t t;

	signal(SIGALRM, handler);
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) ||
	    timer_settime(t, 0, &it, NULL)) {
		perror("timer");
		return 1;
	}
	for (i = 0; i < n; i++)
		sink += rec(5);
	timer_delete(t);
	printf("%ld %ld\n", n, hits);
	return 0;
}
