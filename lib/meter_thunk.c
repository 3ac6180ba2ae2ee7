// SPDX-License-Identifier: MIT
/*
 * x86-64 thunks to the slow paths of METER_FUNCTION() and
 * METER_FUNCTION_FLAT() (see METER__THUNK_CALL in include/meter.h).
 *
 * The inline fast path jumps here with the return address in r10, the
 * record in r11 and, for a stacked entry, the function's frame address in
 * rax.  The thunk steps below the caller's red zone, saves the general
 * registers and calls the quick half of the slow path (meter_shadow.c,
 * built to use no other register): deep calls, calls over a stale frame
 * and calls that are not profiled end there.  Only when it asks for the
 * full slow path (a thread's first call) does the thunk save the x87/SSE/
 * AVX/AVX-512 state, with XSAVE or FXSAVE as the CPU allows (learnt with
 * cpuid on the first full entry, then kept: cpuid traps to the hypervisor
 * on a virtual machine).  It comes back with the frame in r11 (page) and
 * r10 (saved word), all other registers as they were.  Its unwind
 * information says the return address is in r10, then on the stack, so
 * unwinding through it is exact.  Being jumped to and returning with
 * ret, it does not suit a CET shadow stack: lib/lib.mk builds this file
 * with -fcf-protection=none, so that no program linked with libmeter
 * claims shadow-stack support.  (-DMETER_NO_THUNKS in a program's build
 * makes its inline paths call the slow paths directly.)
 */
#include "meter_internal.h"

#ifdef METER__THUNKS

/* The page of a thread not registered yet, registered now if it can be,
 * for the GCC plugin's counted copies in a function without an entry of
 * its own (meter__page_thunk's full half: only the thunk calls it). */
struct meter__frame meter_page_slow(void)
{
	struct meter__frame f = meter_page_quick();

	if (f.page)
		return f;
	f.page = METER_SCRATCH_PAGE;
	if (!meter_thread_ready())
		return f;
	meter_count_slow();
	f.page = meter__tls.page;
	return f;
}

/* The XSAVE components saved: x87, SSE, AVX, opmask, ZMM upper halves and
 * ZMM16-31; their standard-format area ends before 4096 bytes. */
#define THUNK_XSAVE_MASK "0xe7"

/* 0 until the first full slow path, then 1 (FXSAVE) or 2 (XSAVE) */
int meter_thunk_xsave METER_HIDDEN;

#define THUNK(name, setup, quick, full)					\
	"	.text\n"						\
	"	.globl " name "\n"					\
	"	.type " name ", @function\n"				\
	"	.p2align 4\n"						\
	name ":\n"							\
	"	.cfi_startproc simple\n"				\
	"	.cfi_def_cfa %rsp, 0\n"					\
	"	.cfi_register %rip, %r10\n"				\
	"	endbr64\n"						\
	"	lea -128(%rsp), %rsp\n"					\
	"	.cfi_adjust_cfa_offset 128\n"				\
	"	push %r10\n"						\
	"	.cfi_adjust_cfa_offset 8\n"				\
	"	.cfi_rel_offset %rip, 0\n"				\
	"	push %rbp\n"						\
	"	.cfi_adjust_cfa_offset 8\n"				\
	"	.cfi_rel_offset %rbp, 0\n"				\
	"	mov %rsp, %rbp\n"					\
	"	.cfi_def_cfa_register %rbp\n"				\
	"	push %rax\n"						\
	"	push %rcx\n"						\
	"	push %rdx\n"						\
	"	push %rsi\n"						\
	"	push %rdi\n"						\
	"	push %r8\n"						\
	"	push %r9\n"						\
	"	push %rbx\n"						\
	"	.cfi_offset %rbx, -208\n"				\
	"	push %r12\n"						\
	"	.cfi_offset %r12, -216\n"				\
	"	mov %r11, %r12\n"					\
	"	and $-16, %rsp\n"					\
	setup								\
	"	call " quick "\n"					\
	"	test %rax, %rax\n"					\
	"	jnz 6f\n"						\
	"	and $-64, %rsp\n"					\
	"	sub $4096, %rsp\n"					\
	"	mov meter_thunk_xsave(%rip), %ebx\n"			\
	"	test %ebx, %ebx\n"					\
	"	jnz 1f\n"						\
	"	mov $1, %eax\n"						\
	"	cpuid\n"						\
	"	mov $1, %ebx\n"						\
	"	bt $27, %ecx\n"		/* OSXSAVE */			\
	"	adc $0, %ebx\n"						\
	"	mov %ebx, meter_thunk_xsave(%rip)\n"			\
	"1:	xor %eax, %eax\n"					\
	"	mov %rax, 512(%rsp)\n"					\
	"	mov %rax, 520(%rsp)\n"					\
	"	mov %rax, 528(%rsp)\n"					\
	"	mov %rax, 536(%rsp)\n"					\
	"	mov %rax, 544(%rsp)\n"					\
	"	mov %rax, 552(%rsp)\n"					\
	"	mov %rax, 560(%rsp)\n"					\
	"	mov %rax, 568(%rsp)\n"					\
	"	cmp $2, %ebx\n"						\
	"	jne 2f\n"						\
	"	mov $" THUNK_XSAVE_MASK ", %eax\n"			\
	"	xor %edx, %edx\n"					\
	"	xsave64 (%rsp)\n"					\
	"	jmp 3f\n"						\
	"2:	fxsave64 (%rsp)\n"					\
	"3:\n"								\
	setup								\
	"	call " full "\n"					\
	"	mov %rax, %r11\n"					\
	"	mov %rdx, %r10\n"					\
	"	cmp $2, %ebx\n"						\
	"	jne 4f\n"						\
	"	mov $" THUNK_XSAVE_MASK ", %eax\n"			\
	"	xor %edx, %edx\n"					\
	"	xrstor64 (%rsp)\n"					\
	"	jmp 5f\n"						\
	"4:	fxrstor64 (%rsp)\n"					\
	"	jmp 5f\n"						\
	"6:	mov %rax, %r11\n"					\
	"	mov %rdx, %r10\n"					\
	"5:	lea -72(%rbp), %rsp\n"					\
	"	pop %r12\n"						\
	"	.cfi_restore %r12\n"					\
	"	pop %rbx\n"						\
	"	.cfi_restore %rbx\n"					\
	"	pop %r9\n"						\
	"	pop %r8\n"						\
	"	pop %rdi\n"						\
	"	pop %rsi\n"						\
	"	pop %rdx\n"						\
	"	pop %rcx\n"						\
	"	pop %rax\n"						\
	"	pop %rbp\n"						\
	"	.cfi_def_cfa %rsp, 136\n"				\
	"	.cfi_restore %rbp\n"					\
	"	ret $128\n"						\
	"	.cfi_endproc\n"						\
	"	.size " name ", . - " name "\n"

/* rec in r12 (from r11); stacked: the frame address in rax (saved at
 * -8(%rbp)), its return address just below it */
__asm__(THUNK("meter__enter_thunk",
	      "	mov -8(%rbp), %rsi\n"
	      "	mov -8(%rsi), %rdx\n"
	      "	mov %r12, %rdi\n",
	      "meter_enter_quick",
	      "meter_enter_slow_hidden")
	/* a function's own entry: the frame address marked so */
	THUNK("meter__enter_own_thunk",
	      "	mov -8(%rbp), %rsi\n"
	      "	mov -8(%rsi), %rdx\n"
	      "	or $1, %rsi\n"
	      "	mov %r12, %rdi\n",
	      "meter_enter_quick",
	      "meter_enter_slow_hidden")
	THUNK("meter__enter_flat_thunk",
	      "	mov %r12, %rdi\n",
	      "meter_enter_flat_quick",
	      "meter_enter_flat_slow_hidden")
	/* no record: the page for a function's counted copies */
	THUNK("meter__page_thunk",
	      "",
	      "meter_page_quick",
	      "meter_page_slow"));

#endif
