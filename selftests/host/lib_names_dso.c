// SPDX-License-Identifier: MIT
/*
 * A shared library compiled with -finstrument-functions, for the naming
 * test.  Built twice: as is, and with PREFIX=stripped_ and stripped of its
 * symbol table, so that its static function has no name to be found.
 */
#ifndef PREFIX
#define PREFIX dso_
#endif
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static volatile int sink;

__attribute__((noinline, noclone)) static int CAT(PREFIX, static)(int x)
{
	sink += x;
	return x + 1;
}

int CAT(PREFIX, exported)(int x)
{
	return CAT(PREFIX, static)(x) * 2;
}
