/* SPDX-License-Identifier: MIT */
/*
 * meter-run's collection of a run's profile (run_collect.c): the kernel
 * sessions of PROG's pid (and, with --follow-fork, of its descendants),
 * or the JSON files the signal and off backends wrote.
 */
#ifndef METER_TOOLS_RUN_COLLECT_H
#define METER_TOOLS_RUN_COLLECT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nldump.h"

/* How a run ended. */
struct run_result {
	pid_t pid;
	int status;		/* our exit status for it */
	uint64_t t0_ns;		/* CLOCK_BOOTTIME at fork */
	int signal;		/* the signal that killed it, 0: none */
	bool exec_failed;
	/*
	 * links[0]: METER_PARENT_COOKIE, the run's token, the link of
	 * sessions without a profiled ancestor; then the cookies of the
	 * tree's sessions already harvested (and deleted).
	 */
	uint64_t *links;
	size_t nlinks, links_cap;
	/* --follow-fork: the finished sessions harvested while PROG runs */
	struct meter_profile *harvest;
	/* meter.ko's count of evicted finished sessions at the start */
	uint64_t evicted0;
	/* without --follow-fork: profiles of forked children left out */
	size_t children_left;
};

/* The netlink socket to meter.ko, opened once; NULL if it cannot be. */
struct meter_nl *run_kernel(void);
/* Why run_kernel() returned NULL. */
const char *run_kernel_error(void);
void run_kernel_close(void);

/*
 * Reads (and, once PROG has exited, deletes) the kernel sessions of the
 * run, merged into one profile.  NULL when there are none.  *samples gets
 * their sample count (for the progress line) when profile is not wanted.
 */
struct meter_profile *run_kernel_collect(struct run_result *rr,
					 bool follow, bool final,
					 bool want_profile, uint64_t *samples);

/*
 * --follow-fork with the kernel backend, while PROG runs: reads and
 * deletes the tree's finished sessions into rr->harvest, before meter.ko's
 * bound on finished sessions (64 by default) evicts them.
 */
void run_kernel_harvest(struct run_result *rr);

/* A run_result for a run with that token; -1 on ENOMEM. */
int run_result_init(struct run_result *rr, uint64_t token);
/* rr's links and harvest, freed. */
void run_result_free(struct run_result *rr);

/* The files in tmpdir, merged (and removed); NULL when there are none. */
struct meter_profile *run_files_collect(struct run_result *rr,
					const char *tmpdir, bool follow);

/*
 * --patch: the functions libmeter-patch.so refused (tmpdir/patch.PID,
 * removed) into p, each with its reason and no count, so that the
 * profile names them instead of leaving them out.  -1 on ENOMEM.
 */
int run_patch_collect(struct meter_profile *p, const char *tmpdir);

/* run_warn.c: warnings on stderr about p's figures, if any. */
void run_warn_slow_path(const struct meter_profile *p);
void run_warn_unsampled(const struct meter_profile *p);

/* dir and the files in it. */
void run_remove_dir(const char *dir);

#endif
