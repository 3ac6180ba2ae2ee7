// SPDX-License-Identifier: MIT
/*
 * Manual records are collected from every module's own meter_records
 * section: the executable's, a linked shared library's and one opened with
 * dlopen after profiling started; ids stay dense.
 */
#include "lib_tap.h"

int main(void)
{
	char out[256], env_out[PATH_MAX + 16], path[PATH_MAX], dso[PATH_MAX];
	const char *env[] = { "METER_BACKEND=off", env_out, "METER_QUIET=1",
			      NULL };
	const char *args[] = { dso, NULL };
	struct meter_profile *p;
	size_t i;
	int dense = 1;

	snprintf(path, sizeof(path), "%s/modules.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	snprintf(dso, sizeof(dso), "%s/liblibtest_opened.so", self_dir());
	ok(run_prog("lib_modules", env, args, out, sizeof(out)) == 0 &&
	   strstr(out, "opened=1"), "program with three instrumented modules exits 0");
	p = load_profile(path);
	ok(calls_of(p, "exe_func") == 10, "the executable's records are counted");
	ok(calls_of(p, "linked_func") == 10,
	   "a linked shared library's own section is collected");
	ok(calls_of(p, "opened_func") == 7,
	   "a library opened with dlopen later registers its section");
	for (i = 0; p && i < p->nfuncs; i++)
		if (p->funcs[i].id != i + 1)
			dense = 0;
	ok(p && dense, "ids are dense from 1 across modules (%zu functions)",
	   p ? p->nfuncs : 0);
	meter_profile_free(p);
	scratch_cleanup();
	return tap_done();
}
