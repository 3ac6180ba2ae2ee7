// SPDX-License-Identifier: MIT
/*
 * libmeter-alloc.so, allocation accounting ("consing" in METERING): a
 * preload library, added by `meter-run --alloc` (LD_PRELOAD with
 * METER_ALLOC=1), that interposes malloc, calloc and realloc, forwards
 * each to the next definition (dlsym(RTLD_NEXT)) and hands the bytes asked
 * for to libmeter (meter__alloc_account), which charges them and one call
 * to the calling thread's current function.  libmeter itself replaces no
 * allocator: a program that does not ask pays nothing.
 *
 * dlsym() itself may allocate: while the next definitions are being looked
 * up, glibc's own __libc_malloc and __libc_calloc serve.
 */
#include <dlfcn.h>
#include <stddef.h>

/* libmeter.so's (lib/meter_alloc.c) */
void meter__alloc_account(size_t bytes);

/* Looked up by libmeter: METER_ALLOC=1 without this library counts
 * nothing and says so. */
const int meter__alloc_preloaded = 1;

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

void *malloc(size_t n)
{
	malloc_fn f = __atomic_load_n(&next_malloc, __ATOMIC_ACQUIRE);

	if (!f) {
		if (resolving)
			return __libc_malloc(n);
		resolve();
		f = next_malloc;
	}
	meter__alloc_account(n);
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
	meter__alloc_account(n * sz);
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
	meter__alloc_account(n);
	return f(p, n);
}
