// SPDX-License-Identifier: MIT
/*
 * libmeter's large, sparsely touched memory keeps 4 KiB pages where
 * transparent huge pages are "always" (Debian's kernels): its blocks in
 * .bss (the unregistered threads' and the unprofiled calls'), the
 * -finstrument-functions table and each registered thread's block would
 * otherwise each fault in a 2 MiB page at the first touch (every process
 * held one: 2 MiB of its RSS).  The workload reports which of those
 * mappings carry the advice, wherever the kernel has huge pages, and the
 * AnonHugePages of libmeter's memory, which count where they are
 * "always": in the VM (selftests/vm/test_lib_small_pages.sh, meter.ko),
 * whose kernels have it.
 */
#include "lib_backend.h"

/* whether the kernel has transparent huge pages, and whether "always" */
static bool thp(bool *always)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128] = "";

	*always = false;
	if (!f)
		return false;
	*always = fgets(line, sizeof(line), f) && strstr(line, "[always]");
	fclose(f);
	return true;
}

FIXTURE(pages) {
	struct backend_run r;
	bool thp, always;
};

FIXTURE_VARIANT(pages) {
	const char *prog;
};

FIXTURE_VARIANT_ADD(pages, manual) { .prog = "lib_workload_manual" };
FIXTURE_VARIANT_ADD(pages, automatic) { .prog = "lib_workload_auto" };
FIXTURE_VARIANT_ADD(pages, plugin) { .prog = "lib_workload_plugin" };

FIXTURE_SETUP(pages)
{
	const char *args[] = { "pages", "2000", NULL };

	self->thp = thp(&self->always);
	if (!self->thp)
		return;
	backend_run(&self->r, variant->prog, "signal", args, "pages", NULL);
	ASSERT_BACKEND_RUN(&self->r);
	/* the calls were profiled: main's and the thread's */
	ASSERT_NE(NULL, func_named(self->r.p, "leaf"));
	ASSERT_EQ(4000, func_named(self->r.p, "leaf")->calls);
}

FIXTURE_TEARDOWN(pages)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

/* "nh" in VmFlags: the blocks of both threads and the unregistered
 * threads' block in .bss (3 mappings at least) */
TEST_F(pages, blocks_advised_small_pages)
{
	unsigned long advised = 0, maps = 0;
	const char *l;

	if (!self->thp)
		SKIP(return, "no transparent huge pages in this kernel");
	l = strstr(self->r.out, "small-page advice on ");
	ASSERT_NE(NULL, l) TH_LOG("%s", self->r.out);
	ASSERT_EQ(2, sscanf(l, "small-page advice on %lu of %lu", &advised,
			    &maps));
	EXPECT_LE(3, maps);
	EXPECT_EQ(maps, advised) TH_LOG("%s", self->r.out);
}

/* where huge pages are "always", none in libmeter's memory */
TEST_F(pages, no_anonymous_huge_pages)
{
	unsigned long kb = 1, segs = 0;
	const char *l;

	if (!self->always)
		SKIP(return, "transparent huge pages are not \"always\" here");
	l = strstr(self->r.out, "libmeter's AnonHugePages: ");
	ASSERT_NE(NULL, l) TH_LOG("%s", self->r.out);
	ASSERT_EQ(2, sscanf(l, "libmeter's AnonHugePages: %lu kB in %lu",
			    &kb, &segs));
	EXPECT_LE(2, segs);	/* libmeter's own were found */
	EXPECT_EQ(0, kb) TH_LOG("%s", self->r.out);
}

TEST_HARNESS_MAIN
