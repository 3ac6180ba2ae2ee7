// SPDX-License-Identifier: MIT
/*
 * Manual records are collected from every module's own meter_records
 * section: the executable's, a linked shared library's and one opened with
 * dlopen after profiling started; ids stay dense.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

FIXTURE(modules) {
	struct meter_profile *p;
};

FIXTURE_SETUP(modules)
{
	char out[256], env_out[PATH_MAX + 16], path[PATH_MAX], dso[PATH_MAX];
	const char *env[] = { "METER_BACKEND=off", env_out, "METER_QUIET=1",
			      NULL };
	const char *args[] = { dso, NULL };

	snprintf(path, sizeof(path), "%s/modules.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	snprintf(dso, sizeof(dso), "%s/liblibtest_opened.so", self_dir());
	ASSERT_EQ(0, run_prog("lib_modules", env, args, out, sizeof(out)));
	ASSERT_NE(NULL, strstr(out, "opened=1"));
	self->p = load_profile(path);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(modules)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(modules, executable_records_counted)
{
	EXPECT_EQ(10, calls_of(self->p, "exe_func"));
}

TEST_F(modules, linked_library_section_collected)
{
	EXPECT_EQ(10, calls_of(self->p, "linked_func"));
}

TEST_F(modules, dlopened_library_registers_its_section_later)
{
	EXPECT_EQ(7, calls_of(self->p, "opened_func"));
}

TEST_F(modules, ids_dense_from_one_across_modules)
{
	size_t i;

	for (i = 0; i < self->p->nfuncs; i++)
		EXPECT_EQ(i + 1, self->p->funcs[i].id);
}

TEST_HARNESS_MAIN
