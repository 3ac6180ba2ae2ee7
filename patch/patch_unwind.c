// SPDX-License-Identifier: MIT
/*
 * C++ exceptions through patched frames.  The unwinder finds each frame's
 * caller by its return address, and the return hook's address is no
 * function's, so before it starts (a throw, a rethrow) every live frame's
 * real return address goes back into its slot, and where the exception
 * is caught (__cxa_begin_catch, in the catching frame) the frames it
 * unwound are popped and the live ones' returns caught again.  A cleanup
 * on the way (a destructor) runs with the returns not caught: the calls
 * it makes are counted and return through the hook as ever.  These
 * definitions, in the preloaded library, come before libgcc_s's and
 * libstdc++'s, which they call.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unwind.h>

#include "patch_runtime.h"

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "meter: patched program: no %s after libmeter-patch.so\n",
			name);
		abort();
	}
	return f;
}

_Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);

	if (!real)
		real = next("_Unwind_RaiseException");
	patch_unhook_all();
	return real(e);
}

_Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);

	if (!real)
		real = next("_Unwind_Resume_or_Rethrow");
	patch_unhook_all();
	return real(e);
}

void *__cxa_begin_catch(void *e)
{
	static void *(*real)(void *);

	if (!real)
		real = next("__cxa_begin_catch");
	/* the catching frame's callees had slots at or below the one of
	 * this call's return address */
	patch_rehook_from((uintptr_t)__builtin_dwarf_cfa() - 8);
	return real(e);
}
