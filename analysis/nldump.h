/* SPDX-License-Identifier: MIT */
/*
 * The tools' half of the netlink client: sessions listed and dumped into
 * the profile model, reset, deleted; the period changed.  Returns and
 * errors as in nlclient.h.
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

#endif /* METER_NLDUMP_H */
