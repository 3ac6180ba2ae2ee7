// SPDX-License-Identifier: MIT
/*
 * The process's executable mappings for the profile file (the signal
 * backend; meter.ko reads its own, kmod/maps.c): each loaded object's
 * executable PT_LOAD segments, as the kernel maps them (page-aligned, the
 * file offset of the first page), by the object's path (made absolute
 * when it was loaded by a relative one); the program's own through
 * /proc/self/exe.  Read once, at exit, when the file is
 * written: an object dlclose'd before then is missing, and its samples
 * stay with the function that was current.
 */
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meter_internal.h"
#include "profile.h"

struct maps {
	struct meter_map_row *v;
	size_t n, cap;
	uintptr_t page;
};

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct maps *m = arg;
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	int i;

	(void)size;
	if (!path || !path[0]) {
		ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (len <= 0)
			return 0;
		exe[len] = 0;
		path = exe;
	}
	/* the vDSO ("linux-vdso.so.1"); a relative path, made whole */
	if (!strchr(path, '/') ||
	    (path[0] != '/' && !realpath(path, exe)))
		return 0;
	if (path[0] != '/')
		path = exe;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		struct meter_map_row *r;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (m->n == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 32;
			struct meter_map_row *v = realloc(m->v, cap * sizeof(*v));

			if (!v)
				return 1;
			m->v = v;
			m->cap = cap;
		}
		r = &m->v[m->n];
		*r = (struct meter_map_row){
			.start = start & ~(m->page - 1),
			.end = start + ph->p_memsz,
			.pgoff = ph->p_offset & ~(uint64_t)(m->page - 1),
			.path = strdup(path),
		};
		if (!r->path)
			return 1;
		m->n++;
	}
	return 0;
}

size_t meter_maps_read(struct meter_map_row **out)
{
	struct maps m = { .page = (uintptr_t)sysconf(_SC_PAGESIZE) };

	if (dl_iterate_phdr(add_object, &m)) {
		meter_maps_free(m.v, m.n);
		m.v = NULL;
		m.n = 0;
	}
	*out = m.v;
	return m.n;
}

void meter_maps_free(struct meter_map_row *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}
