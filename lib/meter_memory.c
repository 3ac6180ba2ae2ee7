// SPDX-License-Identifier: MIT
/*
 * libmeter's own large memory: zeroed, reserved for every id or frame it
 * may hold, and touched sparsely (a thread's block, the count arrays, the
 * .bss blocks), so that it costs only the pages a program's calls reach.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "meter_internal.h"

/*
 * Large zeroed memory that is touched sparsely keeps small pages: where
 * transparent huge pages are "always" (Debian's kernels), the first touch
 * in an aligned 2 MiB of it would fault in a whole huge page and zero it.
 * Each process with libmeter held one (its unregistered threads' block in
 * .bss), 2 MiB of its RSS, and zeroing it was 4 million of the counted
 * VM's kernel instructions.  The advice splits no huge page already
 * there: one faulted in before libmeter's constructor (a call from
 * .preinit_array, or a static program's constructors, which run first) is
 * given back where nobody reads what was written (unread).  Only the
 * object's whole pages: the ones it shares are its neighbours' too.
 */
void meter_small_pages(void *p, size_t bytes, bool unread)
{
	uintptr_t pg = (uintptr_t)getpagesize();
	uintptr_t from = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	uintptr_t to = ((uintptr_t)p + bytes) & ~(pg - 1);

	if (to <= from)
		return;
	/* EINVAL without transparent huge pages: nothing to keep small */
	(void)madvise((void *)from, to - from, MADV_NOHUGEPAGE);
	if (unread)
		(void)madvise((void *)from, to - from, MADV_DONTNEED);
}

/*
 * Zeroed memory that costs nothing until touched, in small pages: the
 * advice covers the mapping's last, partial page too (the kernel rounds
 * the length up), which would otherwise be a mapping of its own.
 */
void *meter_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}
