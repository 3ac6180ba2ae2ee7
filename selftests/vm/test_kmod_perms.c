// SPDX-License-Identifier: MIT
/*
 * Unprivileged use (uid 65534): a period below the module's floor is
 * refused (EACCES, never silently raised) and the default is accepted,
 * another user's session cannot be read, reset or deleted, the own
 * session can, and the pinned page is charged to RLIMIT_MEMLOCK.
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

int main(void)
{
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie;
	int fds[2], r[6], st;
	pid_t pid;

	ku_plan(6);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 0);
	if (pipe(fds))
		return 1;
	pid = fork();
	if (!pid)
		as_nobody(cookie, fds[1]);
	if (read(fds[0], r, sizeof(r)) != sizeof(r)) {
		printf("Bail out! the unprivileged child failed\n");
		return 1;
	}
	waitpid(pid, &st, 0);
	ku_ok(r[0] == 0, "an unprivileged thread registers (%d)", r[0]);
	ku_ok(r[1] == -EACCES,
	      "a 10 us period below the 100 us floor is refused with its message (%d)",
	      r[1]);
	ku_ok(r[2] == -EPERM, "it cannot read root's session (%d)", r[2]);
	ku_ok(r[3] == -EPERM, "it cannot delete root's session (%d)", r[3]);
	ku_ok(r[4] == 0, "it reads its own session (%d)", r[4]);
	ku_ok(r[5] == -ENOMEM || r[5] == -EPERM,
	      "with RLIMIT_MEMLOCK 0 it cannot pin a page (%d)", r[5]);
	meter_nl_close(nl);
	return ku_exit();
}
