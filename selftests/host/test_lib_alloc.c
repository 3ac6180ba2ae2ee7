// SPDX-License-Identifier: MIT
/*
 * Allocation accounting: with libmeter-alloc.so preloaded and METER_ALLOC=1
 * (what `meter-run --alloc` sets), malloc, calloc and realloc calls and
 * bytes are charged to the current function; without either, nothing is
 * counted; and libmeter.so itself replaces no allocator.
 */
#include <dlfcn.h>

#include "lib_tap.h"

static char preload[PATH_MAX + 16];

/* The workload's profile with env (NULL-terminated) added. */
static struct meter_profile *run_alloc(const char *mode, const char *label,
				       const char *const *extra, char *out,
				       size_t outlen)
{
	char prog[64], env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *args[] = { "alloc", "1000", NULL };
	const char *env[8] = { "METER_BACKEND=off", env_out };
	int i, n = 2;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(path, sizeof(path), "%s/alloc-%s-%s.json", scratch(), mode,
		 label);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	for (i = 0; extra[i] && n < 7; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	ok(run_prog(prog, env, args, out, outlen) == 0, "%s, %s: exits 0",
	   mode, label);
	return access(path, F_OK) ? NULL : load_profile(path);
}

static void counted(const char *mode)
{
	const char *env[] = { preload, "METER_ALLOC=1", "METER_QUIET=1",
			      NULL };
	struct meter_profile *p = run_alloc(mode, "preloaded", env, NULL, 0);
	const struct meter_func *f = func_named(p, "allocator");

	ok(f && f->alloc_calls == 3000,
	   "%s: 1000 x (malloc, calloc, realloc) are 3000 allocation calls of allocator (got %llu)",
	   mode, f ? (unsigned long long)f->alloc_calls : 0ULL);
	ok(f && f->alloc_bytes == 400000, "%s: and 400000 bytes (got %llu)",
	   mode, f ? (unsigned long long)f->alloc_bytes : 0ULL);
	meter_profile_free(p);
}

static bool none_counted(const struct meter_profile *p)
{
	size_t i;

	if (!p || !func_named(p, "allocator"))
		return false;
	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].alloc_calls || p->funcs[i].alloc_bytes)
			return false;
	return true;
}

static void not_counted(void)
{
	const char *asked[] = { "METER_ALLOC=1", NULL };
	const char *loaded[] = { preload, "METER_QUIET=1", NULL };
	struct meter_profile *p;
	char out[8192];

	run_stderr = 1;
	p = run_alloc("manual", "not-preloaded", asked, out, sizeof(out));
	run_stderr = 0;
	ok(none_counted(p),
	   "METER_ALLOC=1 without libmeter-alloc.so: nothing is counted");
	ok(strstr(out, "libmeter-alloc.so") != NULL,
	   "and libmeter says that the preload library is missing");
	meter_profile_free(p);

	p = run_alloc("manual", "not-asked", loaded, NULL, 0);
	ok(none_counted(p),
	   "libmeter-alloc.so without METER_ALLOC=1: nothing is counted");
	meter_profile_free(p);
}

/* Which object a symbol found from libmeter.so's handle comes from. */
static void no_interposition(void)
{
	static const char *const names[] = { "malloc", "calloc", "realloc",
					     "free" };
	char lib[PATH_MAX];
	unsigned i, own = 0;
	void *h;

	snprintf(lib, sizeof(lib), "%s/../../lib/libmeter.so.1", self_dir());
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	ok(h != NULL, "libmeter.so.1 loads (%s)", h ? "ok" : dlerror());
	if (!h)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Dl_info info;
		void *s = dlsym(h, names[i]);

		if (s && dladdr(s, &info) && info.dli_fname &&
		    strstr(info.dli_fname, "libmeter"))
			own++;
	}
	ok(own == 0,
	   "libmeter.so defines none of malloc, calloc, realloc, free (%u do)",
	   own);
	dlclose(h);
}

int main(void)
{
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/../../lib/libmeter-alloc.so",
		 self_dir());
	counted("manual");
	counted("auto");
	not_counted();
	no_interposition();
	scratch_cleanup();
	return tap_done();
}
