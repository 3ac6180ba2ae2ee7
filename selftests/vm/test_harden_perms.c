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
	struct res r;
	int fds[2], st;
	pid_t pid;

	memset(&r, 0, sizeof(r));
	if (pipe(fds))
		ku_bail("pipe", -errno, NULL);
	pid = fork();
	if (!pid) {
		close(fds[0]);
		alarm(60);
		if (nobody)
			ku_become_nobody();
		fn(&r, arg);
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &r, sizeof(r)) != sizeof(r)) {
		r.ret = -9999;
		snprintf(r.msg, sizeof(r.msg), "child failed");
	}
	close(fds[0]);
	waitpid(pid, &st, 0);
	return r;
}

/* Registers, burns a little as function 1, exits: a finished session. */
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
		ku_burn(20000000);
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
	struct meter_profile **v = NULL;
	struct meter_nl *nl = ku_open();
	size_t n = 0, i;

	r->ret2 = meter_nl_list(nl, &v, &n, r->msg, sizeof(r->msg));
	for (i = 0; i < n; i++) {
		r->ret += v[i]->cookie == *(uint64_t *)arg;
		meter_profile_free(v[i]);
	}
	free(v);
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

int main(void)
{
	struct meter_page *pg;
	struct meter_nl *nl;
	struct meter_profile *p = NULL;
	struct meter_nl_sel sel = { 0 };
	struct res r, a, b;
	uint64_t root_cookie, dead_root, period;
	char err[256] = "";
	long floor, allow;
	int ret;

	ku_plan(15);
	nl = ku_open();
	pg = ku_page();
	root_cookie = ku_register(nl, pg, 0);

	r = in_child(child_read, &root_cookie, 1);
	ku_ok(r.ret == -EPERM && strstr(r.msg, "another user"),
	      "nobody cannot read root's live session: %s", r.msg);

	r = in_child(child_reset, &root_cookie, 1);
	ku_ok(r.ret == -EPERM && r.msg[0],
	      "nobody cannot reset root's session: %s", r.msg);

	a = in_child(child_session, NULL, 0);	/* root, now finished */
	dead_root = a.cookie;
	r = in_child(child_read, &dead_root, 1);
	ku_ok(a.ret == 0 && r.ret == -EPERM,
	      "root's finished session stays closed to nobody (%d): %s",
	      r.ret, r.msg);
	r = in_child(child_delete, &dead_root, 1);
	ku_ok(r.ret == -EPERM && r.msg[0],
	      "nobody cannot delete root's finished session: %s", r.msg);
	r = in_child(child_list, &dead_root, 1);
	ku_ok(r.ret2 == 0 && r.ret == 0,
	      "nobody's SESSION_GET dump does not list root's session");

	a = in_child(child_session, NULL, 1);	/* nobody, dumpable */
	sel.cookie = a.cookie;
	ret = meter_nl_get_profile(nl, &sel, &p, err, sizeof(err));
	ku_ok(a.ret == 0 && ret == 0 && p && p->samples > 0,
	      "root reads nobody's session (%d, %llu samples)", ret,
	      p ? (unsigned long long)p->samples : 0ULL);
	meter_profile_free(p);
	p = NULL;
	r = in_child(child_read, &a.cookie, 1);
	ku_ok(r.ret == 0,
	      "another nobody process reads a dumpable nobody session (%d)",
	      r.ret);

	b = in_child(child_session, (void *)1, 1);	/* nobody, non-dumpable */
	r = in_child(child_read, &b.cookie, 1);
	ku_ok(b.ret == 0 && r.ret == -EPERM,
	      "a non-dumpable process's session is closed to its own uid (%d): %s",
	      r.ret, r.msg);
	r = in_child(child_list, &b.cookie, 1);
	ku_ok(r.ret2 == 0 && r.ret == 0,
	      "nor listed to it by the SESSION_GET dump");
	sel.cookie = b.cookie;
	ret = meter_nl_get_profile(nl, &sel, &p, err, sizeof(err));
	ku_ok(ret == 0, "root reads the non-dumpable session (%d)", ret);
	meter_profile_free(p);
	p = NULL;

	allow = ku_param_get("allow_unprivileged");
	ku_param_set("allow_unprivileged", 0);
	period = 0;
	r = in_child(child_register_period, &period, 1);
	ku_ok(r.ret == -EPERM && strstr(r.msg, "unprivileged registration is disabled"),
	      "allow_unprivileged=0 refuses nobody's registration: %s", r.msg);
	r = in_child(child_register_period, &period, 0);
	ku_ok(r.ret == 0, "allow_unprivileged=0 still lets root register (%d)",
	      r.ret);
	ku_param_set("allow_unprivileged", allow);

	floor = ku_param_get("unpriv_period_min_ns");
	period = floor / 2;
	r = in_child(child_register_period, &period, 1);
	ku_ok(r.ret == -EACCES && strstr(r.msg, "unpriv_period_min_ns"),
	      "nobody's REGISTER below the %ld ns floor is refused: %s", floor,
	      r.msg);
	r = in_child(child_set_period, &period, 1);
	ku_ok(r.ret2 == 0 && r.ret == -EACCES &&
	      strstr(r.msg, "unpriv_period_min_ns") &&
	      r.period == METER_PERIOD_DEFAULT_NS,
	      "nobody's SET_PERIOD below the floor is refused, period kept (%llu ns): %s",
	      (unsigned long long)r.period, r.msg);
	period = METER_PERIOD_MIN_NS;
	r = in_child(child_register_period, &period, 0);
	ku_ok(r.ret == 0 && r.period == METER_PERIOD_MIN_NS,
	      "root registers at the 10 us privileged floor (%llu ns)",
	      (unsigned long long)r.period);

	meter_nl_close(nl);
	return ku_exit();
}
