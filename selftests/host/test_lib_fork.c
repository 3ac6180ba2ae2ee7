// SPDX-License-Identifier: MIT
/*
 * A forked child gets its own profile: its own output file (METER_OUTPUT
 * with %p), only its own calls (the parent's are not counted twice), and
 * the parent's cookie as its parent_cookie.  Forks while threads make
 * profiled calls leave no child holding a lock.  A child that leaves with
 * _exit() still writes its profile; a vfork child that does touches
 * nothing of its parent's.  Signal backend, in each mode (the variants).
 */
#include <dirent.h>

#include "kselftest_harness.h"
#include "lib_run.h"

/* Runs the workload with its profiles written to DIR/out.PID.json; the
 * number of files, the first two loaded into pp[] */
static int run_files(const char *mode, const char *what, const char *n,
		     char *out, size_t outlen, int *status,
		     struct meter_profile **pp, int keep, int *exact100)
{
	char prog[64], env_out[PATH_MAX + 16], dir[PATH_MAX], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { what, n, NULL };
	struct dirent *de;
	DIR *d;
	int files = 0;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(dir, sizeof(dir), "%s/%s-%s", scratch(), what, mode);
	mkdir(dir, 0700);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s/out.%%p.json", dir);
	*status = run_prog(prog, env, args, out, outlen);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct meter_profile *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = load_profile(path);
		if (exact100 && p && p->parent_cookie &&
		    calls_of(p, "leaf") == 100)
			(*exact100)++;
		if (files < keep)
			pp[files] = p;
		else
			meter_profile_free(p);
		files++;
	}
	if (d)
		closedir(d);
	return files;
}

FIXTURE(fork) {
	struct meter_profile *pp[2], *parent, *child;
};

FIXTURE_VARIANT(fork) {
	const char *mode, *what;
};

FIXTURE_VARIANT_ADD(fork, manual) { .mode = "manual", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, automatic) { .mode = "auto", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, plugin) { .mode = "plugin", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, manual__exit) {
	.mode = "manual", .what = "fork_exit" };
FIXTURE_VARIANT_ADD(fork, automatic__exit) {
	.mode = "auto", .what = "fork_exit" };
FIXTURE_VARIANT_ADD(fork, plugin__exit) {
	.mode = "plugin", .what = "fork_exit" };

/* "fork 1000": the parent calls leaf 1000 times, forks, the child 2000,
 * spins 100 ms and exit()s; "fork_exit 1000": the child _exit()s */
FIXTURE_SETUP(fork)
{
	char out[256];
	int status, files;

	files = run_files(variant->mode, variant->what, "1000", out,
			  sizeof(out),
			  &status, self->pp, 2, NULL);
	ASSERT_EQ(0, status);
	ASSERT_EQ(2, files) TH_LOG("parent and child each write their own file");
	ASSERT_NE(NULL, self->pp[0]);
	ASSERT_NE(NULL, self->pp[1]);
	self->parent = calls_of(self->pp[0], "main") == 1 &&
		       self->pp[0]->parent_cookie == 0 ?
		       self->pp[0] : self->pp[1];
	self->child = self->parent == self->pp[0] ? self->pp[1] : self->pp[0];
}

FIXTURE_TEARDOWN(fork)
{
	meter_profile_free(self->pp[0]);
	meter_profile_free(self->pp[1]);
	scratch_cleanup();
}

TEST_F(fork, the_two_files_are_two_processes)
{
	EXPECT_NE(self->parent->pid, self->child->pid);
}

TEST_F(fork, parent_reports_its_own_calls)
{
	EXPECT_EQ(1000, calls_of(self->parent, "leaf"));
}

TEST_F(fork, child_reports_only_its_own_calls)
{
	EXPECT_EQ(2000, calls_of(self->child, "leaf"));
}

TEST_F(fork, child_keeps_its_time_by_exit_or__exit)
{
	const struct meter_func *spin = func_named(self->child, "spin");

	ASSERT_NE(NULL, spin);
	EXPECT_EQ(1, spin->calls);
	/* it spun 100 ms of CPU: sampled, or counted as missed */
	EXPECT_LE(50, accounted_ms(self->child));
}

TEST_F(fork, child_names_the_parent_cookie)
{
	EXPECT_NE(0, self->parent->cookie);
	EXPECT_EQ(self->parent->cookie, self->child->parent_cookie);
}

FIXTURE(forkbusy) {
	char out[256];
	int status, files, exact;
};

FIXTURE_VARIANT(forkbusy) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(forkbusy, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(forkbusy, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(forkbusy, plugin) { .mode = "plugin" };

/*
 * make check-asan: GCC 12's ASan allocator takes no lock around fork, so a
 * child forked while another thread is inside it (here the 4 threads
 * start and register, calloc, as the forks begin) can hang for good in
 * LeakSanitizer's check at its exit.
 */
#define FORKBUSY_ASAN_SKIP()						\
	do {								\
		if (getenv("METER_ASAN"))				\
			SKIP(return, "ASan's allocator is not fork-safe: a child forked while threads allocate can hang"); \
	} while (0)

/* "forkbusy 30": 30 forks while 4 threads make profiled calls; each
 * child calls leaf 100 times */
FIXTURE_SETUP(forkbusy)
{
	FORKBUSY_ASAN_SKIP();
	self->files = run_files(variant->mode, "forkbusy", "30", self->out,
				sizeof(self->out), &self->status, NULL, 0,
				&self->exact);
}

FIXTURE_TEARDOWN(forkbusy)
{
	scratch_cleanup();
}

TEST_F(forkbusy, every_child_exits_0)
{
	FORKBUSY_ASAN_SKIP();
	EXPECT_EQ(0, self->status);
	EXPECT_NE(NULL, strstr(self->out, "children_failed=0"));
}

TEST_F(forkbusy, each_child_file_has_exactly_its_own_calls)
{
	FORKBUSY_ASAN_SKIP();
	EXPECT_EQ(31, self->files);
	EXPECT_EQ(30, self->exact);
}

/* "vfork 100": leaf, then a vfork child that _exit()s at once, 100 times */
FIXTURE(vfork) {
	struct meter_profile *pp[1];
	char out[256];
	int files, status;
};

FIXTURE_VARIANT(vfork) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(vfork, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(vfork, plugin) { .mode = "plugin" };

FIXTURE_SETUP(vfork)
{
	self->pp[0] = NULL;
	self->files = run_files(variant->mode, "vfork", "100", self->out,
				sizeof(self->out), &self->status, self->pp, 1,
				NULL);
}

FIXTURE_TEARDOWN(vfork)
{
	meter_profile_free(self->pp[0]);
	scratch_cleanup();
}

TEST_F(vfork, a_vfork_child_leaving_with__exit_touches_no_profile)
{
	EXPECT_EQ(0, self->status);
	ASSERT_EQ(1, self->files) TH_LOG("only the parent writes a profile");
	ASSERT_NE(NULL, self->pp[0]);
	EXPECT_EQ(100, calls_of(self->pp[0], "leaf"));
	EXPECT_EQ(1, calls_of(self->pp[0], "spin"));
	EXPECT_EQ(1, printed_depth(self->out)) TH_LOG("the stack came back");
}

TEST_HARNESS_MAIN
