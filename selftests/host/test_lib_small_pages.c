// SPDX-License-Identifier: MIT
/*
 * libmeter's large, sparsely touched memory keeps 4 KiB pages where
 * transparent huge pages are "always" (Debian's kernels): its blocks in
 * .bss (the unregistered threads' and the unprofiled calls'), the
 * -finstrument-functions table and each registered thread's block would
 * otherwise each fault in a 2 MiB page at the first touch (every process
 * held one: 2 MiB of its RSS).  The workload reports the AnonHugePages
 * of libmeter's memory (a thread's stack may have one on 6.1 anyway);
 * the VM runs this on meter.ko (selftests/vm/test_lib_small_pages.sh),
 * whose kernels have "always".
 */
#include "lib_backend.h"

/* whether /sys says "[always]" */
static bool thp_always(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128] = "";
	bool always;

	if (!f)
		return false;
	always = fgets(line, sizeof(line), f) && strstr(line, "[always]");
	fclose(f);
	return always;
}

FIXTURE(pages) {
	struct backend_run r;
	bool always;
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

	self->always = thp_always();
	if (!self->always)
		return;
	backend_run(&self->r, variant->prog, "signal", args, "pages", NULL);
	ASSERT_BACKEND_RUN(&self->r);
}

FIXTURE_TEARDOWN(pages)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(pages, no_anonymous_huge_pages)
{
	if (!self->always)
		SKIP(return, "transparent huge pages are not \"always\" here");
	/* the calls were profiled: main's and the thread's */
	ASSERT_NE(NULL, func_named(self->r.p, "leaf"));
	EXPECT_EQ(4000, func_named(self->r.p, "leaf")->calls);
	/* libmeter's mappings (text, data, .bss) and the two blocks */
	ASSERT_NE(NULL, strstr(self->r.out, "libmeter's AnonHugePages: "))
		TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "AnonHugePages: 0 kB ("))
		TH_LOG("%s", self->r.out);
	EXPECT_EQ(NULL, strstr(self->r.out, "(0 spans)"));
}

TEST_HARNESS_MAIN
