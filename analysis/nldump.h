/* SPDX-License-Identifier: MIT */
/*
 * The tools' half of the netlink client: sessions listed as rows, dumped
 * into the profile model, reset, deleted; the period changed.  Returns
 * and errors as in nlclient.h.
 *
 * Internal to meter; not installed.
 */
#ifndef METER_NLDUMP_H
#define METER_NLDUMP_H

#include "model.h"
#include "nlclient.h"

int meter_nl_set_period(struct meter_nl *nl, uint64_t period_ns,
			char *err, size_t errlen);


/* A session selector: cookie if non-zero, else pid. */
struct meter_nl_sel {
	uint64_t cookie;
	int32_t pid;
};

/*
 * One session as SESSION_GET lists it: its header, checked as a
 * profile's is, but no functions, stacks or threads, which only
 * PROFILE_GET (meter_nl_get_profile) reads.  A type of its own, not a
 * profile with empty tables, so that no caller takes a listed session for
 * its profile, and the list, which a tool may take often, costs one small
 * row a session.
 */
struct meter_session_row {
	char *command;		/* NULL: the module gave none */
	uint64_t cookie;
	uint64_t parent_cookie;	/* nearest profiled ancestor, or a run's
				   token (proctree.h); 0: none */
	int32_t pid;
	uint32_t uid;
	bool exited;		/* METER_A_STATE is METER_STATE_EXITED */
	bool wall;		/* METER_A_CLOCK is METER_CLOCK_WALL */
	uint64_t period_ns;
	uint64_t start_ns, end_ns;	/* CLOCK_BOOTTIME; end 0 while live */
	uint64_t samples;
	uint64_t samples_off[METER_OFF_KINDS];	/* wall: off the CPU */
	uint64_t ticks;
	uint64_t no_current;
	uint64_t invalid;
	uint64_t lost;
	uint64_t truncated;
	uint64_t call_cost_ps;
	uint64_t slow_entries;
	uint64_t stretched_ticks;
	uint32_t threads;	/* registered now: a running session's count */
	uint32_t threads_total;	/* ever registered: an exited one's count */
};

/*
 * Lists the sessions the caller may read, in one request however many
 * there are: *out is one array of *n rows (NULL when none), for
 * meter_session_rows_free.  A row that breaks meter.h's promises fails
 * the whole list (-EPROTO), as it would fail the session's profile.
 */
int meter_nl_list(struct meter_nl *nl, struct meter_session_row **out,
		  size_t *n, char *err, size_t errlen);
/* The rows and their commands: one call, since they are one allocation. */
void meter_session_rows_free(struct meter_session_row *v, size_t n);
/* A session's whole profile, backend "kernel". */
int meter_nl_get_profile(struct meter_nl *nl, const struct meter_nl_sel *sel,
			 struct meter_profile **out, char *err, size_t errlen);
int meter_nl_reset(struct meter_nl *nl, const struct meter_nl_sel *sel,
		   char *err, size_t errlen);
int meter_nl_delete(struct meter_nl *nl, const struct meter_nl_sel *sel,
		    char *err, size_t errlen);

#endif /* METER_NLDUMP_H */
