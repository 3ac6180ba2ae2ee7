/* SPDX-License-Identifier: MIT */
/*
 * Which functions of an object can have their entry patched, and why not
 * the others (Documentation/patching.md).  An entry is replaced by a
 * 5-byte jump (after an endbr64, which stays for indirect calls); the
 * whole instructions it displaces are copied elsewhere and run from
 * there, so they must mean the same at another address.  Refused: a
 * function under 5 bytes; one whose 5 overwritten bytes another
 * instruction of the object branches into (a loop back into them, a .cold
 * part coming back; the displaced instructions past them stay in place,
 * so a branch there is harmless); one whose displaced instructions
 * return, trap or make a system call, or jump in a way that has no 32-bit
 * form (loop, jrcxz), or cannot be decoded.  Not refusals: a RIP-relative
 * operand and a direct jump or conditional jump (the early exit of most
 * -O2 functions) are re-encoded for the copy, which is placed within
 * 2 GiB of the object; a direct call is copied as a push of the address
 * after it in the original and a jump, so that the callee returns into
 * the function itself, whose frame the unwinder knows.
 */
#ifndef METER_PATCH_PLAN_H
#define METER_PATCH_PLAN_H

#include "patch_elf.h"

/* Why a function was refused (struct patch_func.refused). */
#define PATCH_REFUSED_SMALL	"under 5 bytes: no room for the jump"
#define PATCH_REFUSED_INTO	"jumped into: a branch of the object lands in its first bytes"
#define PATCH_REFUSED_RET	"a return, trap or system call among its first bytes"
#define PATCH_REFUSED_JUMP	"a jump with no 32-bit form (loop, jrcxz) among its first bytes"
#define PATCH_REFUSED_DECODE	"its first bytes do not decode"
#define PATCH_REFUSED_BYTES	"its bytes are not in an executable segment"
#define PATCH_REFUSED_GLUE	"the linker's or the C runtime's code (.plt, .init, .fini)"
#define PATCH_REFUSED_ENTRY	"the program's entry point, which nothing calls"

struct patch_counts {
	size_t patchable;
	size_t refused;
};

/* Fills each function's patch_off, patch_len and refused; 0 or -errno. */
int patch_plan(struct patch_obj *obj, struct patch_counts *counts,
	       char *err, size_t errlen);

#endif /* METER_PATCH_PLAN_H */
