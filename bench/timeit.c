// SPDX-License-Identifier: MIT
/*
 * timeit COMMAND [ARG...]: runs COMMAND and prints, on stderr, one line
 * "timeit cpu_ns=N wall_ns=N status=S": the CPU time (user + system) of
 * COMMAND and every descendant it waited for (the profiler's own
 * processes included: perf, uftrace's recorder, meter-run), and the wall
 * time.  COMMAND's stdout goes to stdout.  Exit status: COMMAND's.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000ULL;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: timeit COMMAND [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("timeit: waitpid");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_CHILDREN, &ru);
	fprintf(stderr, "timeit cpu_ns=%llu wall_ns=%llu status=%d\n",
		(unsigned long long)(tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime)),
		(unsigned long long)((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL +
				     (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec),
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
