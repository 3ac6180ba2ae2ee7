// SPDX-License-Identifier: MIT
/*
 * Who may do what (Documentation/security.md), one behaviour per test:
 * readers of another uid are refused (also for a dead session and in the
 * SESSION_GET dump), root reads anyone's, reset and delete by another uid
 * are refused, a non-dumpable process's session is refused to a reader
 * of the same uid (while a dumpable one's is not), disabling unprivileged
 * registration refuses it with its message, and the unprivileged period
 * floor is an error with its message (REGISTER and SET_PERIOD), not a
 * silent raise.
 */
#include <sys/wait.h>

#include "kmod_util.h"

/* What a child reports back through a pipe. */
struct res {
	int ret;
	int ret2;
	uint64_t cookie;
	uint64_t period;
	char msg[256];
	char msg2[256];
};

typedef void (*child_fn)(struct res *r, void *arg);

/* Runs fn in a child (as nobody if asked); returns its report. */
static struct res in_child(child_fn fn, void *arg, int nobody)
{
	struct res r = { 0 };
	int fd;
	pid_t pid = ku_child(nobody, &fd);

	if (!pid) {
		fn(&r, arg);
		ku_child_exit(fd, &r, sizeof(r));
	}
	if (ku_child_result(pid, fd, &r, sizeof(r))) {
		r.ret = -9999;
		snprintf(r.msg, sizeof(r.msg), "child failed");
	}
	return r;
}

/*
 * 20 ms of CPU time, then more until the session holds a sample (at most
 * 5 s): under TCG on a loaded host QEMU's timer interrupt can come later
 * than a whole 20 ms of the thread's time.  A process that may not read
 * its own session (non-dumpable) burns the 20 ms only.
 */
static void burn_until_sampled(struct meter_nl *nl, uint64_t cookie)
{
	struct meter_nl_sel sel = { .cookie = cookie };
	struct meter_profile *p;
	uint64_t samples = 0;
	int i;

	ku_burn(20000000);
	for (i = 0; i < 500; i++) {
		p = NULL;
		if (meter_nl_get_profile(nl, &sel, &p, NULL, 0))
			return;
		samples = p->samples;
		meter_profile_free(p);
		if (samples)
			return;
		ku_burn(10000000);
	}
}

static void child_session(struct res *r, void *arg)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)pg };

	if (arg)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	r->ret = meter_nl_register(nl, &reg, &r->cookie, &r->period, r->msg,
				   sizeof(r->msg));
	if (!r->ret) {
		ku_funcs(nl, 1);
		ku_enter(pg, 1);
		burn_until_sampled(nl, r->cookie);
		ku_leave(pg);
	}
	meter_nl_close(nl);
}

static void child_read(struct res *r, void *arg)
{
	struct meter_nl_sel sel = { .cookie = *(uint64_t *)arg };
	struct meter_profile *p = NULL;
	struct meter_nl *nl = ku_open();

	r->ret = meter_nl_get_profile(nl, &sel, &p, r->msg, sizeof(r->msg));
	meter_profile_free(p);
	meter_nl_close(nl);
}

static void child_reset(struct res *r, void *arg)
{
	struct meter_nl_sel sel = { .cookie = *(uint64_t *)arg };
	struct meter_nl *nl = ku_open();

	r->ret = meter_nl_reset(nl, &sel, r->msg, sizeof(r->msg));
	meter_nl_close(nl);
}

static void child_delete(struct res *r, void *arg)
{
	struct meter_nl_sel sel = { .cookie = *(uint64_t *)arg };
	struct meter_nl *nl = ku_open();

	r->ret = meter_nl_delete(nl, &sel, r->msg, sizeof(r->msg));
	meter_nl_close(nl);
}

/* Counts the listed sessions with cookie *arg (0 or 1) in r->ret. */
static void child_list(struct res *r, void *arg)
{
	struct meter_session_row *v = NULL;
	struct meter_nl *nl = ku_open();
	size_t n = 0, i;

	r->ret2 = meter_nl_list(nl, &v, &n, r->msg, sizeof(r->msg));
	for (i = 0; i < n; i++)
		r->ret += v[i].cookie == *(uint64_t *)arg;
	meter_session_rows_free(v, n);
	meter_nl_close(nl);
}

static void child_register_period(struct res *r, void *arg)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)pg,
				    .period_ns = *(uint64_t *)arg };

	r->ret = meter_nl_register(nl, &reg, &r->cookie, &r->period, r->msg,
				   sizeof(r->msg));
	if (!r->ret)
		meter_nl_unregister(nl, NULL, 0);
	meter_nl_close(nl);
}

/* Registers with the default period, then asks SET_PERIOD *arg. */
static void child_set_period(struct res *r, void *arg)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)pg };
	struct meter_profile *p = NULL;
	struct meter_nl_sel sel;

	r->ret2 = meter_nl_register(nl, &reg, &r->cookie, NULL, r->msg2,
				    sizeof(r->msg2));
	r->ret = meter_nl_set_period(nl, *(uint64_t *)arg, r->msg,
				     sizeof(r->msg));
	sel.cookie = r->cookie;
	if (!meter_nl_get_profile(nl, &sel, &p, NULL, 0))
		r->period = p->period_ns;
	meter_profile_free(p);
	meter_nl_close(nl);
}

/* root, registered: its live session is the one others try */
FIXTURE(perms) {
	struct meter_nl *nl;
	uint64_t root_cookie;
};

FIXTURE_SETUP(perms)
{
	self->nl = ku_open();
	self->root_cookie = ku_register(self->nl, ku_page(), 0);
}

FIXTURE_TEARDOWN(perms)
{
	meter_nl_close(self->nl);
}

/* root reads cookie: 0 or the error, with the samples in *samples */
static int root_reads(FIXTURE_DATA(perms) *self, uint64_t cookie,
		      uint64_t *samples)
{
	struct meter_nl_sel sel = { .cookie = cookie };
	struct meter_profile *p = NULL;
	char err[256] = "";
	int ret = meter_nl_get_profile(self->nl, &sel, &p, err, sizeof(err));

	*samples = ret ? 0 : p->samples;
	meter_profile_free(p);
	return ret;
}

#define EXPECT_REFUSED(want, r, text) do {					EXPECT_EQ(want, (r).ret);						EXPECT_NE(NULL, strstr((r).msg, text)) TH_LOG("message: %s", (r).msg); } while (0)

TEST_F(perms, nobody_cannot_read_roots_live_session)
{
	struct res r = in_child(child_read, &self->root_cookie, 1);

	EXPECT_REFUSED(-EPERM, r, "another user");
}

TEST_F(perms, nobody_cannot_reset_roots_session)
{
	struct res r = in_child(child_reset, &self->root_cookie, 1);

	EXPECT_REFUSED(-EPERM, r, "");
	EXPECT_NE(0, r.msg[0]) TH_LOG("no message");
}

/* root's finished session, tried by nobody */
TEST_F(perms, roots_finished_session_stays_closed_to_nobody)
{
	struct res a = in_child(child_session, NULL, 0), r;

	ASSERT_EQ(0, a.ret) TH_LOG("%s", a.msg);
	r = in_child(child_read, &a.cookie, 1);
	EXPECT_REFUSED(-EPERM, r, "another user");
}

TEST_F(perms, nobody_cannot_delete_roots_finished_session)
{
	struct res a = in_child(child_session, NULL, 0), r;

	ASSERT_EQ(0, a.ret) TH_LOG("%s", a.msg);
	r = in_child(child_delete, &a.cookie, 1);
	EXPECT_EQ(-EPERM, r.ret);
	EXPECT_NE(0, r.msg[0]) TH_LOG("no message");
}

TEST_F(perms, nobodys_session_get_dump_does_not_list_roots_session)
{
	struct res a = in_child(child_session, NULL, 0), r;

	ASSERT_EQ(0, a.ret) TH_LOG("%s", a.msg);
	r = in_child(child_list, &a.cookie, 1);
	EXPECT_EQ(0, r.ret2) TH_LOG("%s", r.msg);
	EXPECT_EQ(0, r.ret);
}

TEST_F(perms, root_reads_nobodys_session)
{
	struct res a = in_child(child_session, NULL, 1);
	uint64_t samples;

	ASSERT_EQ(0, a.ret) TH_LOG("%s", a.msg);
	EXPECT_EQ(0, root_reads(self, a.cookie, &samples));
	EXPECT_LT(0, samples);
}

TEST_F(perms, another_nobody_process_reads_a_dumpable_nobody_session)
{
	struct res a = in_child(child_session, NULL, 1), r;

	ASSERT_EQ(0, a.ret) TH_LOG("%s", a.msg);
	r = in_child(child_read, &a.cookie, 1);
	EXPECT_EQ(0, r.ret) TH_LOG("%s", r.msg);
}

TEST_F(perms, a_non_dumpable_processs_session_is_closed_to_its_own_uid)
{
	struct res b = in_child(child_session, (void *)1, 1), r;

	ASSERT_EQ(0, b.ret) TH_LOG("%s", b.msg);
	r = in_child(child_read, &b.cookie, 1);
	EXPECT_EQ(-EPERM, r.ret) TH_LOG("%s", r.msg);
	r = in_child(child_list, &b.cookie, 1);
	EXPECT_EQ(0, r.ret2) TH_LOG("%s", r.msg);
	EXPECT_EQ(0, r.ret) TH_LOG("listed by the SESSION_GET dump");
}

TEST_F(perms, root_reads_the_non_dumpable_session)
{
	struct res b = in_child(child_session, (void *)1, 1);
	uint64_t samples;

	ASSERT_EQ(0, b.ret) TH_LOG("%s", b.msg);
	EXPECT_EQ(0, root_reads(self, b.cookie, &samples));
}

/* allow_unprivileged=0 for the test's length */
static void with_unpriv(long allow, long *saved)
{
	*saved = ku_param_get("allow_unprivileged");
	ku_param_set("allow_unprivileged", allow);
}

TEST_F(perms, allow_unprivileged_0_refuses_nobodys_registration)
{
	uint64_t period = 0;
	struct res r;
	long saved;

	with_unpriv(0, &saved);
	r = in_child(child_register_period, &period, 1);
	ku_param_set("allow_unprivileged", saved);
	EXPECT_REFUSED(-EPERM, r, "unprivileged registration is disabled");
}

TEST_F(perms, allow_unprivileged_0_still_lets_root_register)
{
	uint64_t period = 0;
	struct res r;
	long saved;

	with_unpriv(0, &saved);
	r = in_child(child_register_period, &period, 0);
	ku_param_set("allow_unprivileged", saved);
	EXPECT_EQ(0, r.ret) TH_LOG("%s", r.msg);
}

TEST_F(perms, nobodys_register_below_the_floor_is_refused_with_its_message)
{
	uint64_t period = ku_param_get("unpriv_period_min_ns") / 2;
	struct res r = in_child(child_register_period, &period, 1);

	EXPECT_REFUSED(-EACCES, r, "unpriv_period_min_ns");
}

TEST_F(perms, nobodys_set_period_below_the_floor_is_refused_period_kept)
{
	uint64_t period = ku_param_get("unpriv_period_min_ns") / 2;
	struct res r = in_child(child_set_period, &period, 1);

	ASSERT_EQ(0, r.ret2) TH_LOG("%s", r.msg2);
	EXPECT_REFUSED(-EACCES, r, "unpriv_period_min_ns");
	EXPECT_EQ(METER_PERIOD_DEFAULT_NS, r.period);
}

TEST_F(perms, root_registers_at_the_10_us_privileged_floor)
{
	uint64_t period = METER_PERIOD_MIN_NS;
	struct res r = in_child(child_register_period, &period, 0);

	EXPECT_EQ(0, r.ret) TH_LOG("%s", r.msg);
	EXPECT_EQ(METER_PERIOD_MIN_NS, r.period);
}

TEST_HARNESS_MAIN
