// SPDX-License-Identifier: MIT
/* A shared library built plainly (libpatchdemo.so.1), for patch_libs.c. */
static volatile long lib_sink;

__attribute__((noinline)) long lib_leaf(long x)
{
	lib_sink += x;
	return x * 3 + lib_sink % 5;
}

long lib_work(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += lib_leaf(i);
	return s;
}
