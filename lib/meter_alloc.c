// SPDX-License-Identifier: MIT
/*
 * Allocation accounting, libmeter's half (METER_ALLOC=1): the per-thread
 * counts that libmeter-alloc.so's malloc, calloc and realloc add to (see
 * lib/alloc_preload.c).  Without that library preloaded nothing calls in,
 * and METER_ALLOC=1 says so at start-up instead of counting zeros.
 */
#include <dlfcn.h>

#include "meter_internal.h"

void meter__alloc_account(size_t bytes)
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

bool meter_alloc_preloaded(void)
{
	return dlsym(RTLD_DEFAULT, "meter__alloc_preloaded") != NULL;
}
