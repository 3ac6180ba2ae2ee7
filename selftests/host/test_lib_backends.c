// SPDX-License-Identifier: MIT
/*
 * Backend choice without meter.ko (this host has no module support):
 * auto falls back to the signal backend with one line on stderr, which
 * METER_QUIET=1 silences; signal says once that it is tick-limited;
 * kernel explains that the module is missing and counts calls only;
 * METER_OUTPUT's %p is the pid; with nothing asked (no METER_ variable) a
 * program writes and says nothing, with a backend named it writes
 * meter.out.PID; METER_NOTICE_SIGNAL=0 (meter-run's) leaves
 * the notice out; a profile that cannot be written is said to be lost.
 * Skipped where meter.ko answers.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "lib_run.h"
#include "nldump.h"

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

FIXTURE(backend) {
	char out[2048], env_out[PATH_MAX + 16], path[PATH_MAX];
	struct meter_profile *p;
	bool module;	/* meter.ko answers: nothing to test here */
};

/* at the top of each test (a SKIP in the setup would still run the test
 * on this harness) */
#define NEED_NO_MODULE() \
	do { \
		if (self->module) \
			SKIP(return, "meter.ko is reachable on this machine"); \
	} while (0)

FIXTURE_SETUP(backend)
{
	struct meter_nl *nl;

	if (meter_nl_open(&nl, self->out, sizeof(self->out)) == 0) {
		meter_nl_close(nl);
		self->module = true;
		return;
	}
	snprintf(self->path, sizeof(self->path), "%s/b.json", scratch());
	snprintf(self->env_out, sizeof(self->env_out), "METER_OUTPUT=%s",
		 self->path);
}

FIXTURE_TEARDOWN(backend)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

/* lib_workload_manual "counts 100", stderr captured with stdout; its
 * exit status */
static int run(struct _test_data_backend *self, const char *b,
	       const char *quiet)
{
	const char *env[] = { b, self->env_out, quiet, NULL };
	const char *args[] = { "counts", "100", NULL };
	int status;

	run_stderr = 1;
	status = run_prog("lib_workload_manual", env, args, self->out,
			  sizeof(self->out));
	run_stderr = 0;
	self->p = load_profile(self->path);
	return status;
}

TEST_F(backend, auto_falls_back_to_signal_with_one_line)
{
	NEED_NO_MODULE();
	ASSERT_EQ(0, run(self, "METER_BACKEND=auto", NULL))
		TH_LOG("%s", self->out);
	ASSERT_NE(NULL, self->p);
	EXPECT_STREQ("signal", self->p->backend);
	EXPECT_NE(NULL, strstr(self->out, "meter.ko not available"));
	EXPECT_EQ(2, lines(self->out)) TH_LOG("besides the program's own: %s",
					     self->out);
}

TEST_F(backend, quiet_silences_the_notice)
{
	NEED_NO_MODULE();
	ASSERT_EQ(0, run(self, "METER_BACKEND=auto", "METER_QUIET=1"))
		TH_LOG("%s", self->out);
	ASSERT_NE(NULL, self->p);
	EXPECT_EQ(1, lines(self->out));
}

TEST_F(backend, signal_says_once_it_is_tick_limited)
{
	NEED_NO_MODULE();
	ASSERT_EQ(0, run(self, "METER_BACKEND=signal", NULL))
		TH_LOG("%s", self->out);
	ASSERT_NE(NULL, self->p);
	EXPECT_STREQ("signal", self->p->backend);
	EXPECT_NE(NULL, strstr(self->out, "scheduler tick"));
	EXPECT_EQ(2, lines(self->out));
}

TEST_F(backend, kernel_without_module_says_why_and_counts_calls_only)
{
	NEED_NO_MODULE();
	ASSERT_EQ(0, run(self, "METER_BACKEND=kernel", NULL))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "METER_BACKEND=kernel"));
	ASSERT_NE(NULL, self->p);
	EXPECT_STREQ("off", self->p->backend);
	EXPECT_EQ(400, calls_of(self->p, "leaf"));
}

TEST_F(backend, output_percent_p_is_the_pid)
{
	char pattern[PATH_MAX + 16], expect[PATH_MAX + 32];
	const char *env[] = { "METER_BACKEND=off", "METER_QUIET=1", pattern,
			      NULL };
	const char *args[] = { "counts", "1", NULL };

	NEED_NO_MODULE();
	snprintf(pattern, sizeof(pattern), "METER_OUTPUT=%s/pid-%%p.json",
		 scratch());
	ASSERT_EQ(0, run_prog("lib_workload_manual", env, args, self->out,
			      sizeof(self->out)));
	snprintf(expect, sizeof(expect), "%s/pid-%d.json", scratch(),
		 (int)last_pid);
	EXPECT_EQ(0, access(expect, F_OK));
}

/* the files in dir (not . and ..) */
static int files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* run in an empty directory of its own with no METER_ variable at all */
static int run_unasked(struct _test_data_backend *self, const char *b)
{
	const char *env[] = { b, NULL };
	const char *args[] = { "counts", "100", NULL };
	char dir[PATH_MAX];
	int status;

	snprintf(dir, sizeof(dir), "%s/cwd", scratch());
	mkdir(dir, 0700);
	if (chdir(dir))
		return -1;
	unsetenv("METER_OUTPUT");
	unsetenv("METER_BACKEND");
	unsetenv("METER_QUIET");
	run_stderr = 1;
	status = run_prog("lib_workload_manual", env, args, self->out,
			  sizeof(self->out));
	run_stderr = 0;
	return status;
}

/* a program that a build or a test runs, with no profiler asking */
TEST_F(backend, unasked_without_module_writes_nothing_says_nothing)
{
	char dir[PATH_MAX];

	NEED_NO_MODULE();
	ASSERT_EQ(0, run_unasked(self, NULL)) TH_LOG("%s", self->out);
	snprintf(dir, sizeof(dir), "%s/cwd", scratch());
	EXPECT_EQ(0, files_in(dir));
	EXPECT_EQ(1, lines(self->out)) TH_LOG("%s", self->out);
}

/* a backend named: the profile goes to the default file */
TEST_F(backend, signal_named_without_output_writes_the_default_file)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	NEED_NO_MODULE();
	ASSERT_EQ(0, run_unasked(self, "METER_BACKEND=signal"))
		TH_LOG("%s", self->out);
	snprintf(dir, sizeof(dir), "%s/cwd", scratch());
	snprintf(path, sizeof(path), "%s/meter.out.%d", dir, (int)last_pid);
	EXPECT_EQ(1, files_in(dir));
	EXPECT_EQ(0, access(path, F_OK));
}

/* meter-run says it once for a whole tree of processes */
TEST_F(backend, signal_notice_left_to_meter_run_when_it_said_it)
{
	NEED_NO_MODULE();
	ASSERT_EQ(0, run(self, "METER_BACKEND=signal", "METER_NOTICE_SIGNAL=0"))
		TH_LOG("%s", self->out);
	ASSERT_NE(NULL, self->p);
	EXPECT_EQ(NULL, strstr(self->out, "scheduler tick"));
	EXPECT_EQ(1, lines(self->out));
}

/* not a notice: said with METER_QUIET=1 too */
TEST_F(backend, unwritable_output_says_the_profile_is_lost)
{
	NEED_NO_MODULE();
	snprintf(self->env_out, sizeof(self->env_out),
		 "METER_OUTPUT=/nonexistent/dir/m.json");
	ASSERT_EQ(0, run(self, "METER_BACKEND=signal", "METER_QUIET=1"))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "cannot write the profile to "
				       "/nonexistent/dir/m.json"));
	EXPECT_NE(NULL, strstr(self->out, "the profile is lost"))
		TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
