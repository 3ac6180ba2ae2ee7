// SPDX-License-Identifier: MIT
/*
 * A thread's end and the process's end under meter.ko send the call
 * counts (ADD_CALLS) and unregister without an allocation of 1 KiB or
 * more, which would make glibc's malloc merge every small chunk the
 * program had freed (lib/nlreg.c); the counts still arrive whole.
 * selftests/host/lib_exit_allocs.c watches the allocations itself.
 */
#include "lib_kernel.h"

TEST(a_thread_and_the_process_end_with_small_allocations_only)
{
	const char *args[] = { "20000", NULL };
	struct backend_run r;

	run_stderr = 1;
	kernel_run(&r, "lib_exit_allocs", args, "exit allocations", NULL);
	run_stderr = 0;
	ASSERT_BACKEND_RUN(&r);
	EXPECT_NE(NULL, strstr(r.out, "churned 20000")) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "large:")) TH_LOG("%s", r.out);
	/* main's and the thread's, each sent as its thread ended */
	EXPECT_EQ(2, calls_of(r.p, "churn"));
	meter_profile_free(r.p);
	scratch_cleanup();
}

TEST_HARNESS_MAIN
