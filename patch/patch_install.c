// SPDX-License-Identifier: MIT
/*
 * libmeter-patch.so: a program built without meter's flags, profiled by
 * patching its function entries at load time (Documentation/patching.md).
 * meter-run --patch preloads it with METER_PATCH=exe; its constructor runs
 * after libmeter's and before the program's own, while the process has
 * one thread, and patches every function of the executable that the plan
 * (patch_plan.h) allows: a stub and a copy of the displaced instructions
 * for each in an area within 2 GiB of the text, then a 5-byte jump over
 * each entry.
 */
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "patch_plan.h"
#include "patch_reloc.h"
#include "patch_runtime.h"

#define STUB_LEN	32	/* push imm32; jmp *0(%rip); .quad entry */
#define SLOT_LEN	128	/* a stub and a copy */
#define PATCH_EXCLUDED	"excluded"

/* The C runtime's own functions, run before the constructor or after exit. */
static bool crt_function(const char *name)
{
	static const char *const crt[] = {
		"_start", "_init", "_fini", "deregister_tm_clones",
		"register_tm_clones", "__do_global_dtors_aux", "frame_dummy",
		"__libc_csu_init", "__libc_csu_fini", "_dl_relocate_static_pie",
	};
	size_t i;

	for (i = 0; i < sizeof(crt) / sizeof(crt[0]); i++)
		if (!strcmp(name, crt[i]))
			return true;
	return false;
}

struct main_obj {
	int64_t bias;
	bool cxx;
};

static int find_main(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct main_obj *m = arg;

	(void)size;
	if (!info->dlpi_name[0] && !m->bias)
		m->bias = (int64_t)info->dlpi_addr;
	if (strstr(info->dlpi_name, "libstdc++"))
		m->cxx = true;
	return 0;
}

/* Near the object's text: within 2 GiB of all of it, below its start. */
static uint8_t *area_near(const struct patch_obj *obj, int64_t bias,
			  size_t len)
{
	uint64_t lo = obj->text[0].addr + (uint64_t)bias, at;
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	for (at = (lo & ~(uint64_t)0xfffff) - (1ull << 24);
	     at > len && lo - at < (1ull << 30); at -= 1ull << 24) {
		p = mmap((void *)(uintptr_t)(at - len), len,
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (p != MAP_FAILED)
			return p;
	}
	return NULL;
}

static void write_stub(uint8_t *stub, uint32_t index)
{
	uint64_t entry = (uint64_t)meter_patch_entry;
	static const uint8_t jmp[] = { 0xff, 0x25, 0, 0, 0, 0 };

	stub[0] = 0x68;				/* push imm32 */
	memcpy(stub + 1, &index, 4);
	memcpy(stub + 5, jmp, sizeof(jmp));	/* jmp *0(%rip) */
	memcpy(stub + 11, &entry, 8);
}

/* Whether METER_PATCH_EXCLUDE (globs, comma-separated) names f. */
static bool excluded(const char *name)
{
	const char *ex = getenv("METER_PATCH_EXCLUDE");
	char buf[256];

	while (ex && *ex) {
		size_t n = strcspn(ex, ",");

		if (n && n < sizeof(buf)) {
			memcpy(buf, ex, n);
			buf[n] = '\0';
			if (!fnmatch(buf, name, 0))
				return true;
		}
		ex += n + (ex[n] == ',');
	}
	return crt_function(name);
}

/* The stubs and copies; a function that cannot be copied is refused. */
static size_t build_area(struct patch_obj *obj, int64_t bias, uint8_t *area,
			 size_t *refused)
{
	size_t i, n = 0;
	int len;

	for (i = 0; i < obj->nfuncs; i++) {
		struct patch_func *f = &obj->funcs[i];
		uint8_t *slot = area + n * SLOT_LEN;

		if (f->refused)
			continue;
		len = patch_reloc(f, bias, slot + STUB_LEN,
				  SLOT_LEN - STUB_LEN,
				  (uint64_t)(uintptr_t)(slot + STUB_LEN));
		if (len < 0) {
			f->refused = "its first instructions cannot be copied";
			(*refused)++;
			continue;
		}
		patched[n].rec = meter_record_register(f->name);
		if (!patched[n].rec) {
			f->refused = "no function id left";
			(*refused)++;
			continue;
		}
		patched[n].copy = (uint64_t)(uintptr_t)(slot + STUB_LEN);
		write_stub(slot, (uint32_t)n);
		n++;
	}
	return n;
}

/* Every executable segment writable while the jumps are written. */
static int text_protect(const struct patch_obj *obj, int64_t bias, int prot)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i;

	for (i = 0; i < obj->ntext; i++) {
		uint64_t lo = (obj->text[i].addr + (uint64_t)bias) &
			      ~(uint64_t)(page - 1);
		uint64_t hi = obj->text[i].addr + (uint64_t)bias +
			      obj->text[i].size;

		if (mprotect((void *)(uintptr_t)lo, hi - lo, prot))
			return -errno;
	}
	return 0;
}

static void write_jumps(const struct patch_obj *obj, int64_t bias,
			const uint8_t *area)
{
	size_t i, n = 0;

	for (i = 0; i < obj->nfuncs; i++) {
		const struct patch_func *f = &obj->funcs[i];
		uint8_t *at = (uint8_t *)(uintptr_t)(f->addr + f->patch_off +
						     (uint64_t)bias);
		int32_t rel;

		if (f->refused)
			continue;
		rel = (int32_t)((int64_t)(uintptr_t)(area + n * SLOT_LEN) -
				(int64_t)(uintptr_t)(at + 5));
		at[0] = 0xe9;
		memcpy(at + 1, &rel, 4);
		n++;
	}
}

/* A refusal of one of the program's own functions, which it may call. */
static bool program_refused(const char *why)
{
	return why && strcmp(why, PATCH_EXCLUDED) &&
	       strcmp(why, PATCH_REFUSED_GLUE) &&
	       strcmp(why, PATCH_REFUSED_ENTRY);
}

/*
 * For meter-run (METER_PATCH_REPORT, a directory): the refused functions
 * and why, "NAME<TAB>REASON" a line, in patch.PID, so that the profile
 * names them rather than leaving them out.
 */
static void report_refused(const struct patch_obj *obj)
{
	const char *dir = getenv("METER_PATCH_REPORT");
	char path[PATH_MAX];
	size_t i;
	FILE *f;

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/patch.%d", dir, (int)getpid());
	f = fopen(path, "we");
	if (!f)
		return;
	for (i = 0; i < obj->nfuncs; i++)
		if (program_refused(obj->funcs[i].refused))
			fprintf(f, "%s\t%s\n", obj->funcs[i].name,
				obj->funcs[i].refused);
	fclose(f);
}

static void report(const struct patch_obj *obj, size_t done, size_t refused)
{
	size_t i;

	report_refused(obj);
	if (getenv("METER_PATCH_LIST"))
		for (i = 0; i < obj->nfuncs; i++)
			fprintf(stderr, "meter: %s %s%s%s\n",
				obj->funcs[i].refused ? "refused" : "patched",
				obj->funcs[i].name,
				obj->funcs[i].refused ? ": " : "",
				obj->funcs[i].refused ? obj->funcs[i].refused :
							"");
	if (!getenv("METER_QUIET"))
		fprintf(stderr, "meter: patched %zu functions of %s, refused %zu\n",
			done, obj->path, refused);
}

/* The plan, with the runtime's own exclusions, counted again. */
static size_t plan_exe(struct patch_obj *obj, size_t *refused)
{
	struct patch_counts c;
	char err[256];
	size_t i;

	if (patch_plan(obj, &c, err, sizeof(err))) {
		fprintf(stderr, "meter: patch plan: %s\n", err);
		return 0;
	}
	for (i = 0; i < obj->nfuncs; i++)
		if (!obj->funcs[i].refused && excluded(obj->funcs[i].name)) {
			obj->funcs[i].refused = PATCH_EXCLUDED;
			c.patchable--;
			c.refused++;
		}
	*refused = c.refused;
	return c.patchable;
}

static void __attribute__((constructor(200))) meter_patch_init(void)
{
	const char *what = getenv("METER_PATCH");
	struct main_obj m = { 0 };
	struct patch_obj obj;
	char exe[PATH_MAX], err[256];
	size_t want, done, refused = 0;
	uint8_t *area;
	ssize_t len;

	if (!what || strcmp(what, "exe"))
		return;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return;
	exe[len] = '\0';
	dl_iterate_phdr(find_main, &m);
	if (m.cxx) {
		fprintf(stderr, "meter: --patch: %s is a C++ program; C++ exceptions through patched functions are not handled yet: nothing patched\n",
			exe);
		return;
	}
	if (patch_obj_open(exe, &obj, err, sizeof(err))) {
		fprintf(stderr, "meter: --patch: %s\n", err);
		return;
	}
	want = plan_exe(&obj, &refused);
	patched = calloc(want + 1, sizeof(*patched));
	area = want ? area_near(&obj, m.bias, want * SLOT_LEN) : NULL;
	if (!patched || (want && !area)) {
		fprintf(stderr, "meter: --patch: no memory near %s's code\n",
			exe);
		patch_obj_close(&obj);
		return;
	}
	done = build_area(&obj, m.bias, area, &refused);
	if (mprotect(area, want * SLOT_LEN, PROT_READ | PROT_EXEC) ||
	    text_protect(&obj, m.bias, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		fprintf(stderr, "meter: --patch: mprotect: %s\n",
			strerror(errno));
		patch_obj_close(&obj);
		return;
	}
	write_jumps(&obj, m.bias, area);
	text_protect(&obj, m.bias, PROT_READ | PROT_EXEC);
	report(&obj, done, refused);
	patch_obj_close(&obj);
}
