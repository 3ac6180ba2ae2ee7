// SPDX-License-Identifier: MIT
/*
 * Automatic records are named from the ELF symbol tables: a static function
 * of the executable (.symtab), the exported and static functions of a
 * shared library, and, where a stripped library has no symbol for a static
 * function, "module+0xoffset".
 */
#include "kselftest_harness.h"
#include "lib_run.h"

/* lib_names calls each function 10 times, with the off backend */
FIXTURE(names) {
	struct meter_profile *p;
};

FIXTURE_SETUP(names)
{
	char out[256], env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=off", env_out, "METER_QUIET=1",
			      NULL };
	const char *args[] = { NULL };

	snprintf(path, sizeof(path), "%s/names.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ASSERT_EQ(0, run_prog("lib_names", env, args, out, sizeof(out)));
	self->p = load_profile(path);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(names)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(names, executable_static_function_from_symtab)
{
	EXPECT_EQ(10, calls_of(self->p, "local_helper"));
}

TEST_F(names, shared_library_exported_function)
{
	EXPECT_EQ(10, calls_of(self->p, "dso_exported"));
}

TEST_F(names, shared_library_static_function_from_symtab)
{
	EXPECT_EQ(10, calls_of(self->p, "dso_static"));
}

TEST_F(names, stripped_library_exported_function_from_dynsym)
{
	EXPECT_EQ(10, calls_of(self->p, "stripped_exported"));
}

TEST_F(names, stripped_library_static_function_is_module_plus_offset)
{
	size_t i;
	int unknown = 0;

	for (i = 0; i < self->p->nfuncs; i++)
		if (!strncmp(self->p->funcs[i].name,
			     "liblibtest_stripped.so+0x", 25) &&
		    self->p->funcs[i].calls == 10)
			unknown++;
	EXPECT_EQ(1, unknown);
}

/* 300- and 3000-byte names differing at the end: four rows, whole names */
TEST(long_names_are_kept_whole_and_apart)
{
	static const int len[4] = { 300, 300, 3000, 3000 };
	static const int times[4] = { 3, 5, 7, 11 };
	const char *args[] = { "longnames", NULL };
	static char want[3010];
	struct meter_profile *p;
	char out[256];
	int status, k;

	p = run_profile("lib_workload_manual", "signal", args, out,
			sizeof(out), "longnames", NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, p);
	for (k = 0; k < 4; k++) {
		memset(want, 'x', len[k]);
		snprintf(want + len[k], sizeof(want) - len[k], "_%c", 'a' + k);
		EXPECT_EQ(times[k], calls_of(p, want))
			TH_LOG("%c", 'a' + k);
	}
	meter_profile_free(p);
	scratch_cleanup();
}

/*
 * A ninja-sized C++ program: 1000 functions whose 300-character names
 * differ only at their end, built with the plugin at -O2: 1000 rows, each
 * with its own calls, and 1000 distinct names in the reports.
 */
TEST(cxx_program_no_two_functions_merged)
{
	const char *args[] = { NULL };
	struct cxx_rows r;
	struct meter_profile *p;
	char out[256];
	int status;

	p = run_profile("lib_cxx_names", "signal", args, out, sizeof(out),
			"cxx_names", NULL, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, p);
	r = cxx_names_rows(p);
	EXPECT_EQ(1000, r.rows);
	EXPECT_EQ(0, r.cut);
	EXPECT_EQ(0, r.bad_calls);
	EXPECT_EQ(1000, r.report_names);
	meter_profile_free(p);
	scratch_cleanup();
}

TEST_HARNESS_MAIN
