// SPDX-License-Identifier: MIT
/*
 * Freeing a session does not wait for an RCU grace period while it holds
 * meter_mutex (and genl's): the free is queued as rcu_work.  A DEL of a
 * finished session, timed beside membarrier(MEMBARRIER_CMD_GLOBAL), which
 * is one synchronize_rcu(), in interleaved rounds: were the grace period
 * waited for inside DEL, no DEL could be quicker than a grace period.
 */
#include <linux/membarrier.h>
#include <sys/wait.h>

#include "kmod_util.h"

#define ROUNDS	4
#define EACH	8

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

int main(void)
{
	struct meter_nl *nl;
	uint64_t gp = 0, del = 0, t, cookies[EACH];
	int r, i, dels = 0, bad = 0;
	char msg[256];

	ku_plan(1);
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0)) {
		printf("# membarrier(MEMBARRIER_CMD_GLOBAL): %s\n",
		       strerror(errno));
		return 4;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		/* membarrier skips the grace period on one CPU */
		printf("# one CPU online: no grace period to compare with\n");
		return 4;
	}
	nl = ku_open();
	for (r = 0; r < ROUNDS; r++) {
		t = now_ns();
		for (i = 0; i < EACH; i++)
			syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		gp += now_ns() - t;
		for (i = 0; i < EACH; i++)
			cookies[i] = finished_session();
		for (i = 0; i < EACH; i++) {
			struct meter_nl_sel sel = { .cookie = cookies[i] };

			t = now_ns();
			bad += !!meter_nl_delete(nl, &sel, msg, sizeof(msg));
			del += now_ns() - t;
			dels++;
		}
	}
	ku_ok(!bad && del < gp / 2,
	      "%d DELs of finished sessions took %.0f us each, a grace period (membarrier GLOBAL) %.0f us: DEL does not wait for one (%d failed)",
	      dels, del / 1e3 / dels, gp / 1e3 / (ROUNDS * EACH), bad);
	meter_nl_close(nl);
	return ku_exit();
}
