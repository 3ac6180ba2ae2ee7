// SPDX-License-Identifier: MIT
/*
 * Process churn (thread churn is test_harden_threads).  A multi-threaded
 * registered process is killed with SIGKILL at random points, many times; registered processes fork storms of
 * registered children; registered threads exec; two readers dump
 * sessions while their processes exit.  Afterwards every session but
 * this process's is finished with no live thread, every thread's sample
 * count adds up, and the pinned pages are uncharged (VmLck); rmmod then
 * succeeds with this process still registered, its page is uncharged,
 * and the module loads again ($METER_MODULE) holding no session.  vm-run
 * fails the run on any kernel WARN, BUG or Oops.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kmod_util.h"

#define KILL_RUNS	60
#define FORK_WAVES	3
#define FORK_PER_WAVE	20
#define EXEC_RUNS	10
#define EXIT_PROCS	40

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t rndn(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* --- 2. kill -9 at random points --- */

static void *busy_thread(void *arg)
{
	struct meter_page *pg = ku_page();
	struct meter_nl *nl = ku_open();

	(void)arg;
	for (;;) {
		ku_register(nl, pg, 100000);
		ku_funcs(nl, 4);
		ku_enter(pg, 1 + rndn(4));
		ku_burn(1000000 + rndn(3000000));
		ku_leave(pg);
		meter_nl_unregister(nl, NULL, 0);
	}
	return NULL;
}

/* whether every session was finished with no live thread */
static int churn_kill9(struct meter_nl *nl)
{
	int run, found = 0, bad = 0, waited = 0, st;

	for (run = 0; run < KILL_RUNS; run++) {
		struct meter_profile *p = NULL;
		struct meter_nl_sel sel;
		int fds[2], early = run % 5 == 4;
		char c;
		pid_t pid;

		if (pipe(fds))
			ku_bail("pipe", -errno, NULL);
		pid = fork();
		if (!pid) {
			struct meter_nl *cnl = ku_open();
			pthread_t th;
			int k;

			alarm(30);
			rng ^= (uint64_t)getpid() << 32;
			ku_register(cnl, ku_page(), 100000);
			if (write(fds[1], "r", 1) != 1)
				_exit(3);
			for (k = 0; k < 3; k++)
				pthread_create(&th, NULL, busy_thread, NULL);
			/* busy_thread registers this thread again each round */
			meter_nl_unregister(cnl, NULL, 0);
			busy_thread(NULL);
		}
		close(fds[1]);
		/* Most runs kill after the first registration, at a random
		 * point of the threads' register/burn/unregister loops; every
		 * fifth at a random point of the start-up.
		 */
		if (!early && read(fds[0], &c, 1) == 1)
			waited++;
		close(fds[0]);
		usleep(rndn(40000));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		sel.cookie = 0;
		sel.pid = pid;
		if (meter_nl_get_profile(nl, &sel, &p, NULL, 0))
			continue;	/* killed before it registered */
		found++;
		{
			size_t i, live = 0;

			for (i = 0; i < p->nthreads; i++)
				live += !p->threads[i].exited;
			if (!p->exited || live)
				bad++;
		}
		meter_nl_delete(nl, &sel, NULL, 0);
		meter_profile_free(p);
	}
	ku_diag("%d kill -9 runs, %d killed after registering, %d sessions found, %d not finished",
		KILL_RUNS, waited, found, bad);
	return found >= waited && waited >= KILL_RUNS * 3 / 4 && bad == 0;
}

/* --- 3. fork storms --- */

/* whether every child's session was finished and linked to the parent */
static int churn_fork_storm(struct meter_nl *nl, uint64_t cookie,
			    struct meter_page *pg)
{
	pid_t kids[FORK_PER_WAVE];
	int w, k, st, ok = 0, total = 0;

	ku_enter(pg, 2);
	for (w = 0; w < FORK_WAVES; w++) {
		for (k = 0; k < FORK_PER_WAVE; k++) {
			kids[k] = fork();
			if (!kids[k]) {
				struct meter_nl *cnl = (alarm(30), ku_open());
				struct meter_nl_reg reg = {
					.page_addr = (uintptr_t)pg,
					.parent_cookie = cookie,
				};
				pid_t g;

				/* the child's copy of the page, its own session */
				if (meter_nl_register(cnl, &reg, NULL, NULL,
						      NULL, 0))
					_exit(1);
				g = fork();	/* and a registered grandchild */
				if (!g) {
					struct meter_nl *gnl = ku_open();

					_exit(meter_nl_register(gnl, &reg, NULL,
								NULL, NULL, 0) ?
					      1 : 0);
				}
				ku_burn(1000000);
				waitpid(g, &st, 0);
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
			}
		}
		for (k = 0; k < FORK_PER_WAVE; k++) {
			struct meter_profile *p = NULL;
			struct meter_nl_sel sel = { .pid = kids[k] };

			waitpid(kids[k], &st, 0);
			total++;
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				continue;
			if (!meter_nl_get_profile(nl, &sel, &p, NULL, 0) &&
			    p->exited && p->parent_cookie == cookie)
				ok++;
			meter_profile_free(p);
			meter_nl_delete(nl, &sel, NULL, 0);
		}
	}
	ku_leave(pg);
	ku_diag("fork storm: %d registered children and grandchildren, %d sessions finished and linked to the parent",
		total, ok);
	return ok == total;
}

/* --- 4. exec from registered threads --- */

static const char *self_path;

static int exec_child_main(void)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();

	ku_register(nl, pg, 100000);
	ku_funcs(nl, 1);
	ku_enter(pg, 1);
	ku_burn(20000000);
	ku_leave(pg);
	return 0;
}

static void *exec_thread(void *arg)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	char *argv[] = { (char *)self_path, "--exec-child", NULL };

	(void)arg;
	ku_register(nl, pg, 100000);
	ku_burn(2000000);
	execv(self_path, argv);
	_exit(7);
}

/* whether every exec finished the old session and profiled the new image */
static int churn_exec(struct meter_nl *nl)
{
	int run, ok = 0, st;

	for (run = 0; run < EXEC_RUNS; run++) {
		struct meter_profile *old = NULL, *neu = NULL;
		struct meter_nl_sel sel = { 0 };
		uint64_t cookie = 0;
		int fds[2];
		pid_t pid;

		if (pipe(fds))
			break;
		pid = fork();
		if (!pid) {
			struct meter_nl *cnl = (alarm(30), ku_open());
			pthread_t th;

			cookie = ku_register(cnl, ku_page(), 100000);
			if (write(fds[1], &cookie, sizeof(cookie)) !=
			    sizeof(cookie))
				_exit(3);
			pthread_create(&th, NULL, exec_thread, NULL);
			ku_burn(1000000000);	/* killed by the exec */
			_exit(8);
		}
		close(fds[1]);
		if (read(fds[0], &cookie, sizeof(cookie)) != sizeof(cookie))
			cookie = 0;
		close(fds[0]);
		waitpid(pid, &st, 0);
		sel.cookie = cookie;
		meter_nl_get_profile(nl, &sel, &old, NULL, 0);
		sel.cookie = 0;
		sel.pid = pid;
		meter_nl_get_profile(nl, &sel, &neu, NULL, 0);
		if (WIFEXITED(st) && !WEXITSTATUS(st) && old && neu &&
		    old->exited && neu->exited && neu->cookie != cookie &&
		    ku_self(neu, 1) > 0 && old->nthreads == 2)
			ok++;
		sel.pid = 0;
		sel.cookie = cookie;
		meter_nl_delete(nl, &sel, NULL, 0);
		if (neu) {
			sel.cookie = neu->cookie;
			meter_nl_delete(nl, &sel, NULL, 0);
		}
		meter_profile_free(old);
		meter_profile_free(neu);
	}
	ku_diag("exec from a registered second thread: %d of %d runs right", ok,
		EXEC_RUNS);
	return ok == EXEC_RUNS;
}

/* --- 5. two readers while processes exit --- */

static volatile int readers_stop;
static pid_t exit_pids[EXIT_PROCS];
static volatile int exit_started;

struct reader {
	pthread_t th;
	struct meter_nl *nl;	/* opened before any fork (libnl locks) */
	unsigned long reads, unexpected;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct meter_nl *nl = r->nl;

	while (!readers_stop) {
		int n = exit_started, ret;
		struct meter_session_row *v = NULL;
		struct meter_profile *p = NULL;
		struct meter_nl_sel sel = { 0 };
		size_t cnt = 0;

		if (n) {
			sel.pid = exit_pids[rndn(n)];
			ret = meter_nl_get_profile(nl, &sel, &p, NULL, 0);
			if (ret && ret != -ENOENT)
				r->unexpected++;
			meter_profile_free(p);
			r->reads++;
		}
		ret = meter_nl_list(nl, &v, &cnt, NULL, 0);
		if (ret)
			r->unexpected++;
		meter_session_rows_free(v, cnt);
		r->reads++;
	}
	meter_nl_close(nl);
	return NULL;
}

/* whether the readers got only complete answers or ENOENT */
static int churn_readers(void)
{
	struct reader rd[2];
	int i, st, clean = 0;

	memset(rd, 0, sizeof(rd));
	for (i = 0; i < 2; i++)
		rd[i].nl = ku_open();
	for (i = 0; i < 2; i++)
		pthread_create(&rd[i].th, NULL, reader_main, &rd[i]);
	for (i = 0; i < EXIT_PROCS; i++) {
		pid_t pid = fork();

		if (!pid) {
			struct meter_nl *nl;
			struct meter_page *pg;

			alarm(30);	/* never hang the run */
			nl = ku_open();
			pg = ku_page();
			ku_register(nl, pg, 100000);
			ku_funcs(nl, 2);
			ku_enter(pg, 1);
			ku_burn(3000000);
			_exit(0);
		}
		exit_pids[i] = pid;
		exit_started = i + 1;
		if (i >= 4) {
			waitpid(exit_pids[i - 4], &st, 0);
			clean += WIFEXITED(st) && !WEXITSTATUS(st);
		}
	}
	for (i = EXIT_PROCS - 4; i < EXIT_PROCS; i++) {
		waitpid(exit_pids[i], &st, 0);
		clean += WIFEXITED(st) && !WEXITSTATUS(st);
	}
	readers_stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(rd[i].th, NULL);
	ku_diag("two readers: %lu and %lu reads, %lu and %lu unexpected errors",
		rd[0].reads, rd[1].reads, rd[0].unexpected, rd[1].unexpected);
	return clean == EXIT_PROCS && rd[0].reads && rd[1].reads &&
	       !rd[0].unexpected && !rd[1].unexpected;
}

/* this process registered, f1 and f2 named */
FIXTURE(churn) {
	struct meter_nl *nl;
	struct meter_page *pg;
	uint64_t cookie;
};

FIXTURE_SETUP(churn)
{
	self->nl = ku_open();
	self->pg = ku_page();
	self->cookie = ku_register(self->nl, self->pg, 1000000);
	ku_funcs(self->nl, 2);
}

FIXTURE_TEARDOWN(churn)
{
	meter_nl_close(self->nl);
}

/*
 * After a churn: no other session is live, this one has only its main
 * thread, VmLck is its one page.
 */
static void expect_aftermath(struct __test_metadata *_metadata,
			     FIXTURE_DATA(churn) *self)
{
	struct meter_session_row *v = NULL;
	struct meter_profile *p;
	int live = 0, threads = 0;
	size_t n = 0, i;

	/* releases run on the module's workqueue */
	for (i = 0; i < 100 && ku_vmlck_kb(getpid()) != 4; i++)
		usleep(100000);
	ASSERT_EQ(0, meter_nl_list(self->nl, &v, &n, NULL, 0));
	for (i = 0; i < n; i++)
		if (!v[i].exited && v[i].cookie != self->cookie)
			live++;
	meter_session_rows_free(v, n);
	p = ku_profile(self->nl, self->cookie, 0);
	for (i = 0; i < p->nthreads; i++)
		threads += !p->threads[i].exited;
	meter_profile_free(p);
	EXPECT_EQ(0, live) TH_LOG("other sessions still live");
	EXPECT_EQ(1, threads) TH_LOG("live threads of this session");
	EXPECT_EQ(4, ku_vmlck_kb(getpid())) TH_LOG("VmLck, kB");
}

TEST_F_TIMEOUT(churn, kill_9_at_random_points_leaves_every_session_finished, 900)
{
	EXPECT_TRUE(churn_kill9(self->nl));
	expect_aftermath(_metadata, self);
}

TEST_F_TIMEOUT(churn, fork_storm_sessions_finished_and_linked_to_the_parent, 900)
{
	EXPECT_TRUE(churn_fork_storm(self->nl, self->cookie, self->pg));
	expect_aftermath(_metadata, self);
}

TEST_F_TIMEOUT(churn, exec_from_a_registered_thread_ends_its_session, 900)
{
	EXPECT_TRUE(churn_exec(self->nl));
	expect_aftermath(_metadata, self);
}

TEST_F_TIMEOUT(churn, readers_during_exits_get_whole_answers_or_enoent, 900)
{
	EXPECT_TRUE(churn_readers());
	expect_aftermath(_metadata, self);
}

/* then rmmod with this thread registered, and insmod: an empty module */
TEST_F(churn, rmmod_with_this_thread_registered_then_insmod_is_empty)
{
	struct meter_session_row *v = NULL;
	size_t n = 1;
	int rm, ins;

	if (!getenv("METER_MODULE"))
		SKIP(return, "METER_MODULE is not set (run in vm-run)");
	rm = ku_rmmod();
	usleep(100000);
	EXPECT_EQ(0, rm);
	EXPECT_EQ(0, ku_vmlck_kb(getpid())) TH_LOG("VmLck after rmmod, kB");
	ins = ku_insmod("");
	ASSERT_EQ(0, ins);
	meter_nl_close(self->nl);
	self->nl = ku_open();
	ASSERT_EQ(0, meter_nl_list(self->nl, &v, &n, NULL, 0));
	meter_session_rows_free(v, n);
	EXPECT_EQ(0, n);
}

/* --exec-child: the image the exec test's threads become */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exec-child"))
		return exec_child_main();
	self_path = "/proc/self/exe";
	return test_harness_run(argc, argv);
}
