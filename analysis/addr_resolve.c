// SPDX-License-Identifier: MIT
/*
 * Where meter.ko's sampled addresses are (addrs.h): each address through
 * the process's mapping that holds it to a file and an offset, the
 * offset through the file's program headers to an address of the ELF
 * file, and that through its DWARF (elfutils' libdw, separate debug files
 * found as gdb finds them) to a line and the innermost function, inline
 * frames included.  The plugin puts what it adds on lines of the file
 * "<meter>" (Documentation/gcc-plugin.md), so those are meter's own, as
 * is all of libmeter.  An address no map, file or record covers is left
 * unresolved, and stays with the function that was current.  A file not
 * built for meter (the C library; a program patched at load time, whose
 * functions count their own entries only) is named by its symbols alone:
 * no inlined copy of its functions is counted, and decoding its debug
 * information, detached and compressed where installed (libc6-dbg), took
 * 400 million instructions a report.
 *
 * The files are those the profile's maps name, opened as they are now:
 * regular files only (a FIFO named in a profile would block, a device
 * could do something on open), read, never run.  A file rebuilt since the run gives wrong answers; nothing here can
 * tell (the maps carry no build id).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addrs.h"

/* One file of the maps, opened once. */
struct obj {
	const char *path;	/* the map's */
	Dwfl *dwfl;
	Dwfl_Module *mod;	/* NULL: not readable as ELF */
	Elf *elf;
	Dwarf_Addr bias;
	bool meter;		/* libmeter's: all of it meter's own */
	bool built;		/* built for meter: its DWARF is read */
	bool plugin;		/* it has "<meter>" lines */
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static bool is_meter_file(const char *name)
{
	const char *base = name ? strrchr(name, '/') : NULL;

	return name && !strcmp(base ? base + 1 : name, "<meter>");
}

/* Whether any compilation unit of mod has lines of "<meter>". */
static bool has_meter_lines(Dwfl_Module *mod)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Files *files;
		size_t n, i;

		if (dwarf_getsrcfiles(cu, &files, &n))
			continue;
		for (i = 0; i < n; i++)
			if (is_meter_file(dwarf_filesrc(files, i, NULL, NULL)))
				return true;
	}
	return false;
}

/* Whether a symbol table of elf's section scn names one of meter's (its
 * API, its inline paths' meter__ symbols), or calls
 * -finstrument-functions' hook (which the C library defines). */
static bool names_meter_symbol(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	const char *name;
	GElf_Sym sym;

	for (i = 0; data && i < n; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name && (!strncmp(name, "meter_", 6) ||
			     (sym.st_shndx == SHN_UNDEF &&
			      !strcmp(name, "__cyg_profile_func_enter"))))
			return true;
	}
	return false;
}

/*
 * Whether elf was built for meter: it has function records (the plugin's
 * and the macro's section "meter_records"), or its symbols name meter's
 * API and entry points or -finstrument-functions' hook.
 */
static bool built_for_meter(Elf *elf)
{
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr sh;
	size_t shstr;

	if (elf_getshdrstrndx(elf, &shstr))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstr, sh.sh_name);
		if (name && !strcmp(name, "meter_records"))
			return true;
		if ((sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB) &&
		    names_meter_symbol(elf, scn, &sh))
			return true;
	}
	return false;
}

/*
 * meter's own files: libmeter.so.N, libmeter-patch.so, libmeter-alloc.so,
 * and the interpreters' modules, whose names their languages fix: Lua's
 * meter.so (require 'meter') and Python's _meter.*.so.
 */
static bool is_meter_object(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	return !strncmp(base, "libmeter.so", 11) ||
	       !strncmp(base, "libmeter-", 9) || !strcmp(base, "meter.so") ||
	       (!strncmp(base, "_meter.", 7) && n > 10 &&
		!strcmp(base + n - 3, ".so"));
}

/*
 * path opened for reading if it is a regular file: looked at first
 * through an O_PATH descriptor, so that a device a profile names (a
 * watchdog, a tape) is never opened.  -1: not one.
 */
static int open_regular(const char *path)
{
	char proc[64];
	struct stat st;
	int pfd = open(path, O_PATH | O_CLOEXEC), fd = -1;

	if (pfd < 0)
		return -1;
	if (!fstat(pfd, &st) && S_ISREG(st.st_mode)) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	}
	close(pfd);
	return fd;
}

static void obj_open(struct obj *o, const char *path)
{
	int fd;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->meter = is_meter_object(path);
	fd = open_regular(path);
	if (fd < 0)
		return;
	o->dwfl = dwfl_begin(&offline_callbacks);
	if (!o->dwfl) {
		close(fd);
		return;
	}
	/* libdwfl owns fd once it has made a module of it, not before */
	o->mod = dwfl_report_offline(o->dwfl, path, path, fd);
	if (!o->mod)
		close(fd);
	dwfl_report_end(o->dwfl, NULL, NULL);
	if (o->mod)
		o->elf = dwfl_module_getelf(o->mod, &o->bias);
	if (!o->elf)
		o->mod = NULL;
	o->built = o->mod && built_for_meter(o->elf);
	o->plugin = o->built && has_meter_lines(o->mod);
}

/* The ELF address of the file offset off: its PT_LOAD's. */
static bool obj_vaddr(const struct obj *o, uint64_t off, uint64_t *vaddr)
{
	size_t n, i;

	if (elf_getphdrnum(o->elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(o->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
			*vaddr = off - ph.p_offset + ph.p_vaddr;
			return true;
		}
	}
	return false;
}

/* The DIE that declares die's function: past its origins and specification. */
static Dwarf_Die declaration_of(Dwarf_Die *die)
{
	Dwarf_Die d = *die, next;
	Dwarf_Attribute a;
	int hops;

	for (hops = 0; hops < 8; hops++) {
		if (!(dwarf_attr(&d, DW_AT_abstract_origin, &a) ||
		      dwarf_attr(&d, DW_AT_specification, &a)) ||
		    !dwarf_formref_die(&a, &next))
			break;
		d = next;
	}
	return d;
}

/*
 * The enclosing namespaces and classes of decl, "a::b::", into buf: a
 * function of internal linkage has no linkage name to demangle.
 */
static void scope_prefix(Dwarf_Die *decl, char *buf, size_t len)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes_die(decl, &scopes), k;
	size_t used = 0;

	buf[0] = 0;
	for (k = n - 1; k >= 1; k--) {
		int tag = dwarf_tag(&scopes[k]);
		const char *name = dwarf_diename(&scopes[k]);

		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			continue;
		if (!name)
			name = tag == DW_TAG_namespace ?
				"(anonymous namespace)" : "{unnamed}";
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
					 "%s::", name);
	}
	if (used >= len)
		buf[0] = 0;
	free(scopes);
}

/*
 * A function's name as a record of it would be: its linkage name
 * demangled, else its name within its scopes.  NULL: none, or ENOMEM
 * (*nomem).
 */
static char *die_func_name(Dwarf_Die *die, bool *nomem)
{
	Dwarf_Die decl;
	Dwarf_Attribute a;
	const char *name;
	char prefix[512], *out;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) &&
	    (name = dwarf_formstring(&a))) {
		out = meter_name_demangled(name);
		*nomem = !out;
		return out;
	}
	decl = declaration_of(die);
	name = dwarf_diename(&decl);
	if (!name)
		return NULL;
	scope_prefix(&decl, prefix, sizeof(prefix));
	if (asprintf(&out, "%s%s", prefix, name) < 0) {
		*nomem = true;
		return NULL;
	}
	return out;
}

/*
 * A symbol of a part GCC split off or specialised names the function it
 * came from ("f.cold", "f.part.0", "f.constprop.0"; demangled, "f(int)
 * [clone .cold]"): cut there, the function's own name is left.
 */
static void drop_clone_suffix(char *name)
{
	char *clone = strstr(name, " [clone ");

	if (clone) {
		*clone = 0;
		return;
	}
	if (!strchr(name, '('))
		name[strcspn(name, ".")] = 0;
}

/* The function of the symbol at addr into w->func (none: none). -1 on
 * ENOMEM. */
static int symbol_func(const struct obj *o, Dwarf_Addr addr,
		       struct addr_where *w)
{
	const char *sym = dwfl_module_addrname(o->mod, addr);
	char *name;

	if (!sym)
		return 0;
	name = meter_name_demangled(sym);
	if (!name)
		return -1;
	/* a record named from the symbol (--patch) is the clone's own */
	w->sym = strdup(name);
	if (!w->sym) {
		free(name);
		return -1;
	}
	drop_clone_suffix(name);
	if (!strcmp(name, w->sym)) {
		free(w->sym);
		w->sym = NULL;
	}
	w->func = name;
	return 0;
}

/*
 * The innermost function at addr, inline frames first (the symbol table's
 * where there are no debug records), into w->func, and the functions it
 * is inlined into, innermost first, into w->outer.  -1 on ENOMEM.
 */
static int innermost_func(const struct obj *o, Dwarf_Addr addr,
			  struct addr_where *w)
{
	Dwarf_Addr cu_bias;
	Dwarf_Die *cu = dwfl_module_addrdie(o->mod, addr, &cu_bias);
	Dwarf_Die *scopes = NULL;
	bool nomem = false;
	char *name;
	int n, k;

	n = cu ? dwarf_getscopes(cu, addr - cu_bias, &scopes) : 0;
	/*
	 * getscopes stops at the innermost inlined subroutine, whose
	 * parents it gives are its abstract definition's (the CU): the
	 * scopes of that DIE itself go on through the functions it is
	 * inlined into.
	 */
	for (k = 0; k < n; k++) {
		if (dwarf_tag(&scopes[k]) == DW_TAG_inlined_subroutine) {
			Dwarf_Die inl = scopes[k], *all = NULL;
			int m = dwarf_getscopes_die(&inl, &all);

			if (m > 0) {
				free(scopes);
				scopes = all;
				n = m;
			} else {
				free(all);
			}
			break;
		}
		if (dwarf_tag(&scopes[k]) == DW_TAG_subprogram)
			break;
	}
	for (k = 0; k < n && !nomem; k++) {
		int tag = dwarf_tag(&scopes[k]);
		char **more;

		if (tag != DW_TAG_subprogram &&
		    tag != DW_TAG_inlined_subroutine)
			continue;
		name = die_func_name(&scopes[k], &nomem);
		if (!name)
			continue;
		if (!w->func) {
			w->func = name;
		} else {
			more = realloc(w->outer,
				       (w->nouter + 1) * sizeof(*more));
			if (!more) {
				free(name);
				nomem = true;
				break;
			}
			w->outer = more;
			w->outer[w->nouter++] = name;
		}
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(scopes);
	if (w->func || nomem)
		return nomem ? -1 : 0;
	w->no_records = true;
	return symbol_func(o, addr, w);
}

static bool on_meter_line(const struct obj *o, Dwarf_Addr addr)
{
	Dwfl_Line *line = dwfl_module_getsrc(o->mod, addr);

	return line && is_meter_file(dwfl_lineinfo(line, NULL, NULL, NULL,
						   NULL, NULL));
}

/* Where ip, at file offset off of o, is. */
static int obj_where(const struct obj *o, uint64_t off, struct addr_where *w)
{
	uint64_t vaddr;
	Dwarf_Addr addr;

	if (o->meter) {
		w->kind = ADDR_METER;
		return 0;
	}
	if (!o->mod || !obj_vaddr(o, off, &vaddr))
		return 0;
	addr = vaddr + o->bias;
	if (o->plugin && on_meter_line(o, addr)) {
		w->kind = ADDR_METER;
		return 0;
	}
	if (o->built ? innermost_func(o, addr, w) : symbol_func(o, addr, w))
		return -1;
	if (!w->func)
		return 0;
	if (!strncmp(w->func, "meter__", 7)) {
		addr_where_free(w, 1);
		w->kind = ADDR_METER;
		return 0;
	}
	w->kind = ADDR_FUNC;
	return 0;
}

static const struct meter_map_row *map_of(const struct meter_profile *p,
					  const struct meter_addr *a)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++) {
		const struct meter_map_row *m = &p->maps[i];

		if (m->proc == a->proc && m->start <= a->ip && a->ip < m->end)
			return m;
	}
	return NULL;
}

static struct obj *obj_of(struct obj *objs, size_t *nobjs, const char *path)
{
	size_t i;

	for (i = 0; i < *nobjs; i++)
		if (!strcmp(objs[i].path, path))
			return &objs[i];
	obj_open(&objs[*nobjs], path);
	return &objs[(*nobjs)++];
}

int addr_resolve(const struct meter_profile *p, struct addr_where *out)
{
	struct obj *objs = calloc(p->nmaps ? p->nmaps : 1, sizeof(*objs));
	size_t nobjs = 0, i;
	int ret = 0;

	if (!objs)
		return -1;
	memset(out, 0, p->naddrs * sizeof(*out));	/* ADDR_UNRESOLVED */
	elf_version(EV_CURRENT);
	for (i = 0; i < p->naddrs && !ret; i++) {
		const struct meter_addr *a = &p->addrs[i];
		const struct meter_map_row *m = map_of(p, a);
		struct obj *o;

		if (!m)
			continue;
		o = obj_of(objs, &nobjs, m->path);
		out[i].plugin = o->plugin;
		ret = obj_where(o, m->pgoff + (a->ip - m->start), &out[i]);
	}
	for (i = 0; i < nobjs; i++)
		if (objs[i].dwfl)
			dwfl_end(objs[i].dwfl);
	free(objs);
	if (ret)
		addr_where_free(out, p->naddrs);
	return ret;
}

void addr_where_free(struct addr_where *w, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		free(w[i].func);
		w[i].func = NULL;
		free(w[i].sym);
		w[i].sym = NULL;
		for (k = 0; k < w[i].nouter; k++)
			free(w[i].outer[k]);
		free(w[i].outer);
		w[i].outer = NULL;
		w[i].nouter = 0;
	}
}
