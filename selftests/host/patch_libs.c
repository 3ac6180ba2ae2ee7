// SPDX-License-Identifier: MIT
/*
 * meter-run --patch=OBJ on shared libraries (test_patch_counts): a
 * library the program is linked with (libpatchdemo.so.1), a plugin it
 * loads with dlopen (ARGV[1]), and the C library (lrand48, called
 * LRAND_CALLS times here and nowhere in meter).  All built plainly.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define LRAND_CALLS	77

long lib_work(long n);

int main(int argc, char **argv)
{
	long (*plug_work)(long);
	long s = lib_work(1000);
	void *h;
	int i;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	plug_work = h ? (long (*)(long))dlsym(h, "plug_work") : NULL;
	if (!plug_work) {
		fprintf(stderr, "patch_libs: %s\n", dlerror());
		return 1;
	}
	s += plug_work(500);
	srand48(1);
	for (i = 0; i < LRAND_CALLS; i++)
		s += lrand48() & 1;
	printf("%ld %d\n", s, LRAND_CALLS);
	return 0;
}
