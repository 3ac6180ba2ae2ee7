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
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "patch_plan.h"
#include "patch_reloc.h"
#include "patch_runtime.h"

#define SLOT_LEN	320	/* a stub (214 bytes) and a copy */
#define HOOK_LEN	256	/* the return hook, before the slots */
#define STUB_LEN	((size_t)(meter_patch_stub_end - meter_patch_stub))
#define STUB_FAST	((size_t)(meter_patch_stub_fast - meter_patch_stub))

/* The fast paths' offsets in the thread's block (patch_hook.S) */
_Static_assert(METER__STACK_CAP == 1008, "patch_hook.S: CAP");
_Static_assert(METER__BLOCK_SPS == 4096, "patch_hook.S: SPS");
_Static_assert(METER__BLOCK_SITES == 12168, "patch_hook.S: SITES");
_Static_assert(offsetof(struct meter__page_hdr, current_id) == 8 &&
	       offsetof(struct meter__page_hdr, depth) == 12 &&
	       offsetof(struct meter__page_hdr, stack) == 64,
	       "patch_hook.S: the page's header");
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
};

static int find_main(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct main_obj *m = arg;

	(void)size;
	if (!info->dlpi_name[0] && !m->bias)
		m->bias = (int64_t)info->dlpi_addr;
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

/* meter__tls's offset from the thread pointer: the same in every thread. */
static int32_t tls_offset(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int32_t)((intptr_t)&meter__tls - (intptr_t)tp);
}

/* A 32-bit field of a template copied to out, which ends at label. */
static void put32(uint8_t *out, const uint8_t *tmpl, const uint8_t *label,
		  uint32_t v)
{
	memcpy(out + (label - tmpl) - 4, &v, 4);
}

static void put64(uint8_t *out, const uint8_t *tmpl, const uint8_t *label,
		  uint64_t v)
{
	memcpy(out + (label - tmpl), &v, 8);
}

/* The object's return hook, at the start of its area. */
static uint64_t write_hook(uint8_t *out)
{
	const uint8_t *t = meter_patch_ret;

	memcpy(out, t, (size_t)(meter_patch_ret_end - t));
	put32(out, t, meter_patch_ret_tls, (uint32_t)tls_offset());
	put64(out, t, meter_patch_ret_leave_q, (uint64_t)meter_patch_return);
	return (uint64_t)(uintptr_t)(out + (meter_patch_ret_fast - t));
}

/* A function's entry stub; the copy of its displaced code follows it. */
static void write_stub(uint8_t *out, uint32_t index, uint32_t id,
		       uint64_t hook)
{
	const uint8_t *t = meter_patch_stub;

	memcpy(out, t, STUB_LEN);
	put32(out, t, meter_patch_stub_index, index);
	put64(out, t, meter_patch_stub_entry_q, (uint64_t)meter_patch_entry);
	put64(out, t, meter_patch_stub_hook_q, hook);
	put32(out, t, meter_patch_stub_tls, (uint32_t)tls_offset());
	put32(out, t, meter_patch_stub_count,
	      (uint32_t)(METER__BLOCK_COUNTS + 8 * (uint64_t)id));
	put32(out, t, meter_patch_stub_tcount,
	      (uint32_t)(METER__BLOCK_COUNTS + 8 * (uint64_t)id));
	put32(out, t, meter_patch_stub_id, id);
	put32(out, t, meter_patch_stub_id2, id);
	put32(out, t, meter_patch_stub_tid, id);
	put32(out, t, meter_patch_stub_tid2, id);
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

/*
 * The return hook, then a stub and a copy for each function; a function
 * that cannot be copied is refused.
 */
static size_t build_area(struct patch_obj *obj, int64_t bias, uint8_t *area,
			 size_t *refused)
{
	uint64_t hook = write_hook(area);
	size_t i, n = 0;
	int len;

	for (i = 0; i < obj->nfuncs; i++) {
		struct patch_func *f = &obj->funcs[i];
		uint8_t *slot = area + HOOK_LEN + n * SLOT_LEN;

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
		if (!patched[n].rec || !patched[n].rec->id) {
			f->refused = "no function id left";
			(*refused)++;
			continue;
		}
		patched[n].id = patched[n].rec->id;
		patched[n].copy = (uint64_t)(uintptr_t)(slot + STUB_LEN);
		write_stub(slot, (uint32_t)n, patched[n].id, hook);
		n++;
	}
	patch_hooks[patch_nhooks++] = hook;
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
		rel = (int32_t)((int64_t)(uintptr_t)(area + HOOK_LEN +
						     n * SLOT_LEN + STUB_FAST) -
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
	if (patch_obj_open(exe, &obj, err, sizeof(err))) {
		fprintf(stderr, "meter: --patch: %s\n", err);
		return;
	}
	want = plan_exe(&obj, &refused);
	patched = calloc(want + 1, sizeof(*patched));
	area = want ? area_near(&obj, m.bias, HOOK_LEN + want * SLOT_LEN) :
		      NULL;
	if (!patched || (want && !area)) {
		fprintf(stderr, "meter: --patch: no memory near %s's code\n",
			exe);
		patch_obj_close(&obj);
		return;
	}
	done = build_area(&obj, m.bias, area, &refused);
	if (mprotect(area, HOOK_LEN + want * SLOT_LEN,
		     PROT_READ | PROT_EXEC) ||
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
