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
 * The fixture most of these tests share: one run of a workload from
 * selftests/host (in a mode, the variant) under meter.ko, and its
 * session; ASSERT_BACKEND_RUN() in the setup.
 */
TAP_HELPER void kernel_run(struct backend_run *r, const char *prog,
			   const char *const *args, const char *label,
			   const char *extra)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "../host/%s", prog);
	run_with_backend(r, rel, "kernel", args, label, extra);
}

#endif
