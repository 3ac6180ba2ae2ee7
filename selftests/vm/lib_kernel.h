/* SPDX-License-Identifier: MIT */
/*
 * libmeter's VM-only tests: run a workload from selftests/host with the
 * kernel backend and read its session back from meter.ko through
 * nlclient.  A test that holds on both machines is written once, over
 * host/lib_backend.h, instead.
 */
#ifndef LIB_KERNEL_H
#define LIB_KERNEL_H

#include "host/lib_backend.h"
#include "nlreg.h"

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
