// SPDX-License-Identifier: MIT
/*
 * The naming test's program, compiled with -finstrument-functions: a
 * static function of its own and the functions of two shared libraries.
 */
#include <stdio.h>

int dso_exported(int x);
int stripped_exported(int x);

static volatile int sink;

__attribute__((noinline, noclone)) static int local_helper(int x)
{
	sink += x;
	return x;
}

int main(void)
{
	int i;

	for (i = 0; i < 10; i++)
		sink += local_helper(i) + dso_exported(i) + stripped_exported(i);
	printf("done\n");
	return 0;
}
