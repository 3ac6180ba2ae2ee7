/* SPDX-License-Identifier: MIT */
/*
 * Load-time patching (Documentation/patching.md), first part: what an
 * unmodified x86-64 ELF object offers to patch.  Its functions come from
 * the symbol tables, or, where it is stripped, from .eh_frame's FDEs
 * (named NAME@0xOFFSET after the object's file name), and its executable
 * bytes are kept for the plan (patch_plan.h) to read.
 *
 * The room's rule (hacking.md): patch/ depends on the runtime and the
 * contract (lib/, include/), never on the analysis.
 */
#ifndef METER_PATCH_ELF_H
#define METER_PATCH_ELF_H

#include <stddef.h>
#include <stdint.h>

/* Where a function's bounds came from. */
enum patch_src {
	PATCH_SRC_SYMTAB,	/* .symtab: the full symbol table */
	PATCH_SRC_DYNSYM,	/* .dynsym: the exported ones */
	PATCH_SRC_EH_FRAME,	/* an FDE of a stripped object */
};

struct patch_func {
	char *name;
	uint64_t addr;		/* link-time virtual address */
	uint64_t size;
	enum patch_src src;
	/* the plan's answer (patch_plan.h) */
	unsigned int patch_off;	/* where the jump goes: past an endbr64 */
	unsigned int patch_len;	/* whole instructions it displaces, >= 5 */
	const char *refused;	/* NULL: patchable; else why not */
};

/* An executable PT_LOAD segment's bytes, as the file holds them. */
struct patch_text {
	uint64_t addr;
	uint64_t size;
	const uint8_t *bytes;
};

/* Code that is not the program's functions: .plt*, .init, .fini. */
struct patch_range {
	uint64_t addr;
	uint64_t size;
};

struct patch_obj {
	char *path;
	int pie;		/* ET_DYN: addresses are offsets */
	uint64_t entry;		/* e_entry: _start, called by no one */
	struct patch_range *glue;	/* the linker's and the CRT's code */
	size_t nglue;
	struct patch_func *funcs;	/* sorted by address, no aliases */
	size_t nfuncs;
	struct patch_text *text;
	size_t ntext;
	void *map;		/* the file, mapped read-only */
	size_t map_len;
};

/*
 * Reads path's functions and executable bytes into *obj; 0, or -errno
 * with a message in err ("not an ELF file", "no functions found"...).
 */
int patch_obj_open(const char *path, struct patch_obj *obj, char *err,
		   size_t errlen);
void patch_obj_close(struct patch_obj *obj);

/* The bytes at [addr, addr + len) if one segment holds them all. */
const uint8_t *patch_obj_bytes(const struct patch_obj *obj, uint64_t addr,
			       uint64_t len);

#endif /* METER_PATCH_ELF_H */
