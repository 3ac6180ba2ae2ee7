// SPDX-License-Identifier: MIT
/*
 * Unload.  A PROFILE_GET dump held open by a reader holds a reference on
 * the module: rmmod fails with EAGAIN (EWOULDBLOCK) and the module stays
 * working, and once the dump is read to its end rmmod succeeds even with
 * a live registered process, whose pinned pages are then uncharged and
 * which carries on unprofiled.  Then 20 load/unload cycles, each with a
 * freshly registered 4-thread process live at the unload, and at the end
 * the reloaded module holds no session and works.
 *
 * Loads the module that vm-run loaded ($METER_MODULE).  The dump is held
 * on a raw netlink socket (a test, not product code: nlclient reads every
 * dump to its end).
 */
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kmod_util.h"
#include "raw_genl.h"

#define LOOPS	20

/* Reads the dump to NLMSG_DONE; returns the messages read, -1 on error. */
static int dump_finish(int fd)
{
	static uint8_t buf[65536];
	int msgs = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n <= 0)
			return -1;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				close(fd);
				return msgs;
			}
			if (h->nlmsg_type == NLMSG_ERROR)
				return -1;
			msgs++;
		}
	}
}

/* A child with nthreads registered threads burning CPU until killed. */
static void *burner(void *arg)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();

	ku_register(nl, pg, 100000);
	ku_enter(pg, 1);
	if (arg && write(*(int *)arg, "r", 1) != 1)
		_exit(3);
	for (;;)
		ku_burn(10000000);
	return NULL;
}

static pid_t spawn_registered(int nthreads)
{
	int fds[2], k;
	char c;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		pthread_t th;

		for (k = 1; k < nthreads; k++)
			pthread_create(&th, NULL, burner, &fds[1]);
		burner(&fds[1]);
	}
	close(fds[1]);
	for (k = 0; k < nthreads; k++)
		if (read(fds[0], &c, 1) != 1)
			break;
	close(fds[0]);
	return pid;
}

int main(void)
{
	struct meter_nl *nl;
	struct meter_page *pg;
	struct meter_profile **v = NULL;
	uint64_t cookie;
	int fd, ret, ret2, msgs, i, st, loops_ok = 0;
	long lck, lck_live;
	size_t n = 0;
	pid_t pid;

	ku_plan(8);
	if (!getenv("METER_MODULE")) {
		printf("Bail out! METER_MODULE is not set (run in vm-run)\n");
		return 1;
	}

	/* A session with enough functions that its dump needs many reads. */
	pid = fork();
	if (!pid) {
		struct meter_nl_func f[4000];
		static char names[4000][24];
		struct meter_nl *cnl = ku_open();

		pg = ku_page();
		cookie = ku_register(cnl, pg, 0);
		for (i = 0; i < 4000; i++) {
			snprintf(names[i], sizeof(names[i]), "function_%d", i);
			f[i].id = i + 1;
			f[i].name = names[i];
		}
		_exit(meter_nl_add_funcs(cnl, f, 4000, NULL, 0) ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	nl = ku_open();
	{
		struct meter_profile *p = ku_profile(nl, 0, pid);

		cookie = p->cookie;
		meter_profile_free(p);
	}
	meter_nl_close(nl);

	fd = raw_genl_dump_start(cookie);
	usleep(100000);
	ret = ku_rmmod();
	nl = ku_open();
	{
		struct meter_nl_sel sel = { .cookie = cookie };
		struct meter_profile *p = NULL;

		ret2 = meter_nl_get_profile(nl, &sel, &p, NULL, 0);
		ret2 = ret2 ? ret2 : (int)p->nfuncs;
		meter_profile_free(p);
	}
	ku_ok(fd >= 0 && (ret == -EAGAIN || ret == -EBUSY) && ret2 == 4000,
	      "rmmod while a PROFILE_GET dump is held open fails (%s) and the module keeps answering (%d functions)",
	      strerror(-ret), ret2);
	msgs = dump_finish(fd);
	ku_ok(msgs > 4000, "the held dump then reads to its end (%d messages)",
	      msgs);

	pid = spawn_registered(4);
	lck_live = ku_vmlck_kb(pid);
	meter_nl_close(nl);
	ret = ku_rmmod();
	usleep(100000);
	lck = ku_vmlck_kb(pid);
	ku_ok(ret == 0, "once the dump is done rmmod succeeds with a live 4-thread registered process (%s)",
	      ret ? strerror(-ret) : "ok");
	ku_ok(lck_live == 16 && lck == 0 && kill(pid, 0) == 0,
	      "the process lives on, its 4 pinned pages uncharged (VmLck %ld kB, then %ld kB)",
	      lck_live, lck);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	ret = ku_insmod("");
	ku_ok(ret == 0, "meter.ko loads again (%s)", ret ? strerror(-ret) : "ok");

	for (i = 0; i < LOOPS; i++) {
		pid = spawn_registered(4);
		lck_live = ku_vmlck_kb(pid);
		ret = ku_rmmod();
		usleep(20000);
		lck = ku_vmlck_kb(pid);
		ret2 = ku_insmod("");
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		if (!ret && !ret2 && lck_live == 16 && lck == 0 &&
		    WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			loops_ok++;
		else
			ku_diag("loop %d: rmmod %d, insmod %d, VmLck %ld then %ld kB",
				i, ret, ret2, lck_live, lck);
	}
	ku_ok(loops_ok == LOOPS,
	      "%d unload/load cycles, each with a live 4-thread registered process: all clean (%d)",
	      LOOPS, loops_ok);

	nl = ku_open();
	v = NULL;
	ret = meter_nl_list(nl, &v, &n, NULL, 0);
	ku_ok(ret == 0 && n == 0,
	      "the reloaded module holds no session (%zu)", n);
	for (size_t k = 0; k < n; k++)
		meter_profile_free(v[k]);
	free(v);
	meter_nl_close(nl);
	pid = fork();
	if (!pid) {
		struct meter_nl *cnl = ku_open();
		struct meter_page *cpg = ku_page();
		struct meter_profile *p;

		cookie = ku_register(cnl, cpg, 0);
		ku_funcs(cnl, 1);
		ku_enter(cpg, 1);
		ku_burn(100000000);
		p = ku_profile(cnl, cookie, 0);
		_exit(ku_self(p, 1) >= 80 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ku_ok(WIFEXITED(st) && !WEXITSTATUS(st),
	      "and it profiles a new process");
	return ku_exit();
}
