// SPDX-License-Identifier: MIT
/*
 * Allocation accounting ("consing" in METERING), METER_ALLOC=1: libmeter.so
 * interposes malloc, calloc and realloc, forwards each to the next
 * definition (dlsym(RTLD_NEXT)) and adds the bytes asked for and one call to
 * the current function of the calling thread.  Without METER_ALLOC=1 the
 * wrappers only forward.
 *
 * Only the shared library interposes (lib/lib.mk compiles this file with
 * METER_SHARED_BUILD for libmeter.so alone): in libmeter.a the wrappers
 * would be pulled into every program that links it statically.
 *
 * dlsym() itself may allocate: while the next definitions are being looked
 * up, glibc's own __libc_malloc and __libc_calloc serve.
 */
#include "meter_internal.h"

#ifdef METER_SHARED_BUILD

#include <dlfcn.h>
#include <stddef.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t sz);
extern void *__libc_realloc(void *p, size_t n);

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);

static malloc_fn next_malloc;
static calloc_fn next_calloc;
static realloc_fn next_realloc;
static __thread int resolving __attribute__((tls_model("initial-exec")));

static void resolve(void)
{
	malloc_fn m;
	calloc_fn c;
	realloc_fn r;

	resolving = 1;
	m = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
	c = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
	r = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
	__atomic_store_n(&next_calloc, c ? c : __libc_calloc, __ATOMIC_RELEASE);
	__atomic_store_n(&next_realloc, r ? r : __libc_realloc,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&next_malloc, m ? m : __libc_malloc, __ATOMIC_RELEASE);
	resolving = 0;
}

static inline void account(size_t bytes)
{
	struct meter_page *pg = meter__tls.page;
	struct meter_thr *th = meter_self;
	uint32_t cur;

	if (!meter_g.alloc || pg == METER_NO_PAGE || meter_busy || !th ||
	    !th->alloc_calls)
		return;
	cur = pg->current_id;
	if (!cur || cur >= METER_CALIB_ID)
		return;
	th->alloc_calls[cur]++;
	th->alloc_bytes[cur] += bytes;
}

void *malloc(size_t n)
{
	malloc_fn f = __atomic_load_n(&next_malloc, __ATOMIC_ACQUIRE);

	if (!f) {
		if (resolving)
			return __libc_malloc(n);
		resolve();
		f = next_malloc;
	}
	account(n);
	return f(n);
}

void *calloc(size_t n, size_t sz)
{
	calloc_fn f = __atomic_load_n(&next_calloc, __ATOMIC_ACQUIRE);

	if (!f) {
		if (resolving)
			return __libc_calloc(n, sz);
		resolve();
		f = next_calloc;
	}
	account(n * sz);
	return f(n, sz);
}

void *realloc(void *p, size_t n)
{
	realloc_fn f = __atomic_load_n(&next_realloc, __ATOMIC_ACQUIRE);

	if (!f) {
		if (resolving)
			return __libc_realloc(p, n);
		resolve();
		f = next_realloc;
	}
	account(n);
	return f(p, n);
}

#endif /* METER_SHARED_BUILD */
