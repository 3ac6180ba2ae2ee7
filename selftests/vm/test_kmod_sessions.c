// SPDX-License-Identifier: MIT
/*
 * Session bookkeeping: the list shows live and finished sessions, reset
 * zeroes counts, a finished session can be deleted, the oldest finished
 * sessions are evicted beyond max_finished, and a forked child that
 * registers gets its own session linked by PARENT_COOKIE.
 */
#include <sys/wait.h>

#include "kmod_util.h"

#define PARAM "/sys/module/meter/parameters/max_finished"

/* A child that registers, burns a little and exits; returns its pid. */
static pid_t short_session(uint64_t parent)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		struct meter_nl *nl = ku_open();
		struct meter_page *pg = ku_page();
		struct meter_nl_reg reg = { .page_addr = (uintptr_t)pg,
					    .parent_cookie = parent };

		if (meter_nl_register(nl, &reg, NULL, NULL, NULL, 0))
			_exit(1);
		ku_burn(20000000);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return pid;
}

static int write_param(const char *v)
{
	FILE *f = fopen(PARAM, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(v, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int has_pid(struct meter_nl *nl, pid_t pid)
{
	struct meter_nl_sel sel = { 0, pid };
	struct meter_profile *p = NULL;
	int ret = meter_nl_get_profile(nl, &sel, &p, NULL, 0);

	meter_profile_free(p);
	return ret == 0;
}

int main(void)
{
	struct meter_profile **list, *p;
	struct meter_nl_sel sel = { 0, 0 };
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie, before;
	pid_t child, old[4];
	size_t n, i;
	int found_self = 0, found_child = 0, ret;
	char saved[32] = "64";
	FILE *f;

	ku_plan(7);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 0);
	child = short_session(cookie);

	ret = meter_nl_list(nl, &list, &n, NULL, 0);
	for (i = 0; !ret && i < n; i++) {
		if (list[i]->cookie == cookie && !list[i]->exited)
			found_self = 1;
		if (list[i]->pid == child && list[i]->exited &&
		    list[i]->parent_cookie == cookie)
			found_child = 1;
		meter_profile_free(list[i]);
	}
	if (!ret)
		free(list);
	ku_ok(found_self, "the list shows the live session");
	ku_ok(found_child,
	      "the list shows the finished child session with its parent cookie");

	pg->current_id = 0;
	ku_burn(200000000);
	p = ku_profile(nl, cookie, 0);
	before = p->samples;
	meter_profile_free(p);
	sel.cookie = cookie;
	ret = meter_nl_reset(nl, &sel, NULL, 0);
	p = ku_profile(nl, cookie, 0);
	/* What is left was counted while reading it back. */
	ku_ok(ret == 0 && before >= 150 && p->samples < before / 4,
	      "reset zeroes the counts (%llu before, %llu left)",
	      (unsigned long long)before, (unsigned long long)p->samples);
	meter_profile_free(p);

	sel.cookie = 0;
	sel.pid = child;
	ret = meter_nl_delete(nl, &sel, NULL, 0);
	ku_ok(ret == 0 && !has_pid(nl, child),
	      "a finished session can be deleted");
	ku_ok(meter_nl_delete(nl, &sel, NULL, 0) == -ENOENT,
	      "deleting it again: ENOENT");

	f = fopen(PARAM, "r");
	if (f) {
		if (!fgets(saved, sizeof(saved), f))
			snprintf(saved, sizeof(saved), "64");
		fclose(f);
	}
	ret = write_param("2");
	for (i = 0; i < 4; i++)
		old[i] = short_session(0);
	ku_ok(ret == 0 && !has_pid(nl, old[0]) && !has_pid(nl, old[1]) &&
	      has_pid(nl, old[2]) && has_pid(nl, old[3]),
	      "beyond max_finished the oldest finished sessions are evicted");
	write_param(saved);
	ku_ok(has_pid(nl, getpid()), "a live session is never evicted");
	meter_nl_close(nl);
	return ku_exit();
}
