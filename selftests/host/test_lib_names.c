// SPDX-License-Identifier: MIT
/*
 * Automatic records are named from the ELF symbol tables: a static function
 * of the executable (.symtab), the exported and static functions of a
 * shared library, and, where a stripped library has no symbol for a static
 * function, "module+0xoffset".
 */
#include "lib_tap.h"

int main(void)
{
	char out[256], env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=off", env_out, "METER_QUIET=1",
			      NULL };
	const char *args[] = { NULL };
	struct meter_profile *p;
	size_t i;
	int unknown = 0;

	snprintf(path, sizeof(path), "%s/names.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ok(run_prog("lib_names", env, args, out, sizeof(out)) == 0,
	   "instrumented program with two shared libraries exits 0");
	p = load_profile(path);
	ok(p != NULL, "profile written");
	ok(calls_of(p, "local_helper") == 10,
	   "static function of the executable named from .symtab");
	ok(calls_of(p, "dso_exported") == 10,
	   "exported function of a shared library named");
	ok(calls_of(p, "dso_static") == 10,
	   "static function of a shared library named from its .symtab");
	ok(calls_of(p, "stripped_exported") == 10,
	   "exported function of a stripped library named from .dynsym");
	for (i = 0; p && i < p->nfuncs; i++)
		if (!strncmp(p->funcs[i].name, "liblibtest_stripped.so+0x", 25) &&
		    p->funcs[i].calls == 10)
			unknown++;
	ok(unknown == 1, "static function of a stripped library is module+0xoffset");
	meter_profile_free(p);
	scratch_cleanup();
	return tap_done();
}
