// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the netlink dump parsers of analysis/nldump.c, which turn
 * meter.ko's SESSION_GET dumps into session rows and its PROFILE_GET
 * dumps into the profile model.
 * The input is what recv() would hand libnl: netlink messages back to
 * back, each a genetlink header and attributes.  A module of another
 * version, or a bug in it, is outside input to the tools like any file.
 *
 * The parsers are static, so nldump.c is compiled in here; every message
 * goes through genlmsg_parse() as nlclient.c's meter_nl_on_valid() does,
 * then to both parsers, and the dump ends as meter_nl_get_profile() ends
 * it.  A profile that parses is then what meter-stat makes of it: reports,
 * the JSON it writes read back (fuzz.h); json-format.md promises that
 * every file the tools write reads back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "../analysis/nldump.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct meter_nl_list l = { NULL, 0, 0 };
	struct meter_profile *p = meter_profile_new();
	struct nlattr *tb[METER_A_MAX + 1];
	int ret = 0, lret = 0, rem = (int)size;
	struct nlmsghdr *nlh;
	void *buf;

	if (size > 1 << 20)
		return 0;	/* a recv() buffer is smaller; keeps rem an int */
	/* libnl reads from an aligned buffer: so must the input */
	buf = malloc(size ? size : 1);
	FUZZ_CHECK(buf && p, "out of memory");
	memcpy(buf, data, size);
	snprintf(p->backend, sizeof(p->backend), "kernel");
	for (nlh = buf; nlmsg_ok(nlh, rem); nlh = nlmsg_next(nlh, &rem)) {
		/* libnl ends the request at DONE or ERROR, skips NOOP */
		if (nlh->nlmsg_type == NLMSG_DONE ||
		    nlh->nlmsg_type == NLMSG_ERROR)
			break;
		if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
			continue;
		if (genlmsg_parse(nlh, 0, tb, METER_A_MAX, NULL) < 0) {
			/* "malformed reply": the request fails */
			ret = lret = -EPROTO;
			break;
		}
		if (!ret)
			ret = meter_nl_parse_profile(tb, p);
		if (!lret)
			lret = meter_nl_parse_list(tb, &l);
		if (ret && lret)
			break;
	}
	free(buf);
	/* the end of the dump, as meter_nl_get_profile() ends it */
	if (!ret)
		ret = meter_nl_profile_end(p);
	meter_session_rows_free(l.v, l.n);
	if (!ret)
		fuzz_consume(p);
	meter_profile_free(p);
	return 0;
}
