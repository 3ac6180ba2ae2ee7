/* SPDX-License-Identifier: MIT */
/*
 * The code every patched function goes through (patch_runtime.c says how
 * the shadow stack is kept).
 *
 * The fast paths are templates, at the end, that patch_install.c copies
 * once per patched function (the entry) and once per patched object (the
 * return hook), filling in the function's id, its count's offset and the
 * thread pointer's offset of meter__tls, so that each is one instruction.
 * They use rax and rcx, kept in the red zone: at an entry it is the
 * callee's, which has not begun; at a return, the frame that just ended.
 * Anything else (a thread not registered, a stack past the page's
 * capacity, a stale frame: longjmp, a tail call) goes to the slow paths,
 * meter_patch_entry and meter_patch_return, with every register as it was.
 *
 * meter_patch_entry: [rsp] is the function's index, [rsp + 8] the
 * caller's return address.  meter_patch_enter() counts the call, pushes
 * the frame and swaps that return address for the return hook; it returns
 * where the displaced instructions run, which the ret at the end jumps
 * to, leaving the stack as the call left it.
 *
 * meter_patch_return: a return hook's slow path, rsp as the function's
 * ret left it.  meter_patch_leave() pops the frame and gives back the
 * real return address.
 *
 * All of it keeps every register but rsp, rip and the flags: GCC's
 * -fipa-ra lets a caller keep values in call-clobbered registers (r10,
 * r11, the vector ones) across a call to a function it knows leaves them
 * alone, so nothing a call may clobber is ours to clobber.  The stack
 * below rsp is free, as above.
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

/*
 * patch_calib.c times a call of the first through a stub and a call of
 * the second: the 5 bytes before each ret are what a stub's copy runs.
 */
	.globl meter_patch_calib_leaf, meter_patch_calib_plain
	.hidden meter_patch_calib_leaf, meter_patch_calib_plain
	.p2align 4
meter_patch_calib_leaf:
	mov %edi, %eax
	add $1, %eax
	ret
	.p2align 4
meter_patch_calib_plain:
	mov %edi, %eax
	add $1, %eax
	ret

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


/*
 * The fast paths' templates.  The offsets are include/meter.h's, which
 * patch_install.c asserts; a label after each field ends it.
 */
#define CAP		1008		/* METER__STACK_CAP */
#define SPS		4096		/* METER__BLOCK_SPS: sps[-1] */
#define SITES		12168		/* METER__BLOCK_SITES: sites[-1] */
#define DEPTH		12
#define CURRENT		8
#define STACK		64
#define FIELD		0x7fffffff	/* filled in: a 32-bit field */

	.globl meter_patch_stub, meter_patch_stub_fast, meter_patch_stub_end
	.globl meter_patch_stub_index, meter_patch_stub_entry_q
	.globl meter_patch_stub_hook_q, meter_patch_stub_tls
	.globl meter_patch_stub_count, meter_patch_stub_id, meter_patch_stub_id2
	.globl meter_patch_stub_tcount, meter_patch_stub_tid
	.globl meter_patch_stub_tid2
	.hidden meter_patch_stub_tcount, meter_patch_stub_tid
	.hidden meter_patch_stub_tid2
	.hidden meter_patch_stub, meter_patch_stub_fast, meter_patch_stub_end
	.hidden meter_patch_stub_index, meter_patch_stub_entry_q
	.hidden meter_patch_stub_hook_q, meter_patch_stub_tls
	.hidden meter_patch_stub_count, meter_patch_stub_id, meter_patch_stub_id2
	.section .rodata
	.p2align 4
meter_patch_stub:			/* the slow path, to meter_patch_entry */
	mov -8(%rsp), %rax
	mov -16(%rsp), %rcx
	pushq $FIELD
meter_patch_stub_index:			/* the field ends at each label */
	jmp *meter_patch_stub_entry_q(%rip)
	.p2align 3
meter_patch_stub_entry_q:
	.quad 0				/* meter_patch_entry */
meter_patch_stub_hook_q:
	.quad 0				/* the object's return hook */
	/*
	 * The top frame has this call's slot: a function that jumped here
	 * (its slot still holds the hook) has ended, and this one takes its
	 * frame, real return address and all.  Else (a frame longjmp left
	 * at this slot) the slow path.
	 */
meter_patch_stub_tail:
	jne meter_patch_stub
	mov %rdx, -24(%rsp)
	mov (%rsp), %rdx
	cmp meter_patch_stub_hook_q(%rip), %rdx
	mov -24(%rsp), %rdx
	jne meter_patch_stub
	incq FIELD(%rax)
meter_patch_stub_tcount:
	movl $FIELD, CURRENT(%rax)
meter_patch_stub_tid:
	movl $FIELD, STACK - 4(%rax,%rcx,4)	/* stack[d - 1] */
meter_patch_stub_tid2:
	mov -8(%rsp), %rax
	mov -16(%rsp), %rcx
	jmp meter_patch_stub_end
meter_patch_stub_fast:			/* the patched entry jumps here */
	mov %rax, -8(%rsp)
	mov %rcx, -16(%rsp)
	mov %fs:FIELD, %rax		/* the thread's page */
meter_patch_stub_tls:
	mov DEPTH(%rax), %ecx
	cmp $CAP, %ecx
	jae meter_patch_stub		/* not registered, or deep */
	cmp SPS(%rax,%rcx,8), %rsp	/* sps[d - 1] */
	jae meter_patch_stub_tail	/* a tail call, or stale */
	incq FIELD(%rax)		/* counts[id] */
meter_patch_stub_count:
	inc %ecx
	mov %ecx, DEPTH(%rax)
	movl $FIELD, CURRENT(%rax)
meter_patch_stub_id:
	movl $FIELD, STACK - 4(%rax,%rcx,4)	/* stack[d] */
meter_patch_stub_id2:
	mov %rsp, SPS(%rax,%rcx,8)		/* sps[d] */
	lea SITES(%rax,%rcx,8), %rax		/* &sites[d] */
	mov (%rsp), %rcx
	mov %rcx, (%rax)
	mov meter_patch_stub_hook_q(%rip), %rcx
	mov %rcx, (%rsp)
	mov -8(%rsp), %rax
	mov -16(%rsp), %rcx
meter_patch_stub_end:			/* the displaced instructions follow */

	.globl meter_patch_ret, meter_patch_ret_fast, meter_patch_ret_end
	.globl meter_patch_ret_leave_q, meter_patch_ret_tls
	.hidden meter_patch_ret, meter_patch_ret_fast, meter_patch_ret_end
	.hidden meter_patch_ret_leave_q, meter_patch_ret_tls
	.p2align 4
meter_patch_ret:			/* the slow path, to meter_patch_return */
	lea 8(%rsp), %rsp		/* the pushed address back */
meter_patch_ret_slow:
	mov -16(%rsp), %rax
	mov -24(%rsp), %rcx
	jmp *meter_patch_ret_leave_q(%rip)
	.p2align 3
meter_patch_ret_leave_q:
	.quad 0				/* meter_patch_return */
meter_patch_ret_fast:			/* swapped in for return addresses */
	mov %rax, -16(%rsp)		/* -8: where the address goes */
	mov %rcx, -24(%rsp)
	mov %fs:FIELD, %rax
meter_patch_ret_tls:
	mov DEPTH(%rax), %ecx
	sub $1, %ecx
	cmp $CAP, %ecx
	jae meter_patch_ret_slow	/* none, not registered, or deep */
	push SITES + 8(%rax,%rcx,8)	/* sites[d - 1]: the real address */
	cmp SPS + 8(%rax,%rcx,8), %rsp	/* sps[d - 1]: this frame's? */
	jne meter_patch_ret		/* frames left by longjmp first */
	movq $-1, SPS + 8(%rax,%rcx,8)
	mov %ecx, DEPTH(%rax)
	mov STACK - 8(%rax,%rcx,4), %ecx	/* stack[d - 2]; [-1] is 0 */
	mov %ecx, CURRENT(%rax)
	mov -8(%rsp), %rax
	mov -16(%rsp), %rcx
	ret
meter_patch_ret_end:

	.section .note.GNU-stack, "", @progbits
