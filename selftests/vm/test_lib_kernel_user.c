// SPDX-License-Identifier: MIT
/*
 * An unprivileged program (uid 65534) with METER_BACKEND=auto is profiled:
 * by meter.ko when the module accepts it (a session with exact counts), or
 * by the signal backend when it does not (a file with exact counts).
 */
#include <sys/stat.h>

#include "lib_kernel.h"

TEST(unprivileged_auto_is_profiled_with_exact_counts)
{
	char out[256], env_out[PATH_MAX + 16], path[PATH_MAX], dir[PATH_MAX];
	const char *env[] = { "METER_BACKEND=auto", env_out, "METER_QUIET=1",
			      NULL };
	const char *args[] = { "counts", "1000", NULL };
	struct meter_profile *p;
	int rc;

	snprintf(dir, sizeof(dir), "%s/user", scratch());
	mkdir(dir, 0777);
	chmod(dir, 0777);
	chmod(scratch(), 0777);
	snprintf(path, sizeof(path), "%s/out.json", dir);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	run_uid = 65534;
	rc = run_prog("../host/lib_workload_manual", env, args, out, sizeof(out));
	run_uid = 0;
	ASSERT_EQ(0, rc);
	if (access(path, F_OK) == 0) {
		TH_LOG("meter.ko did not take the unprivileged process: signal backend");
		p = load_profile(path);
		ASSERT_NE(NULL, p);
		EXPECT_STREQ("signal", p->backend);
	} else {
		p = kernel_profile(last_pid);
		ASSERT_NE(NULL, p);
		EXPECT_STREQ("kernel", p->backend);
	}
	EXPECT_EQ(4000, calls_of(p, "leaf"));
	EXPECT_EQ(1000, calls_of(p, "top"));
	meter_profile_free(p);
	scratch_cleanup();
}

TEST_HARNESS_MAIN
