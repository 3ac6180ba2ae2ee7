// SPDX-License-Identifier: MIT
/* A plugin built plainly, which patch_libs.c loads with dlopen. */
static volatile long plug_sink;

__attribute__((noinline)) long plug_leaf(long x)
{
	plug_sink += x;
	return x + plug_sink % 7;
}

long plug_work(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += plug_leaf(i);
	return s;
}
