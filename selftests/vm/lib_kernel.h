/* SPDX-License-Identifier: MIT */
/*
 * libmeter's VM tests: run a workload from selftests/host with the kernel
 * backend and read its session back from meter.ko through nlclient.
 */
#ifndef LIB_KERNEL_H
#define LIB_KERNEL_H

#include "kselftest_harness.h"
#include "host/lib_run.h"

/*
 * A test's time limit: the harness's 30 s is for a native machine; under
 * TCG, and on the debug kernel, a workload takes many times longer (the
 * macro is read where TEST() expands, after this).
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600
#include "nldump.h"
#include "nlreg.h"

static struct meter_nl *knl;

/* The profile of the newest session of pid, deleted afterwards. */
TAP_HELPER struct meter_profile *kernel_profile(pid_t pid)
{
	struct meter_nl_sel sel = { .pid = pid };
	struct meter_profile *p = NULL;
	char err[256];
	int rc;

	if (!knl && meter_nl_open(&knl, err, sizeof(err))) {
		printf("# meter_nl_open: %s\n", err);
		return NULL;
	}
	rc = meter_nl_get_profile(knl, &sel, &p, err, sizeof(err));
	if (rc) {
		printf("# meter_nl_get_profile(pid %d): %s\n", (int)pid, err);
		return NULL;
	}
	/* a session left behind would be another test's to trip over */
	sel.cookie = p->cookie;
	if (meter_nl_delete(knl, &sel, err, sizeof(err))) {
		printf("# meter_nl_delete: %s\n", err);
		meter_profile_free(p);
		return NULL;
	}
	return p;
}

/*
 * Runs ../host/PROG with the kernel backend (and extra, "K=V" or NULL, in
 * its environment); its session's profile.  *status is its exit status;
 * *wrote is whether it wrote a profile file (the kernel backend never
 * should).
 */
TAP_HELPER struct meter_profile *run_kernel_env(const char *prog,
						const char *const *args,
						char *out, size_t outlen,
						const char *label,
						const char *extra,
						int *status, bool *wrote)
{
	char path[PATH_MAX], rel[PATH_MAX], env_out[PATH_MAX + 16];
	const char *env[] = { "METER_BACKEND=kernel", env_out,
			      "METER_QUIET=1", extra, NULL };

	snprintf(path, sizeof(path), "%s/%s.json", scratch(), label);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	snprintf(rel, sizeof(rel), "../host/%s", prog);
	*status = run_prog(rel, env, args, out, outlen);
	*wrote = access(path, F_OK) == 0;
	return kernel_profile(last_pid);
}

/*
 * The fixture most of these tests share: one run of a workload in a mode
 * (the variant) under meter.ko, and its session.  A test's setup fills
 * prog, args and label and calls kernel_run().
 */
struct kernel_run {
	struct meter_profile *p;
	char out[1024];
	int status;
	bool wrote;
};

TAP_HELPER void kernel_run(struct kernel_run *r, const char *prog,
			   const char *const *args, const char *label,
			   const char *extra)
{
	r->p = run_kernel_env(prog, args, r->out, sizeof(r->out), label,
			      extra, &r->status, &r->wrote);
}

/* what every kernel run must have done, in a fixture's setup */
#define ASSERT_KERNEL_RUN(r) do {					\
		ASSERT_EQ(0, (r)->status);				\
		ASSERT_FALSE((r)->wrote) TH_LOG("the kernel backend wrote a file"); \
		ASSERT_NE(NULL, (r)->p) TH_LOG("no session read back"); \
	} while (0)

#endif
