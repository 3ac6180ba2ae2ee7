// SPDX-License-Identifier: MIT
/*
 * A hot function the plugin leaves alone (a tiny one: no record) and GCC
 * inlines into an instrumented one: by the current function, its time is
 * work()'s; by address (the inline records of its DWARF), mix() gets the
 * instructions that are its own.  Built with the plugin at -O2 -g
 * (selftests/host/tools.mk) for test_tools_byaddr.
 */
#include <stdio.h>
#include <stdlib.h>

static inline unsigned int mix(unsigned int h, unsigned int i)
{
	h ^= i;
	h *= 0x9e3779b1u;
	h ^= h >> 15;
	h *= 0x85ebca77u;
	return h ^ (h >> 13);
}

static __attribute__((noinline)) unsigned int work(unsigned int n)
{
	unsigned int h = 0, i;

	for (i = 0; i < n; i++)
		h = mix(h, i);
	return h;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000, r;
	unsigned int acc = 0;

	for (r = 0; r < rounds; r++)
		acc += work(2000);
	printf("%u\n", acc);
	return 0;
}
