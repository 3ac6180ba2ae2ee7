// SPDX-License-Identifier: MIT
/*
 * Allocation accounting: with libmeter-alloc.so preloaded and METER_ALLOC=1
 * (what `meter-run --alloc` sets), malloc, calloc and realloc calls and
 * bytes are charged to the current function; without either, nothing is
 * counted; and libmeter.so itself replaces no allocator.
 */
#include <dlfcn.h>

#include "kselftest_harness.h"
#include "lib_run.h"

static char preload[PATH_MAX + 16];

static void __attribute__((constructor)) set_preload(void)
{
	snprintf(preload, sizeof(preload),
		 "LD_PRELOAD=%s/../../lib/libmeter-alloc.so", self_dir());
}

/* "alloc 1000" with env (NULL-terminated) added: allocator makes 1000 x
 * (malloc, calloc, realloc), 400 bytes a round */
static struct meter_profile *run_alloc(const char *mode, const char *label,
				       const char *const *extra, char *out,
				       size_t outlen, int *status)
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
	*status = run_prog(prog, env, args, out, outlen);
	return access(path, F_OK) ? NULL : load_profile(path);
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

FIXTURE(counted) {
	struct meter_profile *p;
};

FIXTURE_VARIANT(counted) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(counted, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(counted, automatic) { .mode = "auto" };

FIXTURE_SETUP(counted)
{
	const char *env[] = { preload, "METER_ALLOC=1", "METER_QUIET=1",
			      NULL };
	int status;

	self->p = run_alloc(variant->mode, "preloaded", env, NULL, 0, &status);
	ASSERT_EQ(0, status);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(counted)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(counted, allocation_calls_charged_to_the_current_function)
{
	const struct meter_func *f = func_named(self->p, "allocator");

	ASSERT_NE(NULL, f);
	EXPECT_EQ(3000, f->alloc_calls);
}

TEST_F(counted, allocated_bytes_charged_to_the_current_function)
{
	const struct meter_func *f = func_named(self->p, "allocator");

	ASSERT_NE(NULL, f);
	EXPECT_EQ(400000, f->alloc_bytes);
}

TEST(asked_without_the_preload_library_counts_nothing_and_says_why)
{
	const char *asked[] = { "METER_ALLOC=1", NULL };
	struct meter_profile *p;
	char out[8192];
	int status;

	run_stderr = 1;
	p = run_alloc("manual", "not-preloaded", asked, out, sizeof(out),
		      &status);
	run_stderr = 0;
	EXPECT_EQ(0, status);
	EXPECT_TRUE(none_counted(p));
	EXPECT_NE(NULL, strstr(out, "libmeter-alloc.so"));
	meter_profile_free(p);
	scratch_cleanup();
}

TEST(preloaded_without_being_asked_counts_nothing)
{
	const char *loaded[] = { preload, "METER_QUIET=1", NULL };
	struct meter_profile *p;
	int status;

	p = run_alloc("manual", "not-asked", loaded, NULL, 0, &status);
	EXPECT_EQ(0, status);
	EXPECT_TRUE(none_counted(p));
	meter_profile_free(p);
	scratch_cleanup();
}

/* which object a symbol found from libmeter.so's handle comes from */
TEST(libmeter_replaces_no_allocator)
{
	static const char *const names[] = { "malloc", "calloc", "realloc",
					     "free" };
	char lib[PATH_MAX];
	unsigned int i;
	void *h;

	snprintf(lib, sizeof(lib), "%s/../../lib/libmeter.so.1", self_dir());
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, h) TH_LOG("%s", dlerror());
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Dl_info info;
		void *s = dlsym(h, names[i]);

		EXPECT_FALSE(s && dladdr(s, &info) && info.dli_fname &&
			     strstr(info.dli_fname, "libmeter"))
			TH_LOG("libmeter.so defines %s", names[i]);
	}
	dlclose(h);
}

TEST_HARNESS_MAIN
