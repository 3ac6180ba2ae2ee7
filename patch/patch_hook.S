/* SPDX-License-Identifier: MIT */
/*
 * The two hooks every patched function goes through (patch_runtime.c).
 *
 * meter_patch_entry: a patched entry jumps to its stub, which pushes the
 * function's index and comes here.  [rsp] is the index, [rsp + 8] the
 * caller's return address.  meter_patch_enter() counts the call, makes the
 * function current and swaps that return address for meter_patch_return;
 * it returns where the displaced instructions run, which the ret at the
 * end jumps to, leaving the stack as the call left it.
 *
 * meter_patch_return: the function returned here.  meter_patch_leave()
 * gives back the real return address and makes the caller current again.
 *
 * Both keep every register but rsp and rip: GCC's -fipa-ra lets a caller
 * keep values in call-clobbered registers (r10, r11, the vector ones)
 * across a call to a function it knows leaves them alone, so nothing a
 * call may clobber is ours to clobber.  The stack below rsp is free: at an
 * entry it is the callee's, which has not begun; at a return, the frame
 * that just ended.
 */
	.text

.macro SAVE_ALL
	push %rbp
	mov %rsp, %rbp
	push %rax
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	sub $256, %rsp
	and $-16, %rsp
	movdqa %xmm0, 0(%rsp)
	movdqa %xmm1, 16(%rsp)
	movdqa %xmm2, 32(%rsp)
	movdqa %xmm3, 48(%rsp)
	movdqa %xmm4, 64(%rsp)
	movdqa %xmm5, 80(%rsp)
	movdqa %xmm6, 96(%rsp)
	movdqa %xmm7, 112(%rsp)
	movdqa %xmm8, 128(%rsp)
	movdqa %xmm9, 144(%rsp)
	movdqa %xmm10, 160(%rsp)
	movdqa %xmm11, 176(%rsp)
	movdqa %xmm12, 192(%rsp)
	movdqa %xmm13, 208(%rsp)
	movdqa %xmm14, 224(%rsp)
	movdqa %xmm15, 240(%rsp)
.endm

.macro RESTORE_ALL
	movdqa 0(%rsp), %xmm0
	movdqa 16(%rsp), %xmm1
	movdqa 32(%rsp), %xmm2
	movdqa 48(%rsp), %xmm3
	movdqa 64(%rsp), %xmm4
	movdqa 80(%rsp), %xmm5
	movdqa 96(%rsp), %xmm6
	movdqa 112(%rsp), %xmm7
	movdqa 128(%rsp), %xmm8
	movdqa 144(%rsp), %xmm9
	movdqa 160(%rsp), %xmm10
	movdqa 176(%rsp), %xmm11
	movdqa 192(%rsp), %xmm12
	movdqa 208(%rsp), %xmm13
	movdqa 224(%rsp), %xmm14
	movdqa 240(%rsp), %xmm15
	lea -72(%rbp), %rsp
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	pop %rax
	pop %rbp
.endm

	.globl meter_patch_entry
	.hidden meter_patch_entry
	.type meter_patch_entry, @function
meter_patch_entry:
	SAVE_ALL
	mov 8(%rbp), %rdi		/* the function's index */
	lea 16(%rbp), %rsi		/* where the return address is */
	call meter_patch_enter
	mov %rax, 8(%rbp)		/* the index's slot: where to go */
	RESTORE_ALL
	ret
	.size meter_patch_entry, .-meter_patch_entry

	.globl meter_patch_return
	.hidden meter_patch_return
	.type meter_patch_return, @function
meter_patch_return:
	push $0				/* the real return address's slot */
	SAVE_ALL
	lea 16(%rbp), %rdi		/* rsp as the function's ret left it */
	call meter_patch_leave
	mov %rax, 8(%rbp)
	RESTORE_ALL
	ret
	.size meter_patch_return, .-meter_patch_return

	.section .note.GNU-stack, "", @progbits
