// SPDX-License-Identifier: MIT
/*
 * Which objects libmeter-patch.so patches, and when.  METER_PATCH (set by
 * meter-run --patch[=OBJ,...]) names them: "exe" the executable, "all"
 * every object loaded, the C library included, or a shared library by
 * file name or soname ("libz.so.1" is the file libz.so.1.2.13 too).
 * meter's own objects, the dynamic linker and the vDSO are never patched.
 * The objects loaded at start are patched by the constructor, which runs
 * after libmeter's and before the program's own, while the process has
 * one thread; an object dlopen brings in, as dlopen returns, before the
 * handle is given back (its constructors have run unpatched).
 */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "patch_runtime.h"

#define PATCH_OBJS_MAX	PATCH_HOOKS_MAX

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The objects seen, patched or not, by load address and name. */
static struct {
	uintptr_t addr;
	char *name;
} seen[PATCH_OBJS_MAX];
static size_t nseen;

static bool never_patched_obj(const char *base)
{
	static const char *const prefix[] = {
		"libmeter", "ld-linux", "linux-vdso", "libcapstone",
	};
	size_t i;

	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(base, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

/* Whether METER_PATCH names the object (path; exe: the executable). */
static bool chosen(const char *spec, const char *path, bool exe)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!exe && never_patched_obj(base))
		return false;
	while (*spec) {
		size_t n = strcspn(spec, ",");

		if ((n == 3 && !strncmp(spec, "all", 3)) ||
		    (exe && n == 3 && !strncmp(spec, "exe", 3)) ||
		    (!exe && n && !strncmp(base, spec, n) &&
		     (base[n] == '\0' || base[n] == '.')))
			return true;
		spec += n + (spec[n] == ',');
	}
	return false;
}

static bool seen_before(uintptr_t addr, const char *name)
{
	size_t i;

	for (i = 0; i < nseen; i++)
		if (seen[i].addr == addr && !strcmp(seen[i].name, name))
			return true;
	if (nseen < PATCH_OBJS_MAX) {
		seen[nseen].addr = addr;
		seen[nseen].name = strdup(name);
		if (seen[nseen].name)
			nseen++;
	}
	return false;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *spec = arg, *path = info->dlpi_name;
	char exe[PATH_MAX];
	bool is_exe = !path[0] && !nseen;
	ssize_t len;

	(void)size;
	if (seen_before((uintptr_t)info->dlpi_addr, path))
		return 0;
	if (is_exe) {
		len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (len <= 0)
			return 0;
		exe[len] = '\0';
		path = exe;
	}
	if (path[0] == '/' && chosen(spec, path, is_exe) &&
	    !patch_object(path, (int64_t)info->dlpi_addr))
		patch_calibrate();	/* once */
	return 0;
}

/* The objects loaded and not yet seen. */
static void patch_new_objects(void)
{
	const char *spec;

	patch_quiet_begin();
	spec = getenv("METER_PATCH");
	if (spec && *spec) {
		pthread_mutex_lock(&lock);
		dl_iterate_phdr(visit, (void *)spec);
		pthread_mutex_unlock(&lock);
	}
	patch_quiet_end();
}

static void __attribute__((constructor(200))) meter_patch_init(void)
{
	patch_runtime_init();
	patch_new_objects();
}

/*
 * The preload's dlopen comes before the C library's.  The C library reads
 * its caller's object from the return address (for the search path of a
 * name without a slash: the caller's DT_RUNPATH); it sees this library's
 * instead, whose own RUNPATH is meter's library directory.
 */
void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	h = real ? real(file, mode) : NULL;
	if (h)
		patch_new_objects();
	return h;
}

/*
 * meter-run --pid (tools/run_attach.c) calls these in the process, every
 * thread stopped, after it has loaded this library with dlopen.  env:
 * "NAME=VALUE" strings, an empty one last, set before anything else (the
 * objects to patch, the backend, where the profile goes); avoid: the
 * stopped threads' next instructions, which no jump may cover.  0, or -1
 * when nothing was patched.
 */
int meter_patch_attach(const char *env, const uint64_t *avoid, size_t navoid)
{
	char buf[4096];

	for (; env && *env; env += strlen(env) + 1) {
		const char *eq = strchr(env, '=');

		if (!eq || (size_t)(eq - env) >= sizeof(buf))
			continue;
		memcpy(buf, env, (size_t)(eq - env));
		buf[eq - env] = '\0';
		setenv(buf, eq + 1, 1);
	}
	patch_avoid = avoid;
	patch_navoid = navoid;
	patch_new_objects();
	patch_avoid = NULL;
	patch_navoid = 0;
	return patch_nfuncs ? 0 : -1;
}

/*
 * The jumps taken back, and the profile ended as at exit (sent to
 * meter.ko, or written where METER_OUTPUT says).  The stubs, the return
 * hooks and libmeter stay: frames entered while patched still return
 * through them.
 */
int meter_patch_detach(void)
{
	pthread_mutex_lock(&lock);
	patch_unpatch_all();
	pthread_mutex_unlock(&lock);
	meter__finish();
	return 0;
}
