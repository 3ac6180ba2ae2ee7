/* SPDX-License-Identifier: MIT */
/*
 * The netlink client: the one place in userspace that speaks libnl to
 * meter.ko.  Its requests are in two halves on this socket: libmeter's
 * registration (lib/nlreg.h) and the tools' sessions (analysis/nldump.h).
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

struct meter_nl;

/*
 * Opens a socket and resolves the "meter" family.  -ENOENT when the family
 * does not exist (module not loaded and not autoloadable).
 */
int meter_nl_open(struct meter_nl **out, char *err, size_t errlen);
void meter_nl_close(struct meter_nl *nl);

/* --- for the two halves --- */

struct nl_msg;
struct nlattr;

/* A request for cmd, NULL on ENOMEM; size 0: libnl's default. */
struct nl_msg *meter_nl_msg(struct meter_nl *nl, int cmd, int flags,
			    size_t size);
/*
 * Sends msg (consumed) and processes the answer until its end; parse is
 * called with the attributes of every reply or dump message.
 */
int meter_nl_transact(struct meter_nl *nl, struct nl_msg *msg,
		      int (*parse)(struct nlattr **tb, void *arg), void *arg,
		      const char *what, char *err, size_t errlen);

/* Attribute readers: absent or short attributes read as 0. */
uint64_t meter_nl_get_u64(const struct nlattr *a);
uint32_t meter_nl_get_u32(const struct nlattr *a);
/* A copy of a string attribute, NULL when absent; *bad on ENOMEM. */
char *meter_nl_get_str(const struct nlattr *a, int *bad);

#endif /* METER_NLCLIENT_H */
