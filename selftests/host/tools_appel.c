// SPDX-License-Identifier: MIT
/*
 * Appel's example, instrumented with libmeter: f and g call is_prime
 * equally often, f with large primes (expensive calls), g with small ones
 * (cheap calls).  A profiler that apportions is_prime's time by call
 * counts charges half of it to each; meter charges it to f.
 *
 *   tools_appel [ROUNDS [fork]]     (default 1000)
 *   tools_appel ROUNDS server JOBS
 *   tools_appel ROUNDS exec PROG [ARG...]
 *   tools_appel ROUNDS execl|execle|execlp|execv PROG
 *
 * With "fork", a forked child does the ROUNDS again (in child_rounds),
 * for the tests of --follow-fork.  "server" is a forking server: after
 * its own ROUNDS it forks a worker per job, two at a time, each doing the
 * ROUNDS in child_rounds and exiting.  "exec" runs PROG in its place
 * after its own ROUNDS.
 *
 * Used by the tools' host tests (signal backend) and VM tests (kernel).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "meter.h"

/* Built twice: manual (METER_FUNCTION) and -finstrument-functions. */
#ifdef APPEL_AUTO
#define PROFILED()
#else
#define PROFILED() METER_FUNCTION()
#endif

extern char **environ;

static volatile unsigned long sink;

__attribute__((noinline)) static int is_prime(unsigned long n)
{
	unsigned long i;

	PROFILED();
	if (n < 2)
		return 0;
	for (i = 2; i * i <= n; i++)
		if (n % i == 0)
			return 0;
	return 1;
}

/* Expensive calls: primes near 10^10 take ~10^5 divisions each. */
__attribute__((noinline)) static void f(void)
{
	PROFILED();
	sink += (unsigned long)is_prime(9999999967UL);
}

/* Cheap calls: a small prime. */
__attribute__((noinline)) static void g(void)
{
	PROFILED();
	sink += (unsigned long)is_prime(101UL);
}

__attribute__((noinline)) static void child_rounds(long rounds)
{
	long i;

	PROFILED();
	for (i = 0; i < rounds; i++) {
		f();
		g();
	}
}

/* jobs workers, two at a time; each exits after its job. */
static int serve(long rounds, long jobs)
{
	long started = 0, running = 0;
	int st, bad = 0;

	fflush(stdout);
	while (started < jobs || running) {
		if (started < jobs && running < 2) {
			pid_t pid = fork();

			if (pid == 0) {
				child_rounds(rounds);
				exit(0);
			}
			if (pid < 0)
				return 1;
			started++;
			running++;
			continue;
		}
		if (wait(&st) < 0)
			return 1;
		running--;
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	printf("tools_appel: served %ld jobs of %ld rounds\n", jobs, rounds);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	long i;

	PROFILED();
	for (i = 0; i < rounds; i++) {
		f();
		g();
	}
	if (argc > 3 && !strncmp(argv[2], "exec", 4)) {
		fflush(stdout);
		/* each of libc's forms, for the tests of libmeter's */
		if (!strcmp(argv[2], "execl"))
			execl(argv[3], argv[3], (char *)NULL);
		else if (!strcmp(argv[2], "execle"))
			execle(argv[3], argv[3], (char *)NULL, environ);
		else if (!strcmp(argv[2], "execlp"))
			execlp(argv[3], argv[3], (char *)NULL);
		else if (!strcmp(argv[2], "execv"))
			execv(argv[3], argv + 3);
		else
			execvp(argv[3], argv + 3);
		perror("tools_appel: exec");
		return 1;
	}
	if (argc > 3 && !strcmp(argv[2], "server"))
		return serve(rounds, atol(argv[3]));
	if (argc > 2 && !strcmp(argv[2], "fork")) {
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			child_rounds(rounds);
			printf("tools_appel: child did %ld rounds\n", rounds);
			return 0;
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			return 1;
	}
	printf("tools_appel: %ld rounds, sink %lu\n", rounds, sink);
	return 0;
}
