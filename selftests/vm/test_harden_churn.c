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

static double now_s(void)
{
	return ku_mono_ns() / 1e9;
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

static void test_kill9(struct meter_nl *nl)
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
	ku_ok(found >= waited && waited >= KILL_RUNS * 3 / 4 && bad == 0,
	      "kill -9 at random points of a 4-thread registered process (%d runs): every session finished with no live thread",
	      KILL_RUNS);
}

/* --- 3. fork storms --- */

static void test_fork_storm(struct meter_nl *nl, uint64_t cookie,
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
	ku_ok(ok == total,
	      "fork storm: %d registered children (and grandchildren) of a registered process: %d sessions finished and linked to the parent",
	      total, ok);
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

static void test_exec(struct meter_nl *nl)
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
	ku_ok(ok == EXEC_RUNS,
	      "exec from a registered second thread (%d runs): the old image's session finished, the new image profiled in a new one (%d)",
	      EXEC_RUNS, ok);
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
		struct meter_profile *p = NULL, **v = NULL;
		struct meter_nl_sel sel = { 0 };
		size_t cnt = 0, i;

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
		for (i = 0; i < cnt; i++)
			meter_profile_free(v[i]);
		free(v);
		r->reads++;
	}
	meter_nl_close(nl);
	return NULL;
}

static void test_readers(void)
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
	ku_ok(clean == EXIT_PROCS && rd[0].reads && rd[1].reads &&
	      !rd[0].unexpected && !rd[1].unexpected,
	      "two readers dump sessions while %d registered processes exit: only complete answers or ENOENT",
	      EXIT_PROCS);
}

int main(int argc, char **argv)
{
	struct meter_profile **v = NULL;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie;
	size_t n = 0, i;
	int live = 0, other_threads = 0;

	if (argc > 1 && !strcmp(argv[1], "--exec-child"))
		return exec_child_main();
	self_path = "/proc/self/exe";
	ku_plan(6);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 1000000);
	ku_funcs(nl, 2);

	{
		double t1 = now_s(), t2, t3, t4, t5;

		test_kill9(nl);
		t2 = now_s();
		test_fork_storm(nl, cookie, pg);
		t3 = now_s();
		test_exec(nl);
		t4 = now_s();
		test_readers();
		t5 = now_s();
		ku_diag("seconds: kill -9 %.1f, fork storm %.1f, exec %.1f, readers %.1f",
			t2 - t1, t3 - t2, t4 - t3, t5 - t4);
	}

	/* releases run on the module's workqueue */
	for (i = 0; i < 100 && ku_vmlck_kb(getpid()) != 4; i++)
		usleep(100000);
	if (meter_nl_list(nl, &v, &n, NULL, 0))
		ku_bail("list", -EIO, NULL);
	for (i = 0; i < n; i++) {
		if (!v[i]->exited && v[i]->cookie != cookie)
			live++;
		meter_profile_free(v[i]);
	}
	free(v);
	{
		struct meter_profile *p = ku_profile(nl, cookie, 0);

		for (i = 0; i < p->nthreads; i++)
			other_threads += !p->threads[i].exited;
		meter_profile_free(p);
	}
	ku_ok(live == 0 && other_threads == 1 && ku_vmlck_kb(getpid()) == 4,
	      "afterwards no other session is live, this one has only its main thread, VmLck is its one page (%d, %d)",
	      live, other_threads);
	meter_nl_close(nl);
	{
		const char *ko = getenv("METER_MODULE");
		int rm, ins = -ENOENT, fd;
		long lck;

		rm = syscall(SYS_delete_module, "meter", O_NONBLOCK) ? -errno : 0;
		usleep(100000);
		lck = ku_vmlck_kb(getpid());
		fd = ko ? open(ko, O_RDONLY | O_CLOEXEC) : -1;
		if (fd >= 0) {
			ins = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
			close(fd);
		}
		n = 1;
		if (!ins) {
			nl = ku_open();
			if (!meter_nl_list(nl, &v, &n, NULL, 0)) {
				for (i = 0; i < n; i++)
					meter_profile_free(v[i]);
				free(v);
			}
			meter_nl_close(nl);
		}
		ku_ok(!rm && lck == 0 && !ins && n == 0,
		      "then rmmod succeeds with this thread registered (%d), VmLck goes to %ld kB, insmod (%d) gives an empty module (%zu sessions)",
		      rm, lck, ins, n);
	}
	return ku_exit();
}
