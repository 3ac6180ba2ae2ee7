// SPDX-License-Identifier: MIT
/*
 * libc's longjmp functions, which libmeter defines as it defines the exec
 * functions (meter_exec.c): each takes off the shadow stack's frames that
 * the jump leaves behind, then jumps with libc's.
 *
 * Without this, such frames go at the next call or return that shows them
 * stale (meter_shadow.c), and until then every sample has them.  One case
 * no call shows: a caller that longjmp came back to, calling from the same
 * call site through a pointer, gives its callee the frame address of the
 * callee the jump left, and an entry that may be an inlined copy (the
 * macro's, -finstrument-functions') takes that frame for its host.  And a
 * flat function checks nothing.
 *
 * The stack pointer the jump resumes with is word JB_RSP of glibc's x86-64
 * jmp_buf, mangled with the thread's pointer guard (PTR_MANGLE: xor with
 * %fs:0x30, then rotated left by 17).  A value that does not lie above the
 * caller's frame on this stack, within 1 GiB of it, is not trusted: nothing
 * is taken off, and the next call or return repairs what it can, as before.
 * Elsewhere than x86-64 nothing is taken off.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdlib.h>

#include "meter_internal.h"

/* under _FORTIFY_SOURCE, <setjmp.h> declares it; libmeter is not built so */
void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
	__attribute__((noreturn));

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

enum { JUMP_LONGJMP, JUMP_UNDERSCORE, JUMP_SIG, JUMP_CHK, JUMPS };

static const char *const jump_names[JUMPS] = {
	"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
};

/*
 * libc's, found as libmeter loads (all four at once), not at the first
 * jump: that may be a signal handler's, and one that interrupted the
 * dynamic linker itself (dlopen, dlsym) would wait on its lock for good.
 * The lookup costs a process about 5,000 user instructions and no kernel
 * instructions that the counted VM tells from its noise.  A jump made
 * before the constructor ran (another library's constructor, run first)
 * looks them up itself.
 */
static jump_fn real_jumps[JUMPS];

static jump_fn real_jump(int which)
{
	jump_fn f = __atomic_load_n(&real_jumps[which], __ATOMIC_ACQUIRE);
	int i;

	if (f)
		return f;
	for (i = 0; i < JUMPS; i++)
		__atomic_store_n(&real_jumps[i],
				 (jump_fn)dlsym(RTLD_NEXT, jump_names[i]),
				 __ATOMIC_RELEASE);
	return real_jumps[which];
}

__attribute__((constructor)) static void find_libc_jumps(void)
{
	(void)real_jump(JUMP_LONGJMP);
}

#if defined(__x86_64__)
#define JB_RSP 6
#define JUMP_SPAN (1UL << 30)

static uintptr_t resumed_sp(const struct __jmp_buf_tag *env)
{
	uintptr_t v = (uintptr_t)env->__jmpbuf[JB_RSP], guard;

	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	return ((v >> 17) | (v << 47)) ^ guard;
}

static void take_off_left(const struct __jmp_buf_tag *env)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t sp = resumed_sp(env);

	if (sp > here && sp - here < JUMP_SPAN)
		meter_pop_jumped(sp);
}
#else
static void take_off_left(const struct __jmp_buf_tag *env)
{
	(void)env;
}
#endif

static __attribute__((noreturn)) void jump(int which,
					   struct __jmp_buf_tag *env, int val)
{
	jump_fn real = real_jump(which);

	/* none: libmeter is not before libc, so this is never reached */
	if (!real)
		abort();
	take_off_left(env);
	real(env, val);
	__builtin_unreachable();
}

void longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(JUMP_LONGJMP, env, val);
}

void _longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(JUMP_UNDERSCORE, env, val);
}

void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(JUMP_SIG, env, val);
}

void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
	jump(JUMP_CHK, env, val);
}
