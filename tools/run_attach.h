/* SPDX-License-Identifier: MIT */
/*
 * meter-run --pid (run_attach.c): a running process patched, profiled
 * for a while, and left running with its patches taken back.
 */
#ifndef METER_TOOLS_RUN_ATTACH_H
#define METER_TOOLS_RUN_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct attach_req {
	pid_t pid;
	double duration;	/* seconds; 0: until ^C or its end */
	const char *patch_lib;	/* libmeter-patch.so, an absolute path */
	const char *env;	/* "NAME=VALUE" strings, then an empty one */
	size_t env_len;
};

/*
 * Attaches, waits, detaches.  *ended: the process ended meanwhile (its
 * profile ended with it).  0, or -1 with a message on stderr.
 */
int run_attach(const struct attach_req *q, bool *ended);

struct run_result;
/*
 * run_attach() for meter-run --pid, the process told what meter-run's
 * own environment says (its METER_* variables, set as for a PROG), rr
 * filled in as for a run.  0, or -1.
 */
int run_attach_env(pid_t pid, double duration, const char *patch_lib,
		   struct run_result *rr);

#endif /* METER_TOOLS_RUN_ATTACH_H */
