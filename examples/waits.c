// SPDX-License-Identifier: MIT
/*
 * waits: a program that spends most of its life waiting, the example of
 * the wall clock (meter-run --clock wall).
 *
 *   waits [ROUNDS]     ROUNDS rounds (default 5)
 *
 * Each round, main() waits 100 ms for input that does not come
 * (wait_input(), a poll() on an empty pipe) and handles it: parse()
 * computes about 50 ms.  Then a second thread, updater(), which waited
 * for main meanwhile, takes the table's lock and computes about 50 ms in
 * update() with it held, while main's lookup() waits for that lock.
 * Profiled on CPU time, the program is parse() and update(); on
 * wall-clock time wait_input(), lookup() and updater() appear, blocked.
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <meter.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t phase_cond = PTHREAD_COND_INITIALIZER;
static int phase;	/* 1: main is ready for a lookup; 2: table locked */
static volatile uint64_t sink;

static void set_phase(int p)
{
	pthread_mutex_lock(&phase_lock);
	phase = p;
	pthread_cond_broadcast(&phase_cond);
	pthread_mutex_unlock(&phase_lock);
}

static void await_phase(int p)
{
	pthread_mutex_lock(&phase_lock);
	while (phase != p)
		pthread_cond_wait(&phase_cond, &phase_lock);
	pthread_mutex_unlock(&phase_lock);
}

/* ms of the calling thread's CPU time */
static void compute(long ms)
{
	struct timespec t0, t;
	uint64_t x = sink;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	sink = x;
}

static void __attribute__((noinline)) wait_input(int fd)
{
	METER_FUNCTION();
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	poll(&pfd, 1, 100);
}

static void __attribute__((noinline)) parse(void)
{
	METER_FUNCTION();
	compute(50);
}

static void __attribute__((noinline)) lookup(void)
{
	METER_FUNCTION();
	pthread_mutex_lock(&table_lock);
	sink++;
	pthread_mutex_unlock(&table_lock);
}

static void __attribute__((noinline)) update(void)
{
	METER_FUNCTION();
	compute(50);
}

/* The second thread: waits for each round, then updates the table. */
static void *__attribute__((noinline)) updater(void *arg)
{
	METER_FUNCTION();
	long rounds = (long)arg;

	for (long r = 1; r <= rounds; r++) {
		await_phase(1);
		pthread_mutex_lock(&table_lock);
		set_phase(2);
		update();
		pthread_mutex_unlock(&table_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	METER_FUNCTION();
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 5;
	pthread_t t;
	int fds[2];

	if (rounds < 1 || pipe(fds)) {
		fprintf(stderr, "usage: waits [ROUNDS >= 1]\n");
		return 2;
	}
	pthread_create(&t, NULL, updater, (void *)rounds);
	for (long r = 1; r <= rounds; r++) {
		wait_input(fds[0]);
		parse();
		set_phase(1);
		await_phase(2);
		lookup();
		set_phase(0);
	}
	pthread_join(t, NULL);
	printf("waits: %ld rounds\n", rounds);
	return 0;
}
