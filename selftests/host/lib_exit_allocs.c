// SPDX-License-Identifier: MIT
/*
 * What libmeter allocates as a thread and the process end, seen from the
 * program: malloc, calloc and realloc are this program's own (they take
 * the place of the C library's for libmeter and libnl too) and forward to
 * glibc's.  One of 1 KiB or more once a thread's start routine or main has
 * returned makes glibc merge the small chunks the program freed first
 * (malloc_consolidate): each is written to stderr as "large: N".
 *
 *   lib_exit_allocs N   N small chunks allocated and freed, by a thread
 *                       and by main
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t sz);
extern void *__libc_realloc(void *p, size_t n);

/* glibc's smallest request it serves from its large bins */
#define LARGE 1008

static volatile int process_ending;
static __thread int thread_ending;

#define UNMETERED __attribute__((no_instrument_function))

static UNMETERED void note(size_t n)
{
	char b[48];
	int len;

	if (n < LARGE || (!process_ending && !thread_ending))
		return;
	len = snprintf(b, sizeof(b), "large: %zu\n", n);
	if (write(2, b, (size_t)len) < 0)
		return;
}

UNMETERED void *malloc(size_t n)
{
	note(n);
	return __libc_malloc(n);
}

UNMETERED void *calloc(size_t n, size_t sz)
{
	note(n * sz);
	return __libc_calloc(n, sz);
}

UNMETERED void *realloc(void *p, size_t n)
{
	note(n);
	return __libc_realloc(p, n);
}

static volatile unsigned long sink;

__attribute__((noinline)) static void churn(unsigned long n)
{
	void **v = __libc_malloc(n * sizeof(*v));
	unsigned long i;

	if (!v)
		exit(1);
	for (i = 0; i < n; i++)
		v[i] = __libc_malloc(16 + i % 64);
	for (i = 0; i < n; i++) {
		sink += (unsigned long)v[i] & 0xff;
		free(v[i]);
	}
	free(v);
}

static void *worker(void *arg)
{
	churn((unsigned long)arg);
	thread_ending = 1;
	return NULL;
}

static void at_end(void)
{
	process_ending = 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	pthread_t t;

	if (pthread_create(&t, NULL, worker, (void *)n) ||
	    pthread_join(t, NULL))
		return 1;
	churn(n);
	printf("churned %lu\n", n);
	fflush(stdout);
	/* after stdout's buffer, before libmeter's destructor */
	atexit(at_end);
	return 0;
}
