// SPDX-License-Identifier: MIT
/*
 * meter.ko on a shared host: what one user does cannot take another's
 * results, and a reader's rights are checked where the request comes from.
 *   - One user's many short runs evict that user's own finished sessions
 *     (max_user_finished), never another user's.
 */
#include <sys/wait.h>

#include "kmod_util.h"

/* A child process registers and exits: its session is finished. */
static uint64_t finished_session(void)
{
	uint64_t cookie = 0;
	int fds[2], st;
	pid_t pid;

	if (pipe(fds))
		ku_bail("pipe", -errno, NULL);
	pid = fork();
	if (!pid) {
		struct meter_nl *nl = ku_open();

		cookie = ku_register(nl, ku_page(), 10000000);
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

/* Finished sessions of uid, as root lists them. */
static int finished_of(struct meter_nl *nl, uint32_t uid)
{
	struct meter_profile **v = NULL;
	size_t n = 0, i;
	int count = 0;

	if (meter_nl_list(nl, &v, &n, NULL, 0))
		return -1;
	for (i = 0; i < n; i++) {
		count += v[i]->exited && v[i]->uid == uid;
		meter_profile_free(v[i]);
	}
	free(v);
	return count;
}

/* Deletes the finished sessions of uid (the tests after these expect
 * only theirs). */
static void delete_finished_of(struct meter_nl *nl, uint32_t uid)
{
	struct meter_profile **v = NULL;
	size_t n = 0, i;

	if (meter_nl_list(nl, &v, &n, NULL, 0))
		return;
	for (i = 0; i < n; i++) {
		struct meter_nl_sel sel = { .cookie = v[i]->cookie };

		if (v[i]->exited && v[i]->uid == uid)
			meter_nl_delete(nl, &sel, NULL, 0);
		meter_profile_free(v[i]);
	}
	free(v);
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

TEST(one_users_short_runs_evict_only_their_own)
{
	long kept = ku_param_get("max_user_finished");
	struct meter_nl *nl = ku_open();
	uint64_t mine = finished_session();
	pid_t pid;
	int st, i;

	ASSERT_NE(0, mine);
	ASSERT_LT(0, kept);
	/* nobody finishes more sessions than everyone may keep */
	pid = fork();
	if (!pid) {
		ku_become_nobody();
		for (i = 0; i < ku_param_get("max_finished") + 8; i++)
			if (!finished_session())
				_exit(1);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	ASSERT_EQ(0, st);
	EXPECT_TRUE(session_there(nl, mine)) TH_LOG("root's run was evicted");
	EXPECT_EQ(kept, finished_of(nl, 65534));
	delete_finished_of(nl, 65534);
	meter_nl_close(nl);
}

TEST_HARNESS_MAIN
