// SPDX-License-Identifier: MIT
/* A shared library built with the GCC plugin: its records are its own. */
#define NOINLINE __attribute__((noinline, noclone))

static volatile int sink;

NOINLINE static int dso_helper(int x)
{
	sink += x;
	return x & 1;
}

int in_dso(int x)
{
	return dso_helper(x);
}
