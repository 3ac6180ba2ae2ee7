// SPDX-License-Identifier: MIT
/*
 * Unprivileged use (uid 65534): a period below the module's floor is
 * refused (EACCES, never silently raised) and the default is accepted,
 * another user's session cannot be read, reset or deleted, the own
 * session can, and the pinned page is charged to RLIMIT_MEMLOCK.  The
 * unprivileged child makes every request once; each test checks one answer.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "kmod_util.h"

static void as_nobody(uint64_t root_cookie, int wfd)
{
	struct meter_nl_sel sel = { .cookie = root_cookie };
	struct meter_nl_reg reg = { 0 };
	struct meter_profile *p = NULL;
	struct meter_page *pg = ku_page();
	struct meter_nl *nl;
	char err[256] = "";
	uint64_t cookie = 0, eff = 0;
	struct rlimit rl = { 0, 0 };
	int r[6];

	ku_become_nobody();
	nl = ku_open();
	reg.page_addr = (uintptr_t)pg;
	reg.period_ns = 10000;
	r[1] = meter_nl_register(nl, &reg, &cookie, &eff, err, sizeof(err));
	if (!strstr(err, "unpriv_period_min_ns"))
		r[1] = 1;
	reg.period_ns = 0;
	r[0] = meter_nl_register(nl, &reg, &cookie, &eff, err, sizeof(err));
	r[2] = meter_nl_get_profile(nl, &sel, &p, err, sizeof(err));
	r[3] = meter_nl_delete(nl, &sel, err, sizeof(err));
	sel.cookie = cookie;
	meter_profile_free(p);
	p = NULL;
	r[4] = meter_nl_get_profile(nl, &sel, &p, err, sizeof(err));
	meter_profile_free(p);
	meter_nl_unregister(nl, NULL, 0);
	/* A second thread-less attempt with no locked memory allowed. */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	r[5] = meter_nl_register(nl, &reg, &cookie, &eff, err, sizeof(err));
	if (write(wfd, r, sizeof(r)) != sizeof(r))
		_exit(3);
	_exit(0);
}

FIXTURE(nobody) {
	int r[6];	/* the child's answers, below */
};

FIXTURE_SETUP(nobody)
{
	struct meter_nl *nl;
	uint64_t cookie;
	int fds[2], st;
	pid_t pid;

	nl = ku_open();
	cookie = ku_register(nl, ku_page(), 0);
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		as_nobody(cookie, fds[1]);
	ASSERT_EQ(sizeof(self->r), read(fds[0], self->r, sizeof(self->r)))
		TH_LOG("the unprivileged child failed");
	waitpid(pid, &st, 0);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(nobody)
{
}

TEST_F(nobody, an_unprivileged_thread_registers_at_the_default_period)
{
	EXPECT_EQ(0, self->r[0]);
}

TEST_F(nobody, a_period_below_the_floor_is_refused_with_its_message)
{
	EXPECT_EQ(-EACCES, self->r[1]);
}

TEST_F(nobody, it_cannot_read_roots_session)
{
	EXPECT_EQ(-EPERM, self->r[2]);
}

TEST_F(nobody, it_cannot_delete_roots_session)
{
	EXPECT_EQ(-EPERM, self->r[3]);
}

TEST_F(nobody, it_reads_its_own_session)
{
	EXPECT_EQ(0, self->r[4]);
}

TEST_F(nobody, with_memlock_limit_0_it_cannot_pin_a_page)
{
	EXPECT_TRUE(self->r[5] == -ENOMEM || self->r[5] == -EPERM)
		TH_LOG("register returned %d", self->r[5]);
}

TEST_HARNESS_MAIN
