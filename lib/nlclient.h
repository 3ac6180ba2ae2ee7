/* SPDX-License-Identifier: MIT */
/*
 * The netlink client: the one place in userspace that speaks libnl to
 * meter.ko.  libmeter uses the registration half from the profiled threads;
 * meter-run and meter-stat use the session half.
 *
 * Every function returns 0 or a negative errno; where it fails and err is
 * not NULL, err receives a one-line message (the kernel's extended-ack
 * message when there is one).
 *
 * Internal to meter; not installed.
 */
#ifndef METER_NLCLIENT_H
#define METER_NLCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <linux/meter.h>

#include "profile.h"

struct meter_nl;

/*
 * Opens a socket and resolves the "meter" family.  -ENOENT when the family
 * does not exist (module not loaded and not autoloadable).
 */
int meter_nl_open(struct meter_nl **out, char *err, size_t errlen);
void meter_nl_close(struct meter_nl *nl);

/* --- the registering thread's half --- */

struct meter_nl_reg {
	uint64_t page_addr;
	uint64_t period_ns;	/* 0: module default */
	uint64_t parent_cookie;	/* 0: none */
	uint64_t call_cost_ps;	/* 0: unknown */
};

int meter_nl_register(struct meter_nl *nl, const struct meter_nl_reg *reg,
		      uint64_t *cookie, uint64_t *period_ns,
		      char *err, size_t errlen);
int meter_nl_unregister(struct meter_nl *nl, char *err, size_t errlen);

struct meter_nl_func {
	uint32_t id;
	const char *name;
};
/* Sends as many messages as needed. */
int meter_nl_add_funcs(struct meter_nl *nl, const struct meter_nl_func *f,
		       size_t n, char *err, size_t errlen);
int meter_nl_add_calls(struct meter_nl *nl,
		       const struct meter_call_counts *c, size_t n,
		       char *err, size_t errlen);
int meter_nl_set_period(struct meter_nl *nl, uint64_t period_ns,
			char *err, size_t errlen);

/* --- the reader's half --- */

/* A session selector: cookie if non-zero, else pid. */
struct meter_nl_sel {
	uint64_t cookie;
	int32_t pid;
};

/*
 * Lists sessions.  Each is returned as a profile holding only the session
 * fields (no functions, stacks or threads); *out is an array of *n
 * pointers, free each with meter_profile_free and the array with free().
 */
int meter_nl_list(struct meter_nl *nl, struct meter_profile ***out,
		  size_t *n, char *err, size_t errlen);
/* A session's whole profile, backend "kernel". */
int meter_nl_get_profile(struct meter_nl *nl, const struct meter_nl_sel *sel,
			 struct meter_profile **out, char *err, size_t errlen);
int meter_nl_reset(struct meter_nl *nl, const struct meter_nl_sel *sel,
		   char *err, size_t errlen);
int meter_nl_delete(struct meter_nl *nl, const struct meter_nl_sel *sel,
		    char *err, size_t errlen);

#endif /* METER_NLCLIENT_H */
