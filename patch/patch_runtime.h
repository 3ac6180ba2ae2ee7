/* SPDX-License-Identifier: MIT */
/*
 * libmeter-patch.so's insides: the hooks (patch_hook.S over
 * patch_runtime.c) and what patch_install.c gives them.
 */
#ifndef METER_PATCH_RUNTIME_H
#define METER_PATCH_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meter.h"

#define PATCH_HIDDEN __attribute__((visibility("hidden")))

/* A patched function, by the index its stub pushes. */
struct patched {
	meter_record_t *rec;
	uint32_t id;		/* the record's, in its stub */
	uint64_t copy;		/* where the displaced instructions run */
	uint64_t jump;		/* where the jump was written */
	uint8_t orig[5];	/* the bytes it replaced (meter_patch_detach) */
};

/*
 * patched[] is reserved once, whole (it never moves: the stubs of the
 * objects dlopen brings index it while other threads run); patch_nfuncs
 * of it are used.
 */
#define PATCH_FUNCS_MAX	(1U << 20)
extern struct patched *patched PATCH_HIDDEN;
extern size_t patch_nfuncs PATCH_HIDDEN;
int patch_reserve(void) PATCH_HIDDEN;

/* Around meter's own work while patching: its calls are not counted. */
void patch_quiet_begin(void) PATCH_HIDDEN;
void patch_quiet_end(void) PATCH_HIDDEN;

/* patch_install.c: one object's functions (patch_load.c picks them). */
int patch_object(const char *path, int64_t bias) PATCH_HIDDEN;
/* Addresses no patch may cover (attach: where stopped threads are). */
extern const uint64_t *patch_avoid PATCH_HIDDEN;
extern size_t patch_navoid PATCH_HIDDEN;
/* Every jump written taken back (meter_patch_detach). */
void patch_unpatch_all(void) PATCH_HIDDEN;

/* patch_calib.c: what a patched call costs, measured once, given to
 * libmeter; patch_install.c makes the stub it times. */
void patch_calibrate(void) PATCH_HIDDEN;
uint64_t patch_calib_stub(void **area, size_t *len) PATCH_HIDDEN;
long meter_patch_calib_leaf(long x) PATCH_HIDDEN;
long meter_patch_calib_plain(long x) PATCH_HIDDEN;

/* The return hooks, one per patched object; [0] is the first's. */
#define PATCH_HOOKS_MAX	1024
extern uint64_t patch_hooks[PATCH_HOOKS_MAX] PATCH_HIDDEN;
extern unsigned int patch_nhooks PATCH_HIDDEN;
bool patch_is_hook(uint64_t addr) PATCH_HIDDEN;

/* Around an unwinder (patch_unwind.c): the real return addresses back in
 * every live frame's slot; the caught frames popped and the rest hooked. */
void patch_unhook_all(void) PATCH_HIDDEN;
void patch_rehook_from(uintptr_t slot) PATCH_HIDDEN;

/* Once, before anything is patched: libmeter's notices. */
void patch_runtime_init(void) PATCH_HIDDEN;

/* The slow paths (patch_hook.S) and what they call. */
void meter_patch_entry(void) PATCH_HIDDEN;
void meter_patch_return(void) PATCH_HIDDEN;
uint64_t meter_patch_enter(uint64_t index, uint64_t *ra_slot) PATCH_HIDDEN;
uint64_t meter_patch_leave(uint64_t sp) PATCH_HIDDEN;

/*
 * The fast paths' templates (patch_hook.S): a field of 32 bits ends at
 * each of the labels named for it; the _q labels are 64-bit addresses.
 */
extern PATCH_HIDDEN const uint8_t meter_patch_stub[], meter_patch_stub_fast[],
	meter_patch_stub_end[], meter_patch_stub_index[],
	meter_patch_stub_entry_q[], meter_patch_stub_hook_q[],
	meter_patch_stub_tls[], meter_patch_stub_count[],
	meter_patch_stub_id[], meter_patch_stub_id2[],
	meter_patch_stub_tcount[], meter_patch_stub_tid[],
	meter_patch_stub_tid2[];
extern PATCH_HIDDEN const uint8_t meter_patch_ret[], meter_patch_ret_fast[],
	meter_patch_ret_end[], meter_patch_ret_leave_q[],
	meter_patch_ret_tls[];

#endif /* METER_PATCH_RUNTIME_H */
