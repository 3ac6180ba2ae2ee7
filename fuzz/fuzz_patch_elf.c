// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the ELF reader and the patch plan of meter-run --patch
 * (patch/patch_elf.c, patch/patch_plan.c).  The executable a user names
 * is read as a file at load time, its headers, symbol tables and
 * .eh_frame trusted by nothing: a malformed one must be refused with a
 * message, never read past its end.  The input is the file (through a
 * memfd, as the reader opens a path); what the reader accepts must keep
 * its promises (functions sorted, one per address, every patchable entry
 * inside its function), and the plan must decide every function.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "../patch/patch_elf.c"
#include "../patch/patch_plan.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_obj(struct patch_obj *obj)
{
	struct patch_counts c;
	char err[256];
	size_t i;

	for (i = 1; i < obj->nfuncs; i++)
		FUZZ_CHECK(obj->funcs[i - 1].addr < obj->funcs[i].addr,
			   "functions sorted, one per address");
	if (patch_plan(obj, &c, err, sizeof(err)))
		return;
	FUZZ_CHECK(c.patchable + c.refused == obj->nfuncs,
		   "the plan decides every function");
	for (i = 0; i < obj->nfuncs; i++) {
		const struct patch_func *f = &obj->funcs[i];

		if (f->refused)
			continue;
		FUZZ_CHECK(f->patch_len >= 5 &&
			   f->patch_off + f->patch_len <= f->size,
			   "a patchable entry lies inside its function");
		FUZZ_CHECK(patch_obj_bytes(obj, f->addr, f->size) != NULL,
			   "a patchable function's bytes are in the file");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch_obj obj;
	char path[64], err[256];
	int fd = memfd_create("fuzz_patch_elf", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!patch_obj_open(path, &obj, err, sizeof(err))) {
			check_obj(&obj);
			patch_obj_close(&obj);
		} else {
			FUZZ_CHECK(err[0], "a refusal says why");
		}
	}
	close(fd);
	return 0;
}
