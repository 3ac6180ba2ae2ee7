// SPDX-License-Identifier: MIT
/*
 * libmeter's own large memory: zeroed, reserved for every id or frame it
 * may hold, and touched sparsely (a thread's block, the count arrays, the
 * .bss blocks), so that it costs only the pages a program's calls reach.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "meter_internal.h"

/*
 * Large zeroed memory that is touched sparsely keeps 4 KiB pages: where
 * transparent huge pages are "always" (Debian's kernels), the first touch
 * in an aligned 2 MiB of it would fault in a whole huge page and zero it.
 * Each process with libmeter held one (its unregistered threads' block in
 * .bss), 2 MiB of its RSS, and zeroing it was 4 million of the counted
 * VM's kernel instructions.
 */
void meter_small_pages(void *p, size_t bytes)
{
	uintptr_t from = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t to = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;

	/* EINVAL without transparent huge pages: nothing to keep small */
	if (to > from)
		(void)madvise((void *)from, to - from, MADV_NOHUGEPAGE);
}

/* Zeroed memory that costs nothing until touched. */
void *meter_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	meter_small_pages(p, bytes);
	return p;
}
