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

/* whatever a test did, meter.ko is loaded after it */
static void ensure_loaded(void)
{
	int ret = ku_insmod("");

	if (ret && ret != -EEXIST)
		ku_diag("insmod: %s", strerror(-ret));
}

/* a finished session with 4000 functions: its dump needs many reads */
static uint64_t big_session(void)
{
	struct meter_profile *p;
	struct meter_nl *nl;
	uint64_t cookie;
	int st;
	pid_t pid = fork();

	if (!pid) {
		struct meter_nl_func f[4000];
		static char names[4000][24];
		struct meter_nl *cnl = ku_open();
		int i;

		memset(f, 0, sizeof(f));	/* no file, no line */
		ku_register(cnl, ku_page(), 0);
		for (i = 0; i < 4000; i++) {
			snprintf(names[i], sizeof(names[i]), "function_%d", i);
			f[i].id = i + 1;
			f[i].name = names[i];
		}
		_exit(meter_nl_add_funcs(cnl, f, 4000, NULL, 0) ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	nl = ku_open();
	p = ku_profile(nl, 0, pid);
	cookie = p->cookie;
	meter_profile_free(p);
	meter_nl_close(nl);
	return cookie;
}

/* a PROFILE_GET dump of a big session held open on a raw socket while
 * rmmod is tried, then the session read through nlclient */
FIXTURE(held_dump) {
	int fd;
	int rmmod;	/* its result */
	int nfuncs;	/* or the error of the read after it */
};

FIXTURE_SETUP(held_dump)
{
	struct meter_nl_sel sel;
	struct meter_profile *p = NULL;
	struct meter_nl *nl;
	int ret;

	if (!getenv("METER_MODULE"))
		SKIP(return, "METER_MODULE is not set (run in vm-run)");
	sel = (struct meter_nl_sel){ .cookie = big_session() };
	self->fd = raw_genl_dump_start(sel.cookie);
	ASSERT_LE(0, self->fd);
	usleep(100000);
	self->rmmod = ku_rmmod();
	nl = ku_open();
	ret = meter_nl_get_profile(nl, &sel, &p, NULL, 0);
	self->nfuncs = ret ? ret : (int)p->nfuncs;
	meter_profile_free(p);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(held_dump)
{
	ensure_loaded();
}

TEST_F(held_dump, rmmod_fails_and_the_module_keeps_answering)
{
	if (!getenv("METER_MODULE"))
		return;
	EXPECT_TRUE(self->rmmod == -EAGAIN || self->rmmod == -EBUSY)
		TH_LOG("rmmod: %s", strerror(-self->rmmod));
	EXPECT_EQ(4000, self->nfuncs);
}

TEST_F(held_dump, the_held_dump_then_reads_to_its_end)
{
	if (!getenv("METER_MODULE"))
		return;
	EXPECT_LT(4000, dump_finish(self->fd));
}

/* rmmod with a live 4-thread registered process, the dump finished */
FIXTURE(live_unload) {
	pid_t pid;
	int rmmod;
	long lck_live, lck;	/* its VmLck before, after, kB */
};

FIXTURE_SETUP(live_unload)
{
	if (!getenv("METER_MODULE"))
		SKIP(return, "METER_MODULE is not set (run in vm-run)");
	self->pid = spawn_registered(4);
	ASSERT_LT(0, self->pid);
	self->lck_live = ku_vmlck_kb(self->pid);
	self->rmmod = ku_rmmod();
	usleep(100000);
	self->lck = ku_vmlck_kb(self->pid);
}

FIXTURE_TEARDOWN(live_unload)
{
	int st;

	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, &st, 0);
	}
	ensure_loaded();
}

TEST_F(live_unload, rmmod_succeeds)
{
	if (!getenv("METER_MODULE"))
		return;
	EXPECT_EQ(0, self->rmmod) TH_LOG("%s", strerror(-self->rmmod));
}

TEST_F(live_unload, the_process_lives_on_its_4_pinned_pages_uncharged)
{
	if (!getenv("METER_MODULE"))
		return;
	EXPECT_EQ(16, self->lck_live);
	EXPECT_EQ(0, self->lck);
	EXPECT_EQ(0, kill(self->pid, 0));
}

TEST_F(live_unload, meter_ko_loads_again)
{
	if (!getenv("METER_MODULE"))
		return;
	EXPECT_EQ(0, ku_insmod(""));
}

TEST_F(live_unload, twenty_cycles_each_with_a_live_process_are_clean)
{
	int i, st, ret, ret2;
	long lck_live, lck;
	pid_t pid;

	if (!getenv("METER_MODULE"))
		return;
	ensure_loaded();
	for (i = 0; i < LOOPS; i++) {
		pid = spawn_registered(4);
		lck_live = ku_vmlck_kb(pid);
		ret = ku_rmmod();
		usleep(20000);
		lck = ku_vmlck_kb(pid);
		ret2 = ku_insmod("");
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		EXPECT_EQ(0, ret) TH_LOG("loop %d: rmmod", i);
		EXPECT_EQ(0, ret2) TH_LOG("loop %d: insmod", i);
		EXPECT_EQ(16, lck_live) TH_LOG("loop %d: VmLck while live", i);
		EXPECT_EQ(0, lck) TH_LOG("loop %d: VmLck after rmmod", i);
		EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			TH_LOG("loop %d: the process lived until killed", i);
		if (!_metadata->passed)
			break;
	}
}

TEST_F(live_unload, the_reloaded_module_holds_no_session_and_profiles)
{
	struct meter_session_row *v = NULL;
	struct meter_nl *nl;
	size_t n = 0;
	int st;
	pid_t pid;

	if (!getenv("METER_MODULE"))
		return;
	ASSERT_EQ(0, ku_insmod(""));
	nl = ku_open();
	ASSERT_EQ(0, meter_nl_list(nl, &v, &n, NULL, 0));
	EXPECT_EQ(0, n);
	meter_session_rows_free(v, n);
	meter_nl_close(nl);
	pid = fork();
	if (!pid) {
		struct meter_nl *cnl = ku_open();
		struct meter_page *cpg = ku_page();
		struct meter_profile *p;
		uint64_t cookie = ku_register(cnl, cpg, 0);

		ku_funcs(cnl, 1);
		ku_enter(cpg, 1);
		ku_burn(100000000);
		p = ku_profile(cnl, cookie, 0);
		_exit(ku_self(p, 1) >= 80 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("a new process profiled after the reload");
}

TEST_HARNESS_MAIN
