// SPDX-License-Identifier: MIT
/*
 * libmeter finds libc's longjmp functions as it loads, never at a jump: a
 * first jump from a signal handler that interrupted the dynamic linker
 * would otherwise wait on the lock dlsym takes, for good.  The dynamic
 * linker's own account (LD_DEBUG=bindings) of libmeter's lookups in libc,
 * before and after lib_jump_lookup says main has begun.
 */
#include "kselftest_harness.h"
#include "lib_run.h"

static char out[1 << 20];

/* a binding of libmeter's to libc's longjmp, _longjmp, siglongjmp or
 * __longjmp_chk, in text from s on */
static bool jump_binding(const char *s, const char *end)
{
	const char *l;

	for (; s && s < end; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		l = strstr(line, "binding file ");
		if (l && strstr(l, "libmeter.so") && strstr(l, " to ") &&
		    strstr(strstr(l, " to "), "libc.so") &&
		    strstr(l, "longjmp'"))
			return true;
	}
	return false;
}

TEST(libc_jumps_found_before_main_not_at_the_first_jump)
{
	const char *env[] = { "METER_BACKEND=off", "METER_QUIET=1",
			      "METER_OUTPUT=/dev/null", "LD_DEBUG=bindings",
			      NULL };
	const char *args[] = { NULL };
	const char *main_begins;

	run_stderr = 1;
	ASSERT_EQ(0, run_prog("lib_jump_lookup", env, args, out,
			      sizeof(out)));
	run_stderr = 0;
	ASSERT_NE(NULL, strstr(out, "jumps: 2\n"));
	main_begins = strstr(out, "lib_jump_lookup: main begins\n");
	ASSERT_NE(NULL, main_begins);
	/* the account shows the lookups: libmeter's, before main */
	ASSERT_TRUE(jump_binding(out, main_begins));
	EXPECT_FALSE(jump_binding(main_begins, out + strlen(out)));
}

TEST_HARNESS_MAIN
