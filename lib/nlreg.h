/* SPDX-License-Identifier: MIT */
/*
 * libmeter's half of the netlink client: registration of the calling
 * thread, its function names and its call counts.  Returns and errors as
 * in nlclient.h.
 *
 * Internal to meter; not installed.
 */
#ifndef METER_NLREG_H
#define METER_NLREG_H

#include "nlclient.h"

struct meter_nl_reg {
	uint64_t page_addr;
	uint64_t period_ns;	/* 0: module default */
	uint64_t parent_cookie;	/* 0: none */
	uint64_t call_cost_ps;	/* 0: unknown */
	uint64_t counts_addr;	/* the thread's live call counters, 0: none */
	uint32_t clock;		/* enum meter_clock; on return the session's,
				   which its first thread chose */
};

int meter_nl_register(struct meter_nl *nl, struct meter_nl_reg *reg,
		      uint64_t *cookie, uint64_t *period_ns,
		      char *err, size_t errlen);
int meter_nl_unregister(struct meter_nl *nl, char *err, size_t errlen);

struct meter_nl_func {
	uint32_t id;
	uint32_t line;		/* 0: none */
	const char *name;
	const char *file;	/* NULL: none */
	uint64_t cost_ps;	/* 0: the session's call cost */
};
/* Sends as many messages as needed. */
int meter_nl_add_funcs(struct meter_nl *nl, const struct meter_nl_func *f,
		       size_t n, char *err, size_t errlen);
/*
 * Thread tid's counts (0: the sender's), ids ascending; the last message
 * is marked so and carries slow, its slow-path entries.
 */
int meter_nl_add_calls(struct meter_nl *nl, uint32_t tid,
		       const struct meter_call_counts *c, size_t n,
		       uint64_t slow, char *err, size_t errlen);
#endif /* METER_NLREG_H */
