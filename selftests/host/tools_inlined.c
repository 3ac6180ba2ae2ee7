// SPDX-License-Identifier: MIT
/*
 * A hot function the plugin leaves alone (a tiny one: no record) and GCC
 * inlines into an instrumented one: by the current function, its time is
 * work()'s; by address (the inline records of its DWARF), mix() gets the
 * instructions that are its own.  rows(), inlined into work2() and
 * counted there without being made current, keeps its place between
 * work2 and mix in the stacks by address.  Built with the plugin at -O2 -g
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

/* a copy the plugin counts without making it current (it calls nothing;
 * -g), inlined into work2, with mix inlined into it in turn */
static inline __attribute__((always_inline)) unsigned int
rows(unsigned int h, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		h = mix(h, i) + (h >> 3);
	return h;
}

static __attribute__((noinline)) unsigned int work2(unsigned int n)
{
	return rows(n, n);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000, r;
	unsigned int acc = 0;

	for (r = 0; r < rounds; r++)
		acc += work(2000) + work2(500);
	printf("%u\n", acc);
	return 0;
}
