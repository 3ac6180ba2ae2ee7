// SPDX-License-Identifier: MIT
/*
 * meter.ko on a shared host: what one user does cannot take another's
 * results, and a reader's rights are checked where the request comes from.
 *   - One user's many short runs evict that user's own finished sessions,
 *     never another user's; max_user_finished bounds one user's store.
 *   - Root writing on a socket that nobody opened has nobody's rights
 *     (netlink_capable(): the CVE-2014-0181 class).
 *   - A process that makes itself non-dumpable after registering is no
 *     longer readable by its user.
 *   - A container (new user, pid and net namespaces, its root mapped to
 *     the host's) neither sees nor touches the host's sessions, and sees
 *     its own with its own pids and tids, its threads' live counts matched
 *     (counted once).
 *   - A user namespace's uids together get one user's share of the
 *     per-user caps: a container of two uids, one of which holds
 *     max_user_sessions live sessions, cannot open more with the other.
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "lib_kernel.h"
#include "kmod_util.h"
#include "raw_genl.h"


/* A finished session of uid's: a child takes the uid and registers. */
static uint64_t finished_session_of(uid_t uid)
{
	uint64_t cookie = 0;
	int fds[2], st;
	pid_t pid;

	if (pipe(fds))
		ku_bail("pipe", -errno, NULL);
	pid = fork();
	if (!pid) {
		if (setuid(uid) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(2);
		cookie = ku_register(ku_open(), ku_page(), 10000000);
		if (write(fds[1], &cookie, sizeof(cookie)) != sizeof(cookie))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &cookie, sizeof(cookie)) != sizeof(cookie))
		cookie = 0;
	close(fds[0]);
	waitpid(pid, &st, 0);
	return cookie;
}

/* A child process registers and exits: its session is finished. */
static uint64_t finished_session(void)
{
	return finished_session_of(geteuid());
}

/* Finished sessions of uid, as root lists them. */
static int finished_of(struct meter_nl *nl, uint32_t uid)
{
	struct meter_session_row *v = NULL;
	size_t n = 0, i;
	int count = 0;

	if (meter_nl_list(nl, &v, &n, NULL, 0))
		return -1;
	for (i = 0; i < n; i++)
		count += v[i].exited && v[i].uid == uid;
	meter_session_rows_free(v, n);
	return count;
}

/* Deletes the finished sessions of uid (the tests after these expect
 * only theirs). */
static void delete_finished_of(struct meter_nl *nl, uint32_t uid)
{
	struct meter_session_row *v = NULL;
	size_t n = 0, i;

	if (meter_nl_list(nl, &v, &n, NULL, 0))
		return;
	for (i = 0; i < n; i++) {
		struct meter_nl_sel sel = { .cookie = v[i].cookie };

		if (v[i].exited && v[i].uid == uid)
			meter_nl_delete(nl, &sel, NULL, 0);
	}
	meter_session_rows_free(v, n);
}

/* this test process's own socket, opened once */
static struct meter_nl *knl_or_open(void)
{
	static struct meter_nl *nl;

	if (!nl)
		nl = ku_open();
	return nl;
}

static bool session_there(struct meter_nl *nl, uint64_t cookie)
{
	struct meter_nl_sel sel = { .cookie = cookie };
	struct meter_profile *p = NULL;
	char err[256];

	if (meter_nl_get_profile(nl, &sel, &p, err, sizeof(err)))
		return false;
	meter_profile_free(p);
	return true;
}

/* nobody finishes n sessions, one after the other */
static void nobody_finishes(long n)
{
	pid_t pid = fork();
	int st;
	long i;

	if (!pid) {
		ku_become_nobody();
		for (i = 0; i < n; i++)
			if (!finished_session())
				_exit(1);
		_exit(0);
	}
	waitpid(pid, &st, 0);
}

TEST(one_users_short_runs_evict_only_their_own)
{
	long all = ku_param_get("max_finished");
	struct meter_nl *nl = ku_open();
	uint64_t mine = finished_session();
	int kept;

	ASSERT_NE(0, mine);
	/* nobody finishes more sessions than everyone may keep */
	nobody_finishes(all + 8);
	EXPECT_TRUE(session_there(nl, mine)) TH_LOG("root's run was evicted");
	kept = finished_of(nl, 65534);
	EXPECT_LT(0, kept);
	EXPECT_GT(all, kept) TH_LOG("nobody kept %d of %ld", kept, all);
	delete_finished_of(nl, 65534);
	meter_nl_close(nl);
}

TEST(max_user_finished_bounds_one_users_store)
{
	long was = ku_param_get("max_user_finished");
	struct meter_nl *nl = ku_open();

	ASSERT_EQ(0, ku_param_set("max_user_finished", 4));
	nobody_finishes(8);
	EXPECT_EQ(4, finished_of(nl, 65534));
	ku_param_set("max_user_finished", was);
	delete_finished_of(nl, 65534);
	meter_nl_close(nl);
}


/* SESSION_GET of cookie on a raw socket: 0, or the kernel's -errno. */
static int raw_session_get(int fd, uint64_t cookie)
{
	uint8_t buf[8192];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct nlattr *a = (struct nlattr *)((uint8_t *)g + GENL_HDRLEN);
	int fam = raw_genl_family(fd);
	ssize_t n;

	if (fam < 0)
		return -1000;
	memset(buf, 0, 64);
	a->nla_type = METER_A_COOKIE;
	a->nla_len = NLA_HDRLEN + 8;
	memcpy((uint8_t *)a + NLA_HDRLEN, &cookie, 8);
	nlh->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + 8;
	nlh->nlmsg_type = fam;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g->cmd = METER_CMD_SESSION_GET;
	g->version = METER_GENL_VERSION;
	if (send(fd, buf, nlh->nlmsg_len, 0) < 0)
		return -1001;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < (ssize_t)NLMSG_HDRLEN)
		return -1002;
	if (nlh->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
	return 0;
}

/* fd over the unix socket sk (SCM_RIGHTS) */
static void send_fd(int sk, int fd)
{
	char c = 0, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	sendmsg(sk, &m, 0);
}

static int recv_fd(int sk)
{
	char c, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sk, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

TEST(root_on_a_socket_nobody_opened_has_nobodys_rights)
{
	uint64_t theirs = finished_session_of(1000);
	int sk[2], fd, own, st;
	pid_t pid;

	ASSERT_NE(0, theirs);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sk));
	pid = fork();
	if (!pid) {
		ku_become_nobody();
		fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
		send_fd(sk[1], fd);
		_exit(fd < 0);
	}
	fd = recv_fd(sk[0]);
	waitpid(pid, &st, 0);
	ASSERT_LE(0, fd);
	own = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	ASSERT_LE(0, own);
	/* root on its own socket reads uid 1000's session (CAP_PERFMON) */
	EXPECT_EQ(0, raw_session_get(own, theirs));
	/* on nobody's, it is nobody */
	EXPECT_EQ(-EPERM, raw_session_get(fd, theirs));
	delete_finished_of(knl_or_open(), 1000);
	close(own);
	close(fd);
	close(sk[0]);
	close(sk[1]);
}

TEST(non_dumpable_after_registering_is_unreadable_to_its_user)
{
	uint64_t cookie = 0;
	int fds[2], go[2], st, ret = 0;
	pid_t owner, reader;

	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, pipe(go));
	owner = fork();
	if (!owner) {
		char c;

		if (setuid(1000) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(2);
		cookie = ku_register(ku_open(), ku_page(), 10000000);
		/* a secret is about to be handled */
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		if (write(fds[1], &cookie, sizeof(cookie)) != sizeof(cookie))
			_exit(3);
		if (read(go[0], &c, 1) != 1)
			_exit(4);
		_exit(0);
	}
	ASSERT_EQ(sizeof(cookie), read(fds[0], &cookie, sizeof(cookie)));
	reader = fork();
	if (!reader) {
		struct meter_nl_sel sel = { .cookie = cookie };
		struct meter_profile *p = NULL;

		if (setuid(1000) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(2);
		ret = meter_nl_get_profile(ku_open(), &sel, &p, NULL, 0);
		_exit(ret == -EPERM ? 0 : 10 + (ret ? 1 : 0));
	}
	waitpid(reader, &st, 0);
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("10: the same user read it");
	ASSERT_EQ(1, write(go[1], "x", 1));
	waitpid(owner, &st, 0);
	delete_finished_of(knl_or_open(), 1000);
}

/* What the container's pid 1 found (container_checks). */
struct box {
	int host_listed;	/* the host's session in its list */
	int host_get;		/* SESSION of the host's cookie: -errno */
	int host_delete;	/* DELETE of it: -errno */
	int status;		/* of the workload it ran */
	int pid_ok;		/* the workload's session: its pid as seen */
	int tid_ok;		/* the main thread's tid as seen */
	long long leaf;		/* the workload's leaf calls */
	long long workers;
};

static void container_checks(uint64_t host, struct box *b)
{
	const char *args[] = { "threads", "4", "10000", NULL };
	struct meter_nl_sel sel = { .cookie = host };
	struct meter_session_row *v = NULL;
	struct meter_profile *p = NULL;
	struct meter_nl *nl = ku_open();
	struct backend_run r;
	size_t n = 0, i;

	if (!meter_nl_list(nl, &v, &n, NULL, 0))
		for (i = 0; i < n; i++)
			b->host_listed += v[i].cookie == host;
	meter_session_rows_free(v, n);
	b->host_get = meter_nl_get_profile(nl, &sel, &p, NULL, 0);
	meter_profile_free(p);
	b->host_delete = meter_nl_delete(nl, &sel, NULL, 0);
	kernel_run(&r, "lib_workload_manual", args, "box", NULL);
	b->status = r.status;
	p = r.p;
	if (p) {
		b->pid_ok = p->pid == last_pid;
		b->tid_ok = p->nthreads && p->threads[0].tid == (uint32_t)last_pid;
		b->leaf = calls_of(p, "leaf");
		b->workers = calls_of(p, "worker");
	}
	meter_profile_free(p);
}

/* Whether this kernel has user namespaces (CONFIG_USER_NS). */
static bool user_ns_available(void)
{
	pid_t pid = fork();
	int st;

	if (!pid)
		_exit(unshare(CLONE_NEWUSER) ? 1 : 0);
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st);
}

TEST(container_neither_sees_nor_touches_the_hosts_sessions)
{
	uint64_t host = finished_session();
	int up[2], down[2], res[2], st;
	struct box b;
	char c;
	pid_t child;

	if (!user_ns_available())
		SKIP(return, "no user namespaces in this kernel (CONFIG_USER_NS)");
	ASSERT_NE(0, host);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	ASSERT_EQ(0, pipe(res));
	child = fork();
	if (!child) {
		pid_t init;

		if (unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET))
			_exit(2);
		if (write(up[1], "u", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(3);
		init = fork();	/* pid 1 of the new namespace */
		if (!init) {
			memset(&b, 0, sizeof(b));
			container_checks(host, &b);
			if (write(res[1], &b, sizeof(b)) != sizeof(b))
				_exit(3);
			_exit(0);
		}
		waitpid(init, &st, 0);
		_exit(WEXITSTATUS(st));
	}
	/* the child's ends only: a child that dies is an end of file */
	close(up[1]);
	close(res[1]);
	ASSERT_EQ(1, read(up[0], &c, 1));
	/* its root is the host's root, as in a container without userns
	 * remapping: no capability in the host's namespace */
	ASSERT_EQ(0, ku_map_ids(child, "0 0 1"));
	ASSERT_EQ(1, write(down[1], "d", 1));
	ASSERT_EQ(sizeof(b), read(res[0], &b, sizeof(b)));
	waitpid(child, &st, 0);
	EXPECT_EQ(0, b.host_listed);
	EXPECT_EQ(-ENOENT, b.host_get);
	EXPECT_EQ(-ENOENT, b.host_delete);
	EXPECT_EQ(0, b.status);
	EXPECT_TRUE(b.pid_ok) TH_LOG("the workload's pid as the container sees it");
	EXPECT_TRUE(b.tid_ok) TH_LOG("its main thread's tid as the container sees it");
	EXPECT_EQ(40000, b.leaf) TH_LOG("live counts matched once");
	EXPECT_EQ(4, b.workers);
}

/*
 * In the namespace (its uids 0 and 1 are the host's 200000 and 200001,
 * no capability in the host's namespace): uid 0 holds two live sessions,
 * then uid 1 registers.  Writes the three results to w.
 */
static void namespace_share(int w)
{
	int hold[2], ready[2], ret[3] = { 1, 1, 1 }, i, st;
	pid_t kids[3];
	char c;

	if (pipe(hold) || pipe(ready))
		_exit(2);
	for (i = 0; i < 3; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			struct meter_nl_reg reg = { 0 };
			uint64_t cookie;
			int r;

			close(hold[1]);	/* the holders wait for its end */
			if (i == 2 && setuid(1))
				_exit(3);
			reg.page_addr = (uintptr_t)ku_page();
			r = meter_nl_register(ku_open(), &reg, &cookie, NULL,
					      NULL, 0);
			if (write(ready[1], &r, sizeof(r)) != sizeof(r))
				_exit(3);
			if (i < 2)
				(void)!read(hold[0], &c, 1);
			_exit(0);
		}
		if (read(ready[0], &ret[i], sizeof(ret[i])) != sizeof(ret[i]))
			ret[i] = 1;
	}
	close(hold[1]);
	for (i = 0; i < 3; i++)
		waitpid(kids[i], &st, 0);
	if (write(w, ret, sizeof(ret)) != sizeof(ret))
		_exit(3);
	_exit(0);
}

TEST(a_user_namespaces_uids_share_one_users_caps)
{
	int up[2], down[2], res[2], ret[3], st;
	char c;
	pid_t child;

	if (!user_ns_available())
		SKIP(return, "no user namespaces in this kernel (CONFIG_USER_NS)");
	ASSERT_EQ(0, ku_param_set("max_user_sessions", 2));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	ASSERT_EQ(0, pipe(res));
	child = fork();
	if (!child) {
		if (unshare(CLONE_NEWUSER))
			_exit(2);
		if (write(up[1], "u", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(3);
		namespace_share(res[1]);
	}
	close(up[1]);
	close(res[1]);
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ(0, ku_map_ids(child, "0 200000 2"));
	ASSERT_EQ(1, write(down[1], "d", 1));
	ASSERT_EQ(sizeof(ret), read(res[0], ret, sizeof(ret)));
	waitpid(child, &st, 0);
	ASSERT_EQ(0, ku_param_set("max_user_sessions", 64));
	EXPECT_EQ(0, ret[0]) TH_LOG("uid 0's first session");
	EXPECT_EQ(0, ret[1]) TH_LOG("uid 0's second session");
	EXPECT_EQ(-EUSERS, ret[2]) TH_LOG("uid 1, the namespace's share full");
}

TEST_HARNESS_MAIN
