// SPDX-License-Identifier: MIT
/*
 * A program for the patch plan to read (test_patch_plan), built as users
 * build (-O2 -g, no meter flags): ordinary C functions, and entries the
 * plan must refuse or treat specially, written in assembly so that the
 * compiler cannot reshape them: a 3-byte function, a loop back into the
 * first bytes and a return among them (refused), a call, a conditional
 * jump and a RIP-relative load among them (patchable, re-encoded) and an
 * endbr64 (the jump goes after it).
 */
#include <stdio.h>
#include <stdlib.h>

int tiny_ret(void);
int jumped_into(int n);
int early_branch(int n);
int early_ret(int n);
int calls_first(void);
int rip_relative(void);
int with_endbr(int n);

int corner_counter = 41;

__asm__(
	".text\n"
	".globl tiny_ret\n.type tiny_ret, @function\n"
	"tiny_ret:\n\txor %eax, %eax\n\tret\n.size tiny_ret, .-tiny_ret\n"
	".globl jumped_into\n.type jumped_into, @function\n"
	"jumped_into:\n\txor %eax, %eax\n"
	"1:\tadd %edi, %eax\n\tdec %edi\n\tjnz 1b\n\tret\n"
	".size jumped_into, .-jumped_into\n"
	".globl early_branch\n.type early_branch, @function\n"
	"early_branch:\n\ttest %edi, %edi\n\tje 2f\n"
	"\tmov $1, %eax\n\tret\n2:\txor %eax, %eax\n\tret\n"
	".size early_branch, .-early_branch\n"
	".globl early_ret\n.type early_ret, @function\n"
	"early_ret:\n\ttest %edi, %edi\n\tjz 3f\n\tret\n"
	"3:\tmov $7, %eax\n\tret\n"
	".size early_ret, .-early_ret\n"
	".globl calls_first\n.type calls_first, @function\n"
	"calls_first:\n\tcall tiny_ret\n\tadd $1, %eax\n\tret\n"
	".size calls_first, .-calls_first\n"
	".globl rip_relative\n.type rip_relative, @function\n"
	"rip_relative:\n\tmov corner_counter(%rip), %eax\n"
	"\tadd $1, %eax\n\tmov %eax, corner_counter(%rip)\n\tret\n"
	".size rip_relative, .-rip_relative\n"
	".globl with_endbr\n.type with_endbr, @function\n"
	"with_endbr:\n\tendbr64\n\tlea 3(%rdi), %eax\n\timul %edi, %eax\n"
	"\tret\n.size with_endbr, .-with_endbr\n");

__attribute__((noinline)) static long work(long n)
{
	long s = 0, i;

	for (i = 0; i < n; i++)
		s += i * i % 7;
	return s;
}

__attribute__((noinline)) static long mix(long a, long b)
{
	return work(a) ^ (work(b) << 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;

	printf("%ld %d %d %d %d %d %d %d\n", mix(n, n + 1), tiny_ret(),
	       jumped_into((int)n), early_branch((int)n), early_ret((int)n),
	       calls_first(), rip_relative(), with_endbr((int)n));
	return 0;
}
