/* SPDX-License-Identifier: MIT */
/*
 * libmeter-patch.so's insides: the hooks (patch_hook.S over
 * patch_runtime.c) and what patch_install.c gives them.
 */
#ifndef METER_PATCH_RUNTIME_H
#define METER_PATCH_RUNTIME_H

#include <stdint.h>

#include "meter.h"

/* A patched function, by the index its stub pushes. */
struct patched {
	meter_record_t *rec;
	uint64_t copy;		/* where the displaced instructions run */
};

extern struct patched *patched __attribute__((visibility("hidden")));

void meter_patch_entry(void) __attribute__((visibility("hidden")));
void meter_patch_return(void) __attribute__((visibility("hidden")));
uint64_t meter_patch_enter(uint64_t index, uint64_t *ra_slot)
	__attribute__((visibility("hidden")));
uint64_t meter_patch_leave(uint64_t sp)
	__attribute__((visibility("hidden")));

#endif /* METER_PATCH_RUNTIME_H */
