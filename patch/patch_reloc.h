/* SPDX-License-Identifier: MIT */
/*
 * The copy of a patched entry's displaced instructions (patch_reloc.c).
 */
#ifndef METER_PATCH_RELOC_H
#define METER_PATCH_RELOC_H

#include <stddef.h>
#include <stdint.h>

#include "patch_elf.h"

/*
 * Writes f's displaced instructions, re-encoded for out_addr, and a jump
 * back, into out (room bytes; out_addr is where out will run, within
 * 2 GiB of the function).  bias: the object's load address minus its
 * link address.  Reads the function's bytes in memory.  The bytes
 * written, or -errno (-ERANGE: out of a 32-bit displacement's reach).
 */
int patch_reloc(const struct patch_func *f, int64_t bias, uint8_t *out,
		size_t room, uint64_t out_addr);

#endif /* METER_PATCH_RELOC_H */
