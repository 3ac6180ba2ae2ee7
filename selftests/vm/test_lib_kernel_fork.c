// SPDX-License-Identifier: MIT
/*
 * A forked child gets its own kernel session, linked to its parent's by
 * parent_cookie, with only its own calls.
 */
#include "lib_kernel.h"

static void check(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "fork", "1000", NULL };
	struct meter_profile *parent, *child = NULL;
	const char *c;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s fork", mode);
	parent = run_kernel(prog, args, out, sizeof(out), label);
	c = strstr(out, "child=");
	if (c)
		child = kernel_profile(atoi(c + 6));
	ok(parent && child, "%s: parent and child each have a session", mode);
	if (parent && child) {
		ok(parent->cookie != child->cookie, "%s: two sessions", mode);
		ok(child->parent_cookie == parent->cookie,
		   "%s: child's session names the parent's", mode);
		ok(calls_of(parent, "leaf") == 1000,
		   "%s: parent's session has its 1000 calls (got %lld)", mode,
		   calls_of(parent, "leaf"));
		ok(calls_of(child, "leaf") == 2000,
		   "%s: child's session has only its own 2000 calls (got %lld)",
		   mode, calls_of(child, "leaf"));
	}
	meter_profile_free(parent);
	meter_profile_free(child);
}

int main(void)
{
	check("manual");
	check("auto");
	check("plugin");
	scratch_cleanup();
	return tap_done();
}
