// SPDX-License-Identifier: MIT
/*
 * pool: a thread pool, the example of threads by name and of idle threads
 * set aside (meter-run --threads, --clock wall --hide-idle).
 *
 *   pool [JOBS]     JOBS jobs (default 40) for three workers
 *
 * main() queues the jobs; three workers, named worker-0 to worker-2 with
 * pthread_setname_np, each take a job from the queue (take_job(), which
 * waits on a condition variable while the queue is empty) and run it:
 * compress() computes about 10 ms, checksum() about 2 ms.  A fourth
 * thread, the watchdog, sleeps until the pool is done: on CPU time it is
 * nothing, on wall-clock time it is the whole run, blocked.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <meter.h>

#define WORKERS 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static long queued, taken, done_jobs;
static int closed;
static volatile uint64_t sink;

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

static void __attribute__((noinline)) compress(void)
{
	METER_FUNCTION();
	compute(10);
}

static void __attribute__((noinline)) checksum(void)
{
	METER_FUNCTION();
	compute(2);
}

/* 1 with a job taken, 0 when the queue is closed and empty */
static int __attribute__((noinline)) take_job(void)
{
	METER_FUNCTION();
	int got = 0;

	pthread_mutex_lock(&lock);
	while (taken == queued && !closed)
		pthread_cond_wait(&more, &lock);
	if (taken < queued) {
		taken++;
		got = 1;
	}
	pthread_mutex_unlock(&lock);
	return got;
}

static void *__attribute__((noinline)) worker(void *arg)
{
	METER_FUNCTION();
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	while (take_job()) {
		compress();
		checksum();
		pthread_mutex_lock(&lock);
		done_jobs++;
		pthread_cond_broadcast(&more);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

/* Sleeps until the pool has closed and drained. */
static void *__attribute__((noinline)) watchdog(void *arg)
{
	METER_FUNCTION();

	(void)arg;
	pthread_setname_np(pthread_self(), "watchdog");
	pthread_mutex_lock(&lock);
	while (!closed || done_jobs < queued)
		pthread_cond_wait(&more, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	METER_FUNCTION();
	long jobs = argc > 1 ? strtol(argv[1], NULL, 10) : 40;
	pthread_t t[WORKERS + 1];
	long i;

	if (jobs < 1) {
		fprintf(stderr, "usage: pool [JOBS >= 1]\n");
		return 2;
	}
	pthread_create(&t[WORKERS], NULL, watchdog, NULL);
	for (i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < jobs; i++) {
		pthread_mutex_lock(&lock);
		queued++;
		pthread_cond_broadcast(&more);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	closed = 1;
	pthread_cond_broadcast(&more);
	pthread_mutex_unlock(&lock);
	for (i = 0; i <= WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("pool: %ld jobs, %d workers\n", jobs, WORKERS);
	return 0;
}
