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

FIXTURE(sessions) {
	struct meter_nl *nl;
	struct meter_page *pg;
	uint64_t cookie;	/* this process's live session */
	pid_t child;		/* a finished session of a child of it */
};

FIXTURE_SETUP(sessions)
{
	self->nl = ku_open();
	self->pg = ku_page();
	self->cookie = ku_register(self->nl, self->pg, 0);
	self->child = short_session(self->cookie);
}

FIXTURE_TEARDOWN(sessions)
{
	meter_nl_close(self->nl);
}

/*
 * The listed session of cookie (when pid is 0) or of pid, a row of its
 * own (free with meter_session_rows_free(s, 1)), or NULL.
 */
static struct meter_session_row *listed(struct meter_nl *nl, uint64_t cookie,
					pid_t pid)
{
	struct meter_session_row *list, *found = NULL;
	size_t n, i;

	if (meter_nl_list(nl, &list, &n, NULL, 0))
		return NULL;
	for (i = 0; i < n; i++) {
		if (pid ? list[i].pid != pid : list[i].cookie != cookie)
			continue;
		found = malloc(sizeof(*found));
		if (found) {
			*found = list[i];
			list[i].command = NULL;	/* found's now */
		}
		break;
	}
	meter_session_rows_free(list, n);
	return found;
}

TEST_F(sessions, the_list_shows_the_live_session)
{
	struct meter_session_row *s = listed(self->nl, self->cookie, 0);

	ASSERT_NE(NULL, s);
	EXPECT_FALSE(s->exited);
	meter_session_rows_free(s, 1);
}

TEST_F(sessions, the_list_shows_a_finished_child_with_its_parent_cookie)
{
	struct meter_session_row *s = listed(self->nl, 0, self->child);

	ASSERT_NE(NULL, s);
	EXPECT_TRUE(s->exited);
	EXPECT_EQ(self->cookie, s->parent_cookie);
	meter_session_rows_free(s, 1);
}

TEST_F(sessions, reset_zeroes_the_counts)
{
	struct meter_nl_sel sel = { .cookie = self->cookie };
	struct meter_profile *p;
	uint64_t before;

	self->pg->current_id = 0;
	ku_burn(200000000);
	p = ku_profile(self->nl, self->cookie, 0);
	before = p->samples;
	meter_profile_free(p);
	ASSERT_LE(150, before);
	ASSERT_EQ(0, meter_nl_reset(self->nl, &sel, NULL, 0));
	p = ku_profile(self->nl, self->cookie, 0);
	/* What is left was counted while reading it back. */
	EXPECT_GT(before / 4, p->samples)
		TH_LOG("%llu before, %llu left", (unsigned long long)before,
		       (unsigned long long)p->samples);
	meter_profile_free(p);
}

TEST_F(sessions, a_finished_session_can_be_deleted_once)
{
	struct meter_nl_sel sel = { .pid = self->child };

	ASSERT_EQ(0, meter_nl_delete(self->nl, &sel, NULL, 0));
	EXPECT_FALSE(has_pid(self->nl, self->child));
	EXPECT_EQ(-ENOENT, meter_nl_delete(self->nl, &sel, NULL, 0))
		TH_LOG("deleting it again");
}

/*
 * Deletes every finished session (root reads them all): eviction takes
 * the oldest of the user who keeps the most, so the order below holds in
 * a store of this user's sessions only, not beside other tests' leftovers.
 */
static void delete_finished(struct meter_nl *nl)
{
	struct meter_session_row *list;
	size_t n, i;

	if (meter_nl_list(nl, &list, &n, NULL, 0))
		return;
	for (i = 0; i < n; i++) {
		struct meter_nl_sel sel = { .cookie = list[i].cookie };

		if (list[i].exited)
			meter_nl_delete(nl, &sel, NULL, 0);
	}
	meter_session_rows_free(list, n);
}

TEST_F(sessions, beyond_max_finished_the_oldest_are_evicted_never_a_live_one)
{
	char saved[32] = "64";
	pid_t old[4];
	FILE *f;
	int i;

	delete_finished(self->nl);
	f = fopen(PARAM, "r");
	ASSERT_NE(NULL, f);
	if (!fgets(saved, sizeof(saved), f))
		snprintf(saved, sizeof(saved), "64");
	fclose(f);
	ASSERT_EQ(0, write_param("2"));
	for (i = 0; i < 4; i++)
		old[i] = short_session(0);
	EXPECT_FALSE(has_pid(self->nl, old[0]));
	EXPECT_FALSE(has_pid(self->nl, old[1]));
	EXPECT_TRUE(has_pid(self->nl, old[2]));
	EXPECT_TRUE(has_pid(self->nl, old[3]));
	EXPECT_TRUE(has_pid(self->nl, getpid())) TH_LOG("the live session");
	write_param(saved);
}

TEST_HARNESS_MAIN
