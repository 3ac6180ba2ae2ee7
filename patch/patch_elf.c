// SPDX-License-Identifier: MIT
/*
 * An ELF object's functions and executable bytes (patch_elf.h).  The file
 * is read as a file, not as the loader mapped it, so the same code serves
 * an object before it runs and one already loaded; only x86-64 ELF64.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "patch_elf.h"

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* A pointer to size bytes at off of the file, NULL when they are not in it. */
static const void *at(const struct patch_obj *obj, uint64_t off, uint64_t size)
{
	if (off > obj->map_len || size > obj->map_len - off)
		return NULL;
	return (const uint8_t *)obj->map + off;
}

/* The same for a table of 8-byte-aligned entries (headers, symbols). */
static const void *at_table(const struct patch_obj *obj, uint64_t off,
			    uint64_t size)
{
	return off % 8 ? NULL : at(obj, off, size);
}

static int add_func(struct patch_obj *obj, size_t *cap, const char *name,
		    uint64_t addr, uint64_t size, enum patch_src src)
{
	struct patch_func *f;

	if (obj->nfuncs == *cap) {
		size_t n = *cap ? *cap * 2 : 256;

		f = realloc(obj->funcs, n * sizeof(*f));
		if (!f)
			return -ENOMEM;
		obj->funcs = f;
		*cap = n;
	}
	f = &obj->funcs[obj->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	f->addr = addr;
	f->size = size;
	f->src = src;
	obj->nfuncs++;
	return 0;
}

/*
 * A part of a function that GCC split off (f.cold, f.cold.1), entered by
 * a jump from inside f with f's frame: not a function of its own (its
 * time is f's), and no return address to catch.
 */
static bool function_part(const char *name)
{
	const char *c = strstr(name, ".cold");

	return c && (c[5] == '\0' || c[5] == '.');
}

/* The defined functions of one symbol table (SHT_SYMTAB or SHT_DYNSYM). */
static int read_symbols(struct patch_obj *obj, const Elf64_Ehdr *eh,
			const Elf64_Shdr *sh, unsigned int type, size_t *cap)
{
	enum patch_src src = type == SHT_SYMTAB ? PATCH_SRC_SYMTAB :
						  PATCH_SRC_DYNSYM;
	const Elf64_Shdr *s, *strs;
	const Elf64_Sym *sym;
	const char *str;
	size_t i, n;
	int ret;

	for (i = 0; i < eh->e_shnum; i++) {
		s = &sh[i];
		if (s->sh_type != type || s->sh_entsize != sizeof(*sym) ||
		    s->sh_link >= eh->e_shnum)
			continue;
		strs = &sh[s->sh_link];
		sym = at_table(obj, s->sh_offset, s->sh_size);
		str = at(obj, strs->sh_offset, strs->sh_size);
		if (!sym || !str || !strs->sh_size ||
		    str[strs->sh_size - 1] != '\0')
			continue;
		for (n = 0; n < s->sh_size / sizeof(*sym); n++) {
			if (ELF64_ST_TYPE(sym[n].st_info) != STT_FUNC ||
			    sym[n].st_shndx == SHN_UNDEF || !sym[n].st_value ||
			    !sym[n].st_size || sym[n].st_name >= strs->sh_size ||
			    function_part(str + sym[n].st_name))
				continue;
			ret = add_func(obj, cap, str + sym[n].st_name,
				       sym[n].st_value, sym[n].st_size, src);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* DWARF pointer encodings as .eh_frame uses them (DW_EH_PE_*). */
static int read_encoded(const uint8_t *p, const uint8_t *end, uint8_t enc,
			uint64_t field_addr, uint64_t *out)
{
	int64_t v;
	int len;

	switch (enc & 0x0f) {
	case 0x00: len = 8; break;		/* absptr */
	case 0x02: case 0x0a: len = 2; break;	/* udata2, sdata2 */
	case 0x03: case 0x0b: len = 4; break;	/* udata4, sdata4 */
	case 0x04: case 0x0c: len = 8; break;	/* udata8, sdata8 */
	default: return -1;
	}
	if (end - p < len)
		return -1;
	if (len == 2)
		v = (enc & 0x08) ? (int16_t)(p[0] | p[1] << 8) : (p[0] | p[1] << 8);
	else if (len == 4)
		v = (enc & 0x08) ? (int64_t)(int32_t)((uint32_t)p[0] |
			(uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			(uint32_t)p[3] << 24) :
			(int64_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			(uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
	else
		memcpy(&v, p, 8);
	if ((enc & 0x70) == 0x10)		/* pcrel */
		v += (int64_t)field_addr;
	else if (enc & 0x70)			/* textrel, datarel...: none here */
		return -1;
	*out = (uint64_t)v;
	return len;
}

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* What an FDE needs of its CIE. */
struct cie {
	uint8_t enc;			/* FDE pointers (DW_EH_PE_*) */
	bool aug_data;			/* 'z': FDEs have augmentation data */
	bool signal;			/* 'S': a signal trampoline's frame */
	const uint8_t *insns, *end;	/* the initial instructions */
};

static int read_cie(const uint8_t *p, const uint8_t *end, struct cie *c)
{
	const char *aug;
	uint8_t version;
	uint64_t len;

	if (end - p < 2)
		return -1;
	version = *p++;
	aug = (const char *)p;
	while (p < end && *p)
		p++;
	if (p++ >= end)
		return -1;
	c->enc = 0;
	c->aug_data = aug[0] == 'z';
	c->signal = strchr(aug, 'S') != NULL;
	c->end = end;
	uleb(&p, end);				/* code alignment */
	uleb(&p, end);				/* data alignment (sleb) */
	if (version == 1)
		p++;
	else
		uleb(&p, end);			/* return register */
	if (!c->aug_data) {
		c->insns = p;
		return 0;
	}
	len = uleb(&p, end);			/* augmentation length */
	c->insns = len < (uint64_t)(end - p) ? p + len : end;
	for (aug++; *aug && p < end; aug++) {
		if (*aug == 'R') {
			c->enc = *p;
			return 0;
		} else if (*aug == 'L') {
			p++;
		} else if (*aug == 'P') {
			uint64_t dummy;
			int n = read_encoded(p + 1, end, p[0] & 0x7f, 0, &dummy);

			if (n < 0)
				return -1;
			p += 1 + n;
		} else if (*aug != 'S' && *aug != 'B') {
			return -1;
		}
	}
	return 0;
}

/*
 * The CFA rule at the first instruction, from call frame instructions up
 * to the first advance; false when it is known and is not rsp + 8, the
 * rule of a function entered by a call.  GCC's .cold parts (and any code
 * entered by a jump from inside a function) begin with their function's
 * frame: patched as functions, their "return address" would be a word of
 * that frame.
 */
static bool cfa_rule(const uint8_t *p, const uint8_t *end, uint64_t *reg,
		     uint64_t *off)
{
	while (p < end) {
		uint8_t op = *p++;

		if ((op & 0xc0) == 0x40)	/* advance_loc */
			return true;
		if ((op & 0xc0) == 0x80) {	/* offset: a saved register */
			uleb(&p, end);
			continue;
		}
		if ((op & 0xc0) == 0xc0)	/* restore */
			continue;
		switch (op) {
		case 0x00:			/* nop */
			break;
		case 0x0c:			/* def_cfa */
			*reg = uleb(&p, end);
			*off = uleb(&p, end);
			break;
		case 0x0d:			/* def_cfa_register */
			*reg = uleb(&p, end);
			break;
		case 0x0e:			/* def_cfa_offset */
			*off = uleb(&p, end);
			break;
		case 0x0f:			/* def_cfa_expression */
			*reg = ~0ull;
			*off = 0;
			return true;
		default:			/* advance_loc1/2/4 and others */
			return op >= 0x02 && op <= 0x04;
		}
	}
	return true;
}

static bool entered_by_call(const struct cie *c, const uint8_t *fde_insns,
			    const uint8_t *fde_end)
{
	uint64_t reg = ~0ull, off = ~0ull;

	if (c->signal)			/* glibc's __restore_rt, and the like */
		return false;
	if (!cfa_rule(c->insns, c->end, &reg, &off) ||
	    !cfa_rule(fde_insns, fde_end, &reg, &off))
		return true;			/* not known: not refused */
	return reg == 7 && off == 8;		/* DWARF's rsp */
}

/* One FDE (at p, its CIE pointer read) into a function named after the file. */
static int read_fde(struct patch_obj *obj, size_t *cap, const uint8_t *sec,
		    uint64_t sec_addr, const uint8_t *p, const uint8_t *end,
		    uint32_t cie_off, const char *base)
{
	const uint8_t *cie = p - 4 - cie_off, *cie_end, *q;
	uint64_t begin, range;
	struct cie c;
	uint32_t cie_len;
	char name[256];
	int n, m;

	if (cie < sec || cie + 8 > end)
		return 0;
	memcpy(&cie_len, cie, 4);
	cie_end = cie + 4 + cie_len;
	if (cie_len == 0xffffffff || cie_end > end ||
	    read_cie(cie + 8, cie_end, &c))
		return 0;
	n = read_encoded(p, end, c.enc, sec_addr + (uint64_t)(p - sec), &begin);
	if (n < 0)
		return 0;
	m = read_encoded(p + n, end, c.enc & 0x0f, 0, &range);
	if (m < 0 || !begin || !range)
		return 0;
	q = p + n + m;
	if (c.aug_data) {
		uint64_t len = uleb(&q, end);

		q = len < (uint64_t)(end - q) ? q + len : end;
	}
	if (!entered_by_call(&c, q, end))
		return 0;
	snprintf(name, sizeof(name), "%s@0x%llx", base,
		 (unsigned long long)begin);
	return add_func(obj, cap, name, begin, range, PATCH_SRC_EH_FRAME);
}

/* A stripped object's functions: the FDEs of .eh_frame. */
static int read_eh_frame(struct patch_obj *obj, const Elf64_Shdr *s,
			 size_t *cap)
{
	const uint8_t *sec = at(obj, s->sh_offset, s->sh_size), *p, *end;
	const char *base = strrchr(obj->path, '/');
	uint32_t len, id;
	int ret;

	base = base ? base + 1 : obj->path;
	if (!sec)
		return 0;
	end = sec + s->sh_size;
	for (p = sec; end - p >= 8; p += 4 + len) {
		memcpy(&len, p, 4);
		if (!len || len == 0xffffffff || (uint64_t)(end - p - 4) < len)
			break;
		memcpy(&id, p + 4, 4);
		if (!id)			/* a CIE */
			continue;
		ret = read_fde(obj, cap, sec, s->sh_addr, p + 8, p + 4 + len,
			       id, base);
		if (ret)
			return ret;
	}
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct patch_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->src != y->src)		/* a symbol's name before an FDE's */
		return x->src < y->src ? -1 : 1;
	/* of aliases, the public name: malloc, not __libc_malloc */
	if (strspn(x->name, "_") != strspn(y->name, "_"))
		return strspn(x->name, "_") < strspn(y->name, "_") ? -1 : 1;
	if (strlen(x->name) != strlen(y->name))
		return strlen(x->name) < strlen(y->name) ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sorted, one function per address (aliases and FDE twins dropped). */
static void sort_funcs(struct patch_obj *obj)
{
	size_t i, n = 0;

	qsort(obj->funcs, obj->nfuncs, sizeof(*obj->funcs), by_addr);
	for (i = 0; i < obj->nfuncs; i++) {
		if (n && obj->funcs[n - 1].addr == obj->funcs[i].addr) {
			free(obj->funcs[i].name);
			continue;
		}
		obj->funcs[n++] = obj->funcs[i];
	}
	obj->nfuncs = n;
}

static int read_segments(struct patch_obj *obj, const Elf64_Ehdr *eh)
{
	const Elf64_Phdr *ph = at_table(obj, eh->e_phoff,
					(uint64_t)eh->e_phnum * sizeof(*ph));
	size_t i;

	if (!ph || eh->e_phentsize != sizeof(*ph))
		return -EINVAL;
	obj->text = calloc(eh->e_phnum ? eh->e_phnum : 1, sizeof(*obj->text));
	if (!obj->text)
		return -ENOMEM;
	for (i = 0; i < eh->e_phnum; i++) {
		const uint8_t *b;

		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		b = at(obj, ph[i].p_offset, ph[i].p_filesz);
		if (!b)
			return -EINVAL;
		obj->text[obj->ntext].addr = ph[i].p_vaddr;
		obj->text[obj->ntext].size = ph[i].p_filesz;
		obj->text[obj->ntext].bytes = b;
		obj->ntext++;
	}
	return 0;
}

/* The PLT's and the C runtime's sections, which .eh_frame also covers. */
static int read_glue(struct patch_obj *obj, const Elf64_Ehdr *eh,
		     const Elf64_Shdr *sh, const char *names)
{
	size_t i;

	obj->glue = calloc(eh->e_shnum ? eh->e_shnum : 1, sizeof(*obj->glue));
	if (!obj->glue)
		return -ENOMEM;
	for (i = 0; names && i < eh->e_shnum; i++) {
		const char *n;

		if (sh[i].sh_name >= sh[eh->e_shstrndx].sh_size)
			continue;
		n = names + sh[i].sh_name;
		if (!strncmp(n, ".plt", 4) || !strcmp(n, ".init") ||
		    !strcmp(n, ".fini")) {
			obj->glue[obj->nglue].addr = sh[i].sh_addr;
			obj->glue[obj->nglue].size = sh[i].sh_size;
			obj->nglue++;
		}
	}
	return 0;
}

/* The functions: .symtab, else .dynsym, else .eh_frame. */
static int read_funcs(struct patch_obj *obj, const Elf64_Ehdr *eh)
{
	const Elf64_Shdr *sh = at_table(obj, eh->e_shoff,
					(uint64_t)eh->e_shnum * sizeof(*sh));
	const char *names = NULL;
	size_t cap = 0, i;
	int ret;

	if (!sh || eh->e_shentsize != sizeof(*sh))
		return -EINVAL;
	if (eh->e_shstrndx < eh->e_shnum)
		names = at(obj, sh[eh->e_shstrndx].sh_offset,
			   sh[eh->e_shstrndx].sh_size);
	if (names && !sh[eh->e_shstrndx].sh_size)
		names = NULL;
	if (names && names[sh[eh->e_shstrndx].sh_size - 1] != '\0')
		names = NULL;
	ret = read_glue(obj, eh, sh, names);
	if (!ret)
		ret = read_symbols(obj, eh, sh, SHT_SYMTAB, &cap);
	if (ret || obj->nfuncs)
		return ret;
	/* stripped: the exported functions by name, the others by FDE */
	ret = read_symbols(obj, eh, sh, SHT_DYNSYM, &cap);
	if (ret)
		return ret;
	for (i = 0; names && i < eh->e_shnum; i++)
		if (sh[i].sh_name < sh[eh->e_shstrndx].sh_size &&
		    !strcmp(names + sh[i].sh_name, ".eh_frame"))
			return read_eh_frame(obj, &sh[i], &cap);
	return 0;
}

int patch_obj_open(const char *path, struct patch_obj *obj, char *err,
		   size_t errlen)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	int fd, ret;

	memset(obj, 0, sizeof(*obj));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*eh)) {
		close(fd);
		return fail(err, errlen, -EINVAL, "%s: not an ELF file", path);
	}
	obj->map_len = (size_t)st.st_size;
	obj->map = mmap(NULL, obj->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (obj->map == MAP_FAILED) {
		obj->map = NULL;
		return fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	}
	obj->path = strdup(path);
	eh = obj->map;
	if (!obj->path || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64) {
		patch_obj_close(obj);
		return fail(err, errlen, -EINVAL, "%s: not an x86-64 ELF64 file",
			    path);
	}
	obj->pie = eh->e_type == ET_DYN;
	obj->entry = eh->e_entry;
	ret = read_segments(obj, eh);
	if (!ret)
		ret = read_funcs(obj, eh);
	if (!ret && !obj->nfuncs)
		ret = -ENOENT;
	if (ret) {
		patch_obj_close(obj);
		return fail(err, errlen, ret, "%s: %s", path, ret == -ENOENT ?
			    "no functions found (no symbols, no .eh_frame)" :
			    "malformed ELF headers");
	}
	sort_funcs(obj);
	return 0;
}

void patch_obj_close(struct patch_obj *obj)
{
	size_t i;

	for (i = 0; i < obj->nfuncs; i++)
		free(obj->funcs[i].name);
	free(obj->funcs);
	free(obj->glue);
	free(obj->text);
	free(obj->path);
	if (obj->map)
		munmap(obj->map, obj->map_len);
	memset(obj, 0, sizeof(*obj));
}

const uint8_t *patch_obj_bytes(const struct patch_obj *obj, uint64_t addr,
			       uint64_t len)
{
	size_t i;

	for (i = 0; i < obj->ntext; i++) {
		const struct patch_text *t = &obj->text[i];

		if (addr >= t->addr && len <= t->size &&
		    addr - t->addr <= t->size - len)
			return t->bytes + (addr - t->addr);
	}
	return NULL;
}
