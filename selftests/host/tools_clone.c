// SPDX-License-Identifier: MIT
/*
 * A program not built for meter (test_tools_byaddr, under --patch) with a
 * function and another whose symbol is the one GCC gives a specialised
 * copy of it (spin.constprop.0), so that the test does not hang on when
 * GCC chooses to clone: the records are named from the symbols, the names
 * found at an address with a clone's suffix cut.  Built as C and as C++
 * (tools_clone_cxx: spin(unsigned long) [clone .constprop.0]).
 */
#ifdef __cplusplus
#define CLONE_SYMBOL "_Z4spinm.constprop.0"
#else
#define CLONE_SYMBOL "spin.constprop.0"
#endif
volatile unsigned long sink;

/* noipa: a build at -O3 must not make clones of its own */
__attribute__((noipa)) void spin_copy(unsigned long n)
	__asm__(CLONE_SYMBOL);
__attribute__((noipa)) void spin(unsigned long n);

__attribute__((noipa)) void spin_copy(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 3;
}

__attribute__((noipa)) void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	(void)argv;
	spin_copy(argc > 1 ? 40000000UL : 400000000UL);
	spin(1000);
	return 0;
}
