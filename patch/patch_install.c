// SPDX-License-Identifier: MIT
/*
 * libmeter-patch.so: patching one object's function entries
 * (Documentation/patching.md); patch_load.c says which objects, and when.
 * For each function the plan (patch_plan.h) allows: a stub and a copy of
 * the displaced instructions in an area within 2 GiB of the object's
 * text, after the object's return hook, then a 5-byte jump over the
 * entry.
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

/*
 * Functions never patched: the C runtime's own, run before the
 * constructor or after exit; and the C library's and libgcc's functions
 * that read their own return address (the hook's, once patched) to come
 * back to it twice (setjmp, getcontext, vfork), to know their caller
 * (dlopen, dlsym) or to unwind from it (_Unwind_*).
 */
static bool never_patched(const char *name)
{
	static const char *const never[] = {
		"_start", "_init", "_fini", "deregister_tm_clones",
		"register_tm_clones", "__do_global_dtors_aux", "frame_dummy",
		"__libc_csu_init", "__libc_csu_fini", "_dl_relocate_static_pie",
		"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp",
		"getcontext", "swapcontext", "vfork", "__vfork",
		"dlopen", "dlmopen", "dlsym", "dlvsym", "__libc_dlopen_mode",
		"__libc_dlsym", "_Unwind_*", "__cxa_begin_catch",
	};
	size_t i;

	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (!fnmatch(never[i], name, 0))
			return true;
	return false;
}

/* Near the object's text: within 2 GiB of all of it, below its start. */
static uint8_t *area_near(uint64_t lo, size_t len)
{
	uint64_t at;
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
	return never_patched(name);
}

/*
 * The return hook, then a stub and a copy for each function; a function
 * that cannot be copied is refused.
 */
static size_t build_area(struct patch_obj *obj, int64_t bias, uint8_t *area,
			 size_t base, size_t *refused)
{
	uint64_t hook = write_hook(area);
	size_t i, n = 0;
	int len;

	for (i = 0; i < obj->nfuncs; i++) {
		struct patch_func *f = &obj->funcs[i];
		uint8_t *slot = area + HOOK_LEN + n * SLOT_LEN;
		struct patched *p;

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
		p = &patched[base + n];
		p->rec = base + n < PATCH_FUNCS_MAX ?
				meter_record_register(f->name) : NULL;
		if (!p->rec || !p->rec->id) {
			f->refused = "no function id left";
			(*refused)++;
			continue;
		}
		p->id = p->rec->id;
		p->copy = (uint64_t)(uintptr_t)(slot + STUB_LEN);
		write_stub(slot, (uint32_t)(base + n), p->id, hook);
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

/*
 * Byte by byte, calling nothing: the function written over may be one
 * this code calls (memcpy, with the C library patched).
 */
static void put_jump(volatile uint8_t *at, uint32_t rel)
{
	int i;

	for (i = 4; i > 0; i--)
		at[i] = (uint8_t)(rel >> (8 * (i - 1)));
	at[0] = 0xe9;
}

static void write_jumps(const struct patch_obj *obj, int64_t bias,
			const uint8_t *area, size_t base)
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
		memcpy(patched[base + n].orig, at, 5);
		patched[base + n].jump = (uint64_t)(uintptr_t)at;
		put_jump(at, (uint32_t)rel);
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
	f = fopen(path, "ae");
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
const uint64_t *patch_avoid;
size_t patch_navoid;

/* Whether a stopped thread's next instruction lies in f's patched bytes. */
static bool thread_inside(const struct patch_func *f, int64_t bias)
{
	uint64_t lo = f->addr + (uint64_t)bias + f->patch_off;
	size_t i;

	for (i = 0; i < patch_navoid; i++)
		if (patch_avoid[i] > lo && patch_avoid[i] < lo + f->patch_len)
			return true;
	return false;
}

static size_t plan_obj(struct patch_obj *obj, int64_t bias, size_t *refused)
{
	struct patch_counts c;
	char err[256];
	size_t i;

	if (patch_plan(obj, &c, err, sizeof(err))) {
		fprintf(stderr, "meter: patch plan: %s\n", err);
		return 0;
	}
	for (i = 0; i < obj->nfuncs; i++) {
		struct patch_func *f = &obj->funcs[i];

		if (!f->refused && excluded(f->name))
			f->refused = PATCH_EXCLUDED;
		else if (!f->refused && thread_inside(f, bias))
			f->refused = "a thread is stopped in its first bytes";
		else
			continue;
		c.patchable--;
		c.refused++;
	}
	*refused = c.refused;
	return c.patchable;
}

/*
 * Patches path's functions, loaded at bias (load address minus link
 * address); the caller holds the lock and stops nothing: the object's
 * code is not running (a constructor of the preload, or dlopen's return).
 * 0, or -1 with a message (nothing patched).
 */
int patch_object(const char *path, int64_t bias)
{
	size_t want, done, refused = 0, len;
	struct patch_obj obj;
	char err[256];
	uint8_t *area;

	if (!patched && patch_reserve())
		return -1;
	if (patch_obj_open(path, &obj, err, sizeof(err))) {
		fprintf(stderr, "meter: --patch: %s\n", err);
		return -1;
	}
	want = plan_obj(&obj, bias, &refused);
	len = HOOK_LEN + want * SLOT_LEN;
	area = want ? area_near(obj.text[0].addr + (uint64_t)bias, len) : NULL;
	if (want && (!area || patch_nhooks == PATCH_HOOKS_MAX)) {
		fprintf(stderr, "meter: --patch: no memory near %s's code\n",
			path);
		patch_obj_close(&obj);
		return -1;
	}
	done = want ? build_area(&obj, bias, area, patch_nfuncs, &refused) : 0;
	if (want && (mprotect(area, len, PROT_READ | PROT_EXEC) ||
		     text_protect(&obj, bias,
				  PROT_READ | PROT_WRITE | PROT_EXEC))) {
		fprintf(stderr, "meter: --patch: mprotect: %s\n",
			strerror(errno));
		patch_obj_close(&obj);
		return -1;
	}
	if (want) {
		patch_hooks[patch_nhooks++] = (uint64_t)(uintptr_t)area +
			(uint64_t)(meter_patch_ret_fast - meter_patch_ret);
		write_jumps(&obj, bias, area, patch_nfuncs);
		patch_nfuncs += done;
		text_protect(&obj, bias, PROT_READ | PROT_EXEC);
	}
	report(&obj, done, refused);
	patch_obj_close(&obj);
	return 0;
}

/*
 * For patch_calib.c: meter_patch_calib_leaf's stub, in an area of its own
 * (*area, *len, for munmap), made as every stub is; its fast entry, or 0.
 */
uint64_t patch_calib_stub(void **area, size_t *len)
{
	struct patch_func f = {
		.name = "calibration", .src = PATCH_SRC_SYMTAB,
		.addr = (uint64_t)(uintptr_t)meter_patch_calib_leaf,
		.size = 16, .patch_len = 5,
	};
	uint8_t *a, *slot;
	uint64_t hook;

	*len = HOOK_LEN + SLOT_LEN;
	a = area_near(f.addr, *len);
	if (!a)
		return 0;
	slot = a + HOOK_LEN;
	hook = write_hook(a);
	write_stub(slot, 0, 1, hook);	/* on a scratch block: any id */
	if (patch_reloc(&f, 0, slot + STUB_LEN, SLOT_LEN - STUB_LEN,
			(uint64_t)(uintptr_t)(slot + STUB_LEN)) < 0 ||
	    mprotect(a, *len, PROT_READ | PROT_EXEC)) {
		munmap(a, *len);
		return 0;
	}
	*area = a;
	return (uint64_t)(uintptr_t)(slot + STUB_FAST);
}

void patch_unpatch_all(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i;

	for (i = 0; i < patch_nfuncs; i++) {
		struct patched *p = &patched[i];
		uint64_t lo = p->jump & ~(uint64_t)(page - 1);
		volatile uint8_t *at = (uint8_t *)(uintptr_t)p->jump;
		int k;

		if (!p->jump || mprotect((void *)(uintptr_t)lo,
					 p->jump + 5 - lo,
					 PROT_READ | PROT_WRITE | PROT_EXEC))
			continue;
		for (k = 4; k >= 0; k--)
			at[k] = p->orig[k];
		mprotect((void *)(uintptr_t)lo, p->jump + 5 - lo,
			 PROT_READ | PROT_EXEC);
		p->jump = 0;
	}
}
