// SPDX-License-Identifier: MIT
/*
 * Function names for automatic records: the ELF symbol tables (.symtab and
 * .dynsym, so static functions too) of the executable or shared library
 * that holds an address, read from the file on disk the first time a name
 * from that module is needed.  An address no symbol covers is named
 * "module+0xoffset".  Never called on the per-call path.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meter_internal.h"

struct sym {
	uintptr_t start;	/* module-relative (st_value) */
	uintptr_t size;
	const char *name;	/* into the mapped file */
	int rank;		/* global before weak before local */
};

struct module {
	struct module *next;
	uintptr_t base;		/* dlpi_addr */
	char *path;
	const char *shortname;
	void *map;
	size_t maplen;
	struct sym *syms;
	size_t nsyms;
};

static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *modules;

struct find {
	uintptr_t addr;
	uintptr_t base;
	const char *name;
	bool found;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->addr >= lo &&
		    f->addr < lo + ph->p_memsz) {
			f->base = info->dlpi_addr;
			f->name = info->dlpi_name;
			f->found = true;
			return 1;
		}
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->rank - y->rank;
}

static void add_table(struct module *m, const ElfW(Ehdr) *eh,
		      const ElfW(Shdr) *sh, size_t len, size_t *cap)
{
	const ElfW(Shdr) *strsh;
	const ElfW(Sym) *s;
	const char *str;
	size_t i, n;

	if (sh->sh_link >= eh->e_shnum || !sh->sh_entsize ||
	    sh->sh_offset + sh->sh_size > len)
		return;
	strsh = (const ElfW(Shdr) *)((const char *)eh + eh->e_shoff) +
		sh->sh_link;
	if (strsh->sh_offset + strsh->sh_size > len || !strsh->sh_size)
		return;
	str = (const char *)eh + strsh->sh_offset;
	s = (const ElfW(Sym) *)((const char *)eh + sh->sh_offset);
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		int type = ELF64_ST_TYPE(s[i].st_info);
		int bind = ELF64_ST_BIND(s[i].st_info);

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    s[i].st_shndx == SHN_UNDEF || !s[i].st_value ||
		    s[i].st_name >= strsh->sh_size ||
		    str[strsh->sh_size - 1] != 0)
			continue;
		if (m->nsyms == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			struct sym *ns = realloc(m->syms, nc * sizeof(*ns));

			if (!ns)
				return;
			m->syms = ns;
			*cap = nc;
		}
		m->syms[m->nsyms].start = s[i].st_value;
		m->syms[m->nsyms].size = s[i].st_size;
		m->syms[m->nsyms].name = str + s[i].st_name;
		m->syms[m->nsyms].rank = bind == STB_GLOBAL ? 0 :
					 bind == STB_WEAK ? 1 : 2;
		m->nsyms++;
	}
}

static void load_symbols(struct module *m)
{
	const ElfW(Ehdr) *eh;
	const ElfW(Shdr) *sh;
	struct stat st;
	size_t cap = 0;
	int fd, i;

	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return;
	}
	m->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		return;
	}
	m->maplen = (size_t)st.st_size;
	eh = m->map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > m->maplen)
		return;
	sh = (const ElfW(Shdr) *)((const char *)eh + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM)
			add_table(m, eh, &sh[i], m->maplen, &cap);
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
}

static struct module *get_module(const struct find *f)
{
	struct module *m;
	const char *slash;

	for (m = modules; m; m = m->next)
		if (m->base == f->base)
			return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->base = f->base;
	m->path = strdup(f->name && *f->name ? f->name : "/proc/self/exe");
	if (!m->path) {
		free(m);
		return NULL;
	}
	if (f->name && *f->name) {
		slash = strrchr(m->path, '/');
		m->shortname = slash ? slash + 1 : m->path;
	} else {
		m->shortname = program_invocation_short_name;
	}
	load_symbols(m);
	m->next = modules;
	modules = m;
	return m;
}

static const char *lookup(const struct module *m, uintptr_t off)
{
	size_t lo = 0, hi = m->nsyms;

	/* the last symbol starting at or before off */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->syms[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	/* the best-ranked alias at that address */
	while (lo > 0 && m->syms[lo - 1].start == m->syms[lo].start)
		lo--;
	if (off == m->syms[lo].start ||
	    off < m->syms[lo].start + m->syms[lo].size)
		return m->syms[lo].name;
	return NULL;
}

/* C++ names read better demangled; libstdc++'s demangler if it is loaded. */
static char *demangle(const char *name)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn fn;
	static bool looked;
	int status = -1;
	char *out;

	if (strncmp(name, "_Z", 2))
		return NULL;
	if (!looked) {
		fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = true;
	}
	if (!fn)
		return NULL;
	out = fn(name, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
}

void meter_symbols_lock(void)
{
	pthread_mutex_lock(&sym_lock);
}

void meter_symbols_unlock(bool child)
{
	if (child)
		pthread_mutex_init(&sym_lock, NULL);
	else
		pthread_mutex_unlock(&sym_lock);
}

char *meter_symbol_name(uintptr_t addr)
{
	struct find f = { .addr = addr };
	struct module *m = NULL;
	const char *name = NULL;
	char *out = NULL;

	pthread_mutex_lock(&sym_lock);
	dl_iterate_phdr(find_module, &f);
	if (f.found)
		m = get_module(&f);
	if (m)
		name = lookup(m, addr - m->base);
	/* whole names: the kernel's copy is cut where it is sent (nlreg.c) */
	if (name) {
		out = demangle(name);
		if (!out)
			out = strdup(name);
	} else if (m) {
		if (asprintf(&out, "%s+0x%lx", m->shortname,
			     (unsigned long)(addr - m->base)) < 0)
			out = NULL;
	} else if (asprintf(&out, "0x%lx", (unsigned long)addr) < 0) {
		out = NULL;
	}
	pthread_mutex_unlock(&sym_lock);
	return out;
}
