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
	meter_nl_add_calls(nl, 0, &cc, 1, NULL, 0);
	if (write(wfd, &burnt, sizeof(burnt)) != sizeof(burnt))
		_exit(2);
	_exit(0);	/* exit's own CPU time goes to no_current */
}

static void test_exit(struct meter_nl *nl)
{
	struct meter_profile *p;
	uint64_t burnt = 0;
	int fds[2], st;
	pid_t pid;

	if (pipe(fds))
		exit(1);
	pid = fork();
	if (!pid)
		exit_child(fds[1]);
	if (read(fds[0], &burnt, sizeof(burnt)) != sizeof(burnt))
		burnt = 0;
	waitpid(pid, &st, 0);
	p = ku_profile(nl, 0, pid);
	ku_diag("exited child: %llu samples of f1 for %.3f CPU-s (%.0f/s)",
		(unsigned long long)ku_self(p, 1), burnt / 1e9,
		ku_self(p, 1) * 1e9 / (burnt ? burnt : 1));
	ku_ok(p->exited && p->end_ns >= p->start_ns && p->nthreads == 1 &&
	      p->threads[0].exited,
	      "after waitpid the session is finished and its thread exited");
	ku_ok(ku_abs(ku_self(p, 1) * 1e9 / burnt - 1e9 / PERIOD) <=
	      0.05 * 1e9 / PERIOD,
	      "after waitpid the session holds the full counts");
	ku_ok(meter_profile_find(p, 1) && meter_profile_find(p, 1)->calls == 7,
	      "call counts flushed before exit are kept");
	meter_profile_free(p);
}

static void test_exec(struct meter_nl *nl, const char *self)
{
	struct meter_profile *p;
	uint64_t before[2];
	int fds[2], st;
	pid_t pid;

	if (pipe(fds))
		exit(1);
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
		before[0] = cookie;
		before[1] = cp->samples;
		if (write(fds[1], before, sizeof(before)) != sizeof(before))
			_exit(2);
		execl(self, self, "--burn", (char *)NULL);
		_exit(3);
	}
	close(fds[1]);
	if (read(fds[0], before, sizeof(before)) != sizeof(before))
		before[0] = before[1] = 0;
	waitpid(pid, &st, 0);
	p = ku_profile(nl, before[0], 0);
	ku_diag("before exec %llu samples, at the end %llu",
		(unsigned long long)before[1], (unsigned long long)p->samples);
	ku_ok(p->exited && p->nthreads == 1 && p->threads[0].exited,
	      "exec ends the registration and the session");
	/* execve itself runs in the old image (15-35 ms under TCG, more
	 * on -rt); the new image burns 300 ms = 1500 samples.
	 */
	ku_ok(p->samples <= before[1] + 500,
	      "the new image is not sampled into the old session");
	meter_profile_free(p);
}

static void test_fork(struct meter_nl *nl, struct meter_page *pg,
		      uint64_t cookie)
{
	struct meter_nl_sel sel = { 0, 0 };
	struct meter_profile *p, *q = NULL;
	uint64_t s0, c0, c1;
	int st, ret;
	pid_t pid;

	p = ku_profile(nl, cookie, 0);
	s0 = ku_self(p, 1);
	meter_profile_free(p);
	c0 = ku_thread_cpu_ns();
	ku_enter(pg, 1);
	pid = fork();
	if (!pid) {
		ku_burn(300000000);	/* with the inherited page's current */
		_exit(0);
	}
	waitpid(pid, &st, 0);
	ku_leave(pg);
	c1 = ku_thread_cpu_ns();
	p = ku_profile(nl, cookie, 0);
	ku_diag("parent f1 samples before %llu after %llu, parent CPU %.3f ms",
		(unsigned long long)s0, (unsigned long long)ku_self(p, 1),
		(c1 - c0) / 1e6);
	/* The parent's own fork and wait are its CPU time; the child's
	 * 300 ms would be 1500 samples.
	 */
	ku_ok(ku_self(p, 1) <= s0 + (c1 - c0) * 6 / 5 / PERIOD + 20,
	      "a forked child's CPU time is not sampled into the parent");
	meter_profile_free(p);
	sel.pid = pid;
	ret = meter_nl_get_profile(nl, &sel, &q, NULL, 0);
	ku_ok(ret == -ENOENT, "a forked child has no session (%d)", ret);
	meter_profile_free(q);
}

static void test_kill9(struct meter_nl *nl)
{
	int i, good = 0, st;

	srand((unsigned int)getpid());
	for (i = 0; i < 10; i++) {
		struct meter_nl_sel sel = { 0, 0 };
		struct meter_profile *p = NULL;
		int ready[2];
		pid_t pid;
		char c;

		if (pipe(ready))
			ku_bail("pipe", -errno, "");
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
		if (read(ready[0], &c, 1) != 1)
			ku_bail("the child did not register", -EIO, "");
		close(ready[0]);
		usleep(rand() % 60000);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		sel.pid = pid;
		/* a failed read is a failure, whatever the reason */
		if (!meter_nl_get_profile(nl, &sel, &p, NULL, 0) && p &&
		    p->exited)
			good++;
		meter_profile_free(p);
	}
	ku_ok(good == 10, "kill -9 at random moments after registration leaves finished sessions (%d/10)",
	      good);
}

int main(int argc, char **argv)
{
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie;

	if (argc > 1 && !strcmp(argv[1], "--burn")) {
		ku_burn(300000000);
		return 0;
	}
	ku_plan(8);
	nl = ku_open();
	test_exit(nl);
	test_exec(nl, "/proc/self/exe");
	pg = ku_page();
	cookie = ku_register(nl, pg, PERIOD);
	ku_funcs(nl, 1);
	test_fork(nl, pg, cookie);
	test_kill9(nl);
	meter_nl_close(nl);
	return ku_exit();
}
