// SPDX-License-Identifier: MIT
/*
 * Every cap is an error with an errno and an extended-ack message naming
 * the cap, never a silent truncation: live sessions per unprivileged user
 * (max_user_sessions, EUSERS) and for everyone (max_sessions, ENOSPC),
 * registered threads per unprivileged user (max_user_threads, EMFILE) and
 * for everyone (max_threads, ENOSPC), the highest function id of an
 * unprivileged session (max_user_funcs) and of any session (max_funcs,
 * ENOSPC, for ADD_FUNCS and ADD_CALLS), a session's function memory
 * (max_session_mb, ENOMEM; a request that crosses it applies nothing;
 * names count against it too, ENOSPC), and the pinned page charged to
 * RLIMIT_MEMLOCK (ENOMEM).  Each cap is lowered for its test and put
 * back; the case just under the cap succeeds.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kmod_util.h"

struct res {
	int ret, ret2, ret3;
	char msg[256];
};

/* One registration attempt in a fresh thread of this process. */
struct reg_thread {
	pthread_t th;
	int ret;
	char msg[256];
	int ready[2];		/* the thread tried */
	int hold[2];		/* the thread keeps its registration until EOF */
};

static void *reg_thread_main(void *arg)
{
	struct reg_thread *rt = arg;
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)pg };
	char c;

	rt->ret = meter_nl_register(nl, &reg, NULL, NULL, rt->msg,
				    sizeof(rt->msg));
	if (write(rt->ready[1], "r", 1) != 1)
		return NULL;
	if (read(rt->hold[0], &c, 1) < 0)
		c = 0;
	meter_nl_close(nl);
	return NULL;
}

/* Starts a thread that registers and holds; returns once it tried. */
static void reg_thread_start(struct reg_thread *rt)
{
	char c;

	if (pipe(rt->hold) || pipe(rt->ready))
		ku_bail("pipe", -errno, NULL);
	pthread_create(&rt->th, NULL, reg_thread_main, rt);
	if (read(rt->ready[0], &c, 1) != 1)
		ku_bail("thread", -EIO, NULL);
}

static void reg_thread_stop(struct reg_thread *rt)
{
	close(rt->hold[1]);
	pthread_join(rt->th, NULL);
	close(rt->hold[0]);
	close(rt->ready[0]);
	close(rt->ready[1]);
}

typedef void (*child_fn)(struct res *r);

static struct res in_child(child_fn fn, int nobody)
{
	struct res r = { 0 };
	int fd;
	pid_t pid = ku_child(nobody, &fd);

	if (!pid) {
		fn(&r);
		ku_child_exit(fd, &r, sizeof(r));
	}
	if (ku_child_result(pid, fd, &r, sizeof(r))) {
		r.ret = r.ret2 = -9999;
		snprintf(r.msg, sizeof(r.msg), "child failed");
	}
	return r;
}

static int register_self(struct meter_nl *nl, char *msg, size_t len)
{
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)ku_page() };

	return meter_nl_register(nl, &reg, NULL, NULL, msg, len);
}

/* Registers, then a child process registers: ret2 = parent, ret = child. */
static void two_sessions(struct res *r)
{
	struct meter_nl *nl = ku_open();
	int fds[2], st;
	pid_t pid;

	r->ret2 = register_self(nl, NULL, 0);
	if (pipe(fds))
		_exit(4);
	pid = fork();
	if (!pid) {
		struct meter_nl *nl2 = ku_open();
		struct res c;

		memset(&c, 0, sizeof(c));
		c.ret = register_self(nl2, c.msg, sizeof(c.msg));
		if (write(fds[1], &c, sizeof(c)) != sizeof(c))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	{
		struct res c;

		if (read(fds[0], &c, sizeof(c)) == sizeof(c)) {
			r->ret = c.ret;
			memcpy(r->msg, c.msg, sizeof(r->msg));
		}
	}
	waitpid(pid, &st, 0);
	meter_nl_close(nl);
}

/* Main thread and one more register; a third thread: ret, msg. */
static void three_threads(struct res *r)
{
	struct meter_nl *nl = ku_open();
	struct reg_thread a, b;

	r->ret2 = register_self(nl, NULL, 0);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	reg_thread_start(&a);
	reg_thread_start(&b);
	if (a.ret && !r->ret2)
		r->ret2 = a.ret;
	r->ret = b.ret;
	memcpy(r->msg, b.msg, sizeof(r->msg));
	reg_thread_stop(&b);
	reg_thread_stop(&a);
	meter_nl_close(nl);
}

/* ADD_FUNCS of id lim (ret2) and lim + 1 (ret), then ADD_CALLS lim + 1. */
static uint32_t funcs_lim;
static struct res calls_res;

static void funcs_at_limit(struct res *r)
{
	struct meter_nl *nl = ku_open();
	struct meter_nl_func f = { .id = funcs_lim, .name = "at_limit" };
	struct meter_call_counts cc = { .id = funcs_lim + 1, .calls = 1 };
	struct meter_profile *p = NULL;
	struct meter_nl_sel sel = { .pid = getpid() };

	r->ret2 = register_self(nl, NULL, 0);
	if (!r->ret2)
		r->ret2 = meter_nl_add_funcs(nl, &f, 1, NULL, 0);
	f.id = funcs_lim + 1;
	f.name = "over_limit";
	r->ret = meter_nl_add_funcs(nl, &f, 1, r->msg, sizeof(r->msg));
	calls_res.ret = meter_nl_add_calls(nl, 0, &cc, 1, 0, calls_res.msg,
					   sizeof(calls_res.msg));
	/* Nothing of the refused requests was kept. */
	if (!meter_nl_get_profile(nl, &sel, &p, NULL, 0) && p->nfuncs != 1)
		calls_res.ret2 = -1;
	meter_profile_free(p);
	meter_nl_close(nl);
}

static void funcs_child(struct res *r)
{
	funcs_at_limit(r);
	/* the ADD_CALLS result rides in ret2's place when all else passed */
	if (!r->ret2 && r->ret == -ENOSPC)
		r->ret2 = calls_res.ret2 ? -2 :
			  calls_res.ret == -ENOSPC ? 0 : calls_res.ret;
}

/* ADD_CALLS over ever more chunks of 1024 ids until refused. */
/*
 * Chunk after chunk until the bound; then an ADD_FUNCS that renames id 1
 * and names an id past the bound changes nothing: ret3 = 1 when id 1
 * keeps its name.
 */
static void session_mb(struct res *r)
{
	struct meter_nl *nl = ku_open();
	struct meter_call_counts cc = { .calls = 1 };
	struct meter_nl_func two[2] = { { .id = 1, .name = "renamed" },
					{ .id = 0, .name = "over" } };
	const struct meter_nl_func first = { .id = 1, .name = "first" };
	struct meter_profile *p;
	char msg[256];
	uint32_t c;

	r->ret2 = register_self(nl, NULL, 0);
	if (meter_nl_add_funcs(nl, &first, 1, r->msg, sizeof(r->msg)))
		r->ret2 = -1;
	for (c = 0; c < 1000 && !r->ret; c++) {
		cc.id = c * 1024 + 1;
		r->ret = meter_nl_add_calls(nl, 0, &cc, 1, 0, r->msg,
					    sizeof(r->msg));
	}
	two[1].id = cc.id;
	if (r->ret == -ENOMEM &&
	    meter_nl_add_funcs(nl, two, 2, msg, sizeof(msg)) == -ENOMEM) {
		p = ku_profile(nl, 0, getpid());
		r->ret3 = meter_profile_find(p, 1) &&
			  !strcmp(meter_profile_find(p, 1)->name, "first");
		meter_profile_free(p);
	}
	r->ret2 = r->ret2 ? r->ret2 : (int)c;
	meter_nl_close(nl);
}

/*
 * Names of 2000 bytes, 100 a request, until refused: ret = the refusal,
 * ret2 = the names taken.
 */
static void names_mb(struct res *r)
{
	static struct meter_nl_func f[100];
	static char name[2001];
	struct meter_nl *nl = ku_open();
	uint32_t k, taken = 0;

	memset(name, 'n', sizeof(name) - 1);
	r->ret = register_self(nl, NULL, 0);
	while (!r->ret && taken < 4000) {
		for (k = 0; k < 100; k++) {
			f[k].id = taken + k + 1;
			f[k].name = name;
		}
		r->ret = meter_nl_add_funcs(nl, f, 100, r->msg,
					    sizeof(r->msg));
		taken += r->ret ? 0 : 100;
	}
	r->ret2 = (int)taken;
	meter_nl_close(nl);
}

/* With RLIMIT_MEMLOCK one page: the main thread pins it, a thread not. */
static void memlock(struct res *r)
{
	struct rlimit rl = { 4096, 4096 };
	struct meter_nl *nl = ku_open();
	struct reg_thread a;

	setrlimit(RLIMIT_MEMLOCK, &rl);
	r->ret2 = register_self(nl, NULL, 0);
	memset(&a, 0, sizeof(a));
	reg_thread_start(&a);
	r->ret = a.ret;
	memcpy(r->msg, a.msg, sizeof(r->msg));
	reg_thread_stop(&a);
	meter_nl_close(nl);
}

static int live_sessions(struct meter_nl *nl)
{
	struct meter_session_row *v = NULL;
	size_t n = 0, i;
	int live = 0;

	if (meter_nl_list(nl, &v, &n, NULL, 0))
		return -1;
	for (i = 0; i < n; i++)
		live += !v[i].exited;
	meter_session_rows_free(v, n);
	return live;
}

/* this process registered; one cap lowered, put back by the teardown */
FIXTURE(cap) {
	struct meter_nl *nl;
	const char *param;
	long old;
};

FIXTURE_SETUP(cap)
{
	self->nl = ku_open();
	ku_register(self->nl, ku_page(), 0);
	self->param = NULL;
}

FIXTURE_TEARDOWN(cap)
{
	if (self->param)
		ku_param_set(self->param, self->old);
	meter_nl_close(self->nl);
}

static void lower(FIXTURE_DATA(cap) *self, const char *param, long v)
{
	self->param = param;
	self->old = ku_param_get(param);
	ku_param_set(param, v);
}

#define EXPECT_CAP(want, r, text) do {						EXPECT_EQ(0, (r).ret2) TH_LOG("the case under the cap");		EXPECT_EQ(want, (r).ret);						EXPECT_NE(NULL, strstr((r).msg, text)) TH_LOG("message: %s", (r).msg); } while (0)

TEST_F(cap, max_user_sessions_nobodys_second_live_session_is_eusers)
{
	struct res r;

	lower(self, "max_user_sessions", 1);
	r = in_child(two_sessions, 1);
	EXPECT_CAP(-EUSERS, r, "max_user_sessions");
}

TEST_F(cap, max_sessions_one_over_the_global_cap_is_enospc_even_for_root)
{
	struct res r;

	lower(self, "max_sessions", live_sessions(self->nl) + 1);
	r = in_child(two_sessions, 0);
	EXPECT_CAP(-ENOSPC, r, "max_sessions");
}

TEST_F(cap, max_user_threads_nobodys_third_thread_is_emfile)
{
	struct res r;

	lower(self, "max_user_threads", 2);
	r = in_child(three_threads, 1);
	EXPECT_CAP(-EMFILE, r, "max_user_threads");
}

TEST_F(cap, max_threads_a_registration_over_the_global_cap_is_enospc)
{
	struct res r;

	/* earlier registrations released (workqueue); this process holds
	 * one registration: let two more in */
	sleep(1);
	lower(self, "max_threads", 3);
	r = in_child(three_threads, 0);
	EXPECT_CAP(-ENOSPC, r, "max_threads");
}

/* ids 100 taken, 101 refused for ADD_FUNCS and ADD_CALLS, nothing kept */
TEST_F(cap, max_user_funcs_binds_nobodys_session_with_enospc)
{
	struct res r;

	lower(self, "max_user_funcs", 100);
	funcs_lim = 100;
	r = in_child(funcs_child, 1);
	EXPECT_CAP(-ENOSPC, r, "max_user_funcs");
}

TEST_F(cap, max_user_funcs_does_not_bind_roots_session)
{
	struct res r;

	lower(self, "max_user_funcs", 100);
	funcs_lim = 1000;
	r = in_child(funcs_child, 0);
	EXPECT_EQ(0, r.ret2);
	EXPECT_EQ(0, r.ret) TH_LOG("%s", r.msg);
}

TEST_F(cap, max_funcs_binds_roots_session_too)
{
	struct res r;

	lower(self, "max_funcs", 50);
	funcs_lim = 50;
	r = in_child(funcs_child, 0);
	EXPECT_CAP(-ENOSPC, r, "max_funcs");
}

TEST_F(cap, max_session_mb_the_function_table_stops_growing_with_enomem)
{
	struct res r;

	lower(self, "max_session_mb", 3);
	r = in_child(session_mb, 0);
	EXPECT_EQ(-ENOMEM, r.ret);
	EXPECT_NE(NULL, strstr(r.msg, "memory bound")) TH_LOG("%s", r.msg);
	EXPECT_LT(1, r.ret2) TH_LOG("chunks before the bound");
}

TEST_F(cap, max_session_mb_a_request_crossing_it_is_refused_whole)
{
	lower(self, "max_session_mb", 3);
	EXPECT_EQ(1, in_child(session_mb, 0).ret3)
		TH_LOG("id 1 lost its name to a refused ADD_FUNCS");
}

TEST_F(cap, max_session_mb_binds_the_names_with_enospc)
{
	struct res r;

	lower(self, "max_session_mb", 3);
	r = in_child(names_mb, 0);
	EXPECT_EQ(-ENOSPC, r.ret) TH_LOG("%s", r.msg);
	EXPECT_NE(NULL, strstr(r.msg, "memory bound")) TH_LOG("%s", r.msg);
	/* 3 MiB of names at 2001 bytes each, less the session's tables */
	EXPECT_GE(1572, r.ret2);
	EXPECT_LT(1000, r.ret2);
}

TEST_F(cap, memlock_of_one_page_the_second_registration_is_enomem)
{
	struct res r;

	r = in_child(memlock, 1);
	EXPECT_CAP(-ENOMEM, r, "RLIMIT_MEMLOCK");
}

TEST_HARNESS_MAIN
