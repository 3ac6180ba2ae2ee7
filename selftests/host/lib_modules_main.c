// SPDX-License-Identifier: MIT
/*
 * The modules test's program: METER_FUNCTION() in the executable, in a
 * shared library it links, and in one it opens with dlopen after its first
 * profiled call.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "meter.h"

int linked_func(int x);

static volatile int sink;

__attribute__((noinline)) static int exe_func(int x)
{
	METER_FUNCTION();
	sink += x;
	return x;
}

int main(int argc, char **argv)
{
	METER_FUNCTION();
	int (*opened)(int);
	void *h;
	int i;

	(void)argc;
	for (i = 0; i < 10; i++)
		sink += exe_func(i) + linked_func(i);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	opened = (int (*)(int))dlsym(h, "opened_func");
	for (i = 0; opened && i < 7; i++)
		sink += opened(i);
	printf("opened=%d\n", opened != NULL);
	return 0;
}
