// SPDX-License-Identifier: MIT
/*
 * Freeing a session does not wait for an RCU grace period while it holds
 * meter_mutex (and genl's): the free is queued as rcu_work.  A DEL of a
 * finished session, timed beside membarrier(MEMBARRIER_CMD_GLOBAL), which
 * is one synchronize_rcu(), in interleaved rounds: were the grace period
 * waited for inside DEL, no DEL could be quicker than a grace period; the
 * median DEL is under half of one.  Where a request itself (a LIST, timed
 * beside) takes over a quarter of a grace period, as on the debug kernel,
 * the two cannot be told apart and the test is skipped.
 */
#include <linux/membarrier.h>
#include <sys/wait.h>

#include "kmod_util.h"

#define ROUNDS	4
#define EACH	8

/* A child registers, ticks a little and exits: a finished session. */
static uint64_t finished_session(void)
{
	int pf[2];
	uint64_t cookie = 0;
	pid_t pid;

	if (pipe(pf))
		ku_bail("pipe", -errno, NULL);
	pid = fork();
	if (!pid) {
		struct meter_nl *nl = ku_open();

		cookie = ku_register(nl, ku_page(), 1000000);
		ku_burn(2000000);
		if (write(pf[1], &cookie, sizeof(cookie)) != sizeof(cookie))
			_exit(3);
		_exit(0);
	}
	if (pid < 0 || read(pf[0], &cookie, sizeof(cookie)) != sizeof(cookie))
		ku_bail("child", -EIO, NULL);
	waitpid(pid, NULL, 0);
	close(pf[0]);
	close(pf[1]);
	return cookie;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A LIST: returns once meter_mutex is free. */
static void settle(struct meter_nl *nl)
{
	struct meter_session_row *l = NULL;
	char err[256];
	size_t n = 0;

	if (meter_nl_list(nl, &l, &n, err, sizeof(err)))
		ku_bail("list", -EIO, err);
	meter_session_rows_free(l, n);
}

TEST(del_of_a_finished_session_does_not_wait_for_a_grace_period)
{
	struct meter_nl *nl;
	uint64_t gp = 0, del[ROUNDS * EACH], list[ROUNDS * EACH], t;
	uint64_t cookies[EACH];
	int r, i, dels = 0, bad = 0;
	char msg[256];

	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		SKIP(return, "membarrier(MEMBARRIER_CMD_GLOBAL): %s",
		     strerror(errno));
	/* membarrier skips the grace period on one CPU */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU online: no grace period to compare with");
	nl = ku_open();
	for (r = 0; r < ROUNDS; r++) {
		t = ku_mono_ns();
		for (i = 0; i < EACH; i++)
			syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		gp += ku_mono_ns() - t;
		for (i = 0; i < EACH; i++)
			cookies[i] = finished_session();
		/*
		 * The exits' deferred work (releasing counters, unpinning)
		 * takes meter_mutex too: let it finish, so that DEL is timed
		 * alone.
		 */
		usleep(300000);
		settle(nl);
		for (i = 0; i < EACH; i++) {
			struct meter_nl_sel sel = { .cookie = cookies[i] };

			t = ku_mono_ns();
			bad += !!meter_nl_delete(nl, &sel, msg, sizeof(msg));
			del[dels] = ku_mono_ns() - t;
			/* the control: a request under meter_mutex too */
			t = ku_mono_ns();
			settle(nl);
			list[dels++] = ku_mono_ns() - t;
		}
	}
	meter_nl_close(nl);
	qsort(del, dels, sizeof(del[0]), cmp_u64);
	qsort(list, dels, sizeof(list[0]), cmp_u64);
	TH_LOG("LIST took %.0f us (median; %.0f to %.0f)", list[dels / 2] / 1e3,
	       list[0] / 1e3, list[dels - 1] / 1e3);
	/* the debug kernel: LIST 31 ms, a grace period 12 ms */
	if (list[dels / 2] * 4 > gp / (ROUNDS * EACH))
		SKIP(return, "a request here takes over a quarter of a grace period, nothing to tell apart");
	TH_LOG("%d DELs took %.0f us (median; %.0f to %.0f), a grace period (membarrier GLOBAL) %.0f us",
	       dels, del[dels / 2] / 1e3, del[0] / 1e3, del[dels - 1] / 1e3,
	       gp / 1e3 / (ROUNDS * EACH));
	EXPECT_EQ(0, bad) TH_LOG("DELs that failed");
	/* with a grace period inside, every DEL, the fastest too, is longer */
	EXPECT_GT(gp / (ROUNDS * EACH) / 2, del[dels / 2]);
}

TEST_HARNESS_MAIN
