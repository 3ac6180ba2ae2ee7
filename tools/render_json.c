// SPDX-License-Identifier: MIT
/* JSON: the schema of Documentation/json-format.md, common/profile_write.c. */
#include <errno.h>

#include "report.h"

int render_json(const struct meter_profile *p, FILE *out)
{
	if (meter_profile_write_json(p, out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
