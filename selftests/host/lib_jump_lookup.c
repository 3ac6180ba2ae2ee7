// SPDX-License-Identifier: MIT
/*
 * Jumps with longjmp and siglongjmp once main has begun, which it first
 * says on stderr ("main begins"), where the dynamic linker's LD_DEBUG
 * lines go too, in order: test_lib_longjmp_lookup reads there whether
 * libmeter looked libc's jumps up before main or at the first jump.
 * Prints "jumps: 2".
 */
#include <setjmp.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	static const char mark[] = "lib_jump_lookup: main begins\n";
	static jmp_buf jb;
	static sigjmp_buf sjb;
	static volatile int jumps;

	if (write(2, mark, sizeof(mark) - 1) < 0)
		return 1;
	if (!setjmp(jb))
		longjmp(jb, 1);
	jumps++;
	if (!sigsetjmp(sjb, 1))
		siglongjmp(sjb, 1);
	jumps++;
	printf("jumps: %d\n", jumps);
	return 0;
}
