/* SPDX-License-Identifier: MIT */
/*
 * libmeter's VM tests: run a workload from selftests/host with the kernel
 * backend and read its session back from meter.ko through nlclient.
 */
#ifndef LIB_KERNEL_H
#define LIB_KERNEL_H

#include "host/lib_tap.h"
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
		diag("meter_nl_open: %s", err);
		return NULL;
	}
	rc = meter_nl_get_profile(knl, &sel, &p, err, sizeof(err));
	if (rc) {
		diag("meter_nl_get_profile(pid %d): %s", (int)pid, err);
		return NULL;
	}
	sel.cookie = p->cookie;
	if (meter_nl_delete(knl, &sel, err, sizeof(err)))
		diag("meter_nl_delete: %s", err);
	return p;
}

/*
 * Runs ../host/PROG with the kernel backend (and extra, "K=V" or NULL, in
 * its environment); its session's profile.
 */
TAP_HELPER struct meter_profile *run_kernel_env(const char *prog,
						const char *const *args,
						char *out, size_t outlen,
						const char *label,
						const char *extra)
{
	char path[PATH_MAX], rel[PATH_MAX], env_out[PATH_MAX + 16];
	const char *env[] = { "METER_BACKEND=kernel", env_out,
			      "METER_QUIET=1", extra, NULL };
	int rc;

	snprintf(path, sizeof(path), "%s/%s.json", scratch(), label);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	snprintf(rel, sizeof(rel), "../host/%s", prog);
	rc = run_prog(rel, env, args, out, outlen);
	ok(rc == 0, "%s: exits 0 under the kernel backend", label);
	ok(access(path, F_OK) != 0, "%s: kernel backend writes no file", label);
	return kernel_profile(last_pid);
}

#define run_kernel(prog, args, out, outlen, label) \
	run_kernel_env(prog, args, out, outlen, label, NULL)

#endif
