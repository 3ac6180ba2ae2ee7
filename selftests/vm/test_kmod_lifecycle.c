// SPDX-License-Identifier: MIT
/*
 * Process lifecycle: a session read after its process exited (and was
 * reaped) holds the full counts; exec ends the registration; a forked
 * child is not registered; kill -9 at random moments leaves a readable,
 * finished session.
 */
#include <sys/wait.h>

#include "kmod_util.h"

#define PERIOD 200000	/* 5 kHz */

/* Child: register, burn in f1, report CPU time and samples, exit. */
static void exit_child(int wfd)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_call_counts cc = { .id = 1, .calls = 7 };
	uint64_t burnt;

	ku_register(nl, pg, PERIOD);
	ku_funcs(nl, 1);
	ku_enter(pg, 1);
	burnt = ku_burn(400000000);
	ku_leave(pg);
	meter_nl_add_calls(nl, 0, &cc, 1, 0, NULL, 0);
	if (write(wfd, &burnt, sizeof(burnt)) != sizeof(burnt))
		_exit(2);
	_exit(0);	/* exit's own CPU time goes to no_current */
}

/* a child that registered, burnt 0.4 s in f1, flushed 7 calls, exited */
FIXTURE(exited) {
	struct meter_profile *p;
	uint64_t burnt;
};

FIXTURE_SETUP(exited)
{
	struct meter_nl *nl = ku_open();
	int fds[2], st;
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	if (!pid)
		exit_child(fds[1]);
	ASSERT_EQ(sizeof(self->burnt), read(fds[0], &self->burnt,
					    sizeof(self->burnt)));
	waitpid(pid, &st, 0);
	self->p = ku_profile(nl, 0, pid);
	TH_LOG("exited child: %llu samples of f1 for %.3f CPU-s",
	       (unsigned long long)ku_self(self->p, 1), self->burnt / 1e9);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(exited)
{
	meter_profile_free(self->p);
}

TEST_F(exited, after_waitpid_the_session_is_finished_and_its_thread_exited)
{
	EXPECT_TRUE(self->p->exited);
	EXPECT_LE(self->p->start_ns, self->p->end_ns);
	ASSERT_EQ(1, self->p->nthreads);
	EXPECT_TRUE(self->p->threads[0].exited);
}

TEST_F(exited, after_waitpid_the_session_holds_the_full_counts)
{
	double rate = ku_self(self->p, 1) * 1e9 / self->burnt;

	EXPECT_GE(0.05 * 1e9 / PERIOD, ku_abs(rate - 1e9 / PERIOD))
		TH_LOG("%.0f samples per CPU-second", rate);
}

TEST_F(exited, call_counts_flushed_before_exit_are_kept)
{
	const struct meter_func *f1 = meter_profile_find(self->p, 1);

	ASSERT_NE(NULL, f1);
	EXPECT_EQ(7, f1->calls);
}

/* a registered child burning 0.1 s, then exec'ing itself to burn 0.3 s */
FIXTURE(exec) {
	struct meter_profile *p;
	uint64_t before;	/* samples just before the exec */
};

FIXTURE_SETUP(exec)
{
	struct meter_nl *nl = ku_open();
	uint64_t got[2];
	int fds[2], st;
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	if (!pid) {
		struct meter_nl *cnl = ku_open();
		struct meter_page *pg = ku_page();
		uint64_t cookie = ku_register(cnl, pg, PERIOD);
		struct meter_profile *cp;

		ku_funcs(cnl, 1);
		ku_enter(pg, 1);
		ku_burn(100000000);
		cp = ku_profile(cnl, cookie, 0);
		got[0] = cookie;
		got[1] = cp->samples;
		if (write(fds[1], got, sizeof(got)) != sizeof(got))
			_exit(2);
		execl("/proc/self/exe", "/proc/self/exe", "--burn", (char *)NULL);
		_exit(3);
	}
	close(fds[1]);
	ASSERT_EQ(sizeof(got), read(fds[0], got, sizeof(got)));
	waitpid(pid, &st, 0);
	self->before = got[1];
	self->p = ku_profile(nl, got[0], 0);
	TH_LOG("before exec %llu samples, at the end %llu",
	       (unsigned long long)self->before,
	       (unsigned long long)self->p->samples);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(exec)
{
	meter_profile_free(self->p);
}

TEST_F(exec, exec_ends_the_registration_and_the_session)
{
	EXPECT_TRUE(self->p->exited);
	ASSERT_EQ(1, self->p->nthreads);
	EXPECT_TRUE(self->p->threads[0].exited);
}

/* execve itself runs in the old image (15-35 ms under TCG, more on -rt);
 * the new image burns 300 ms = 1500 samples */
TEST_F(exec, the_new_image_is_not_sampled_into_the_old_session)
{
	EXPECT_GE(self->before + 500, self->p->samples);
}

/* the parent registered, f1 current across a fork whose child burns
 * 0.3 s with the inherited page */
FIXTURE(forked) {
	struct meter_nl *nl;
	pid_t child;
	uint64_t s0, s1;	/* the parent's f1 samples before, after */
	uint64_t cpu;		/* the parent's CPU ns meanwhile */
};

FIXTURE_SETUP(forked)
{
	struct meter_page *pg = ku_page();
	struct meter_profile *p;
	uint64_t cookie, c0;
	int st;

	self->nl = ku_open();
	cookie = ku_register(self->nl, pg, PERIOD);
	ku_funcs(self->nl, 1);
	p = ku_profile(self->nl, cookie, 0);
	self->s0 = ku_self(p, 1);
	meter_profile_free(p);
	c0 = ku_thread_cpu_ns();
	ku_enter(pg, 1);
	self->child = fork();
	if (!self->child) {
		ku_burn(300000000);
		_exit(0);
	}
	waitpid(self->child, &st, 0);
	ku_leave(pg);
	self->cpu = ku_thread_cpu_ns() - c0;
	p = ku_profile(self->nl, cookie, 0);
	self->s1 = ku_self(p, 1);
	meter_profile_free(p);
}

FIXTURE_TEARDOWN(forked)
{
	meter_nl_close(self->nl);
}

/* The parent's own fork and wait are its CPU time; the child's 300 ms
 * would be 1500 samples. */
TEST_F(forked, a_forked_childs_cpu_time_is_not_sampled_into_the_parent)
{
	EXPECT_GE(self->s0 + self->cpu * 6 / 5 / PERIOD + 20, self->s1)
		TH_LOG("f1 samples %llu -> %llu, parent CPU %.3f ms",
		       (unsigned long long)self->s0,
		       (unsigned long long)self->s1, self->cpu / 1e6);
}

TEST_F(forked, a_forked_child_has_no_session)
{
	struct meter_nl_sel sel = { .pid = self->child };
	struct meter_profile *q = NULL;

	EXPECT_EQ(-ENOENT, meter_nl_get_profile(self->nl, &sel, &q, NULL, 0));
	meter_profile_free(q);
}

TEST(kill_9_at_random_moments_leaves_finished_sessions)
{
	struct meter_nl *nl = ku_open();
	int i, st;

	srand((unsigned int)getpid());
	for (i = 0; i < 10; i++) {
		struct meter_nl_sel sel = { 0, 0 };
		struct meter_profile *p = NULL;
		int ready[2];
		pid_t pid;
		char c;

		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		if (!pid) {
			struct meter_nl *cnl = ku_open();
			struct meter_page *pg = ku_page();

			ku_register(cnl, pg, 100000);
			ku_funcs(cnl, 2);
			/* registered: from now on a kill must leave a session */
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			for (;;) {
				ku_enter(pg, 1);
				ku_enter(pg, 2);
				ku_burn(1000000);
				ku_leave(pg);
				ku_leave(pg);
			}
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("the child did not register");
		close(ready[0]);
		usleep(rand() % 60000);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		sel.pid = pid;
		/* a failed read is a failure, whatever the reason */
		EXPECT_EQ(0, meter_nl_get_profile(nl, &sel, &p, NULL, 0))
			TH_LOG("kill %d: no session to read", i);
		if (p)
			EXPECT_TRUE(p->exited) TH_LOG("kill %d: not finished", i);
		meter_profile_free(p);
	}
	meter_nl_close(nl);
}

/* --burn: the image the exec test's child becomes */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--burn")) {
		ku_burn(300000000);
		return 0;
	}
	return test_harness_run(argc, argv);
}
