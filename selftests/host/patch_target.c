// SPDX-License-Identifier: MIT
/*
 * A long-running program built plainly, for meter-run --pid
 * (test_patch_attach): rounds of work (round() calls step() 100 times)
 * until the file ARGV[1] exists, then "ROUNDS CHECKSUM" on stdout.  With
 * a number for ARGV[1] it does that many rounds and prints the same
 * line: what the attached run must print when it stopped after as many.
 * A file named by ARGV[2] is created once main runs: the test attaches
 * after that, never to a process still in the dynamic loader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) long step(long x)
{
	long i, s = 0;

	for (i = 0; i < 500; i++)
		s += (i ^ x) % 7;
	sink += s;
	return s;
}

__attribute__((noinline)) long round_of(long r)
{
	long i, s = 0;

	for (i = 0; i < 100; i++)
		s += step(i + r);
	return s;
}

int main(int argc, char **argv)
{
	long r, n = -1, s = 0;
	char *end;

	if (argc != 2 && argc != 3)
		return 2;
	if (argc == 3) {
		FILE *ready = fopen(argv[2], "w");

		if (!ready || fclose(ready))
			return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end)
		n = -1;		/* a file name: until it exists */
	for (r = 0; n < 0 ? access(argv[1], F_OK) != 0 : r < n; r++)
		s = s * 31 + round_of(r);
	printf("%ld %ld\n", r, s);
	return 0;
}
