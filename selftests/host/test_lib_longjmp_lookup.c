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

/* where [s, end) holds needle, or NULL */
static const char *find(const char *s, const char *end, const char *needle)
{
	return s < end ? memmem(s, (size_t)(end - s), needle,
				strlen(needle)) : NULL;
}

/*
 * A binding of libmeter's to libc's longjmp, _longjmp, siglongjmp or
 * __longjmp_chk in [s, end): "binding file .../libmeter.so.1 [0] to
 * .../libc.so.6 [0]: normal symbol `siglongjmp'", a line at a time.
 */
static bool jump_binding(const char *s, const char *end)
{
	const char *nl, *to, *sym;

	for (; s < end; s = nl + 1) {
		nl = find(s, end, "\n");
		if (!nl)
			nl = end;
		to = find(s, nl, " to ");
		sym = to ? find(to, nl, "symbol `") : NULL;
		if (find(s, nl, "binding file ") && to &&
		    find(s, to, "libmeter.so") && find(to, nl, "libc.so") &&
		    sym && find(sym, nl, "longjmp"))
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
