// SPDX-License-Identifier: MIT
/*
 * A process exit anywhere on the system costs the module one hash bucket,
 * not a walk of every session.  Counted exactly, in kernel instructions
 * (the VM's instruction counter, selftests/icount/: run by
 * selftests/host/test_vm_icount; skipped elsewhere): the exit and reap of
 * an unregistered child beside 2000 other processes, unregistered, then
 * each holding a live session.  A walk of
 * the sessions would cost a few instructions per session.
 */
#include <sys/wait.h>

#include "icount/icount.h"
#include "kmod_util.h"

#define SESSIONS	2000
#define REPS		24

/*
 * The fewest kernel instructions, over REPS children, from a child's last
 * user instruction to its parent's return from waitpid(): the exit, the
 * probe, the reap.  The child waits first, so that the parent is asleep
 * in waitpid() when the count starts.
 */
static uint64_t exit_insns(int fd)
{
	uint64_t best = UINT64_MAX;
	struct icount c;
	int i;

	for (i = 0; i < REPS; i++) {
		pid_t pid = fork();

		if (!pid) {
			usleep(20000);
			ICOUNT_BEGIN();
			syscall(SYS_exit_group, 0);
		}
		waitpid(pid, NULL, 0);
		ICOUNT_END();
		if (pid < 0 || icount_read(fd, &c))
			ku_bail("fork or icount_read", -EIO, NULL);
		if (c.kernel < best)
			best = c.kernel;
	}
	return best;
}

/* A process that registers on SIGUSR1, telling ready, until SIGTERM. */
static pid_t holder(int ready)
{
	pid_t pid = fork();
	struct meter_nl *nl;
	struct meter_page *pg;
	sigset_t set;
	int sig;

	if (pid)
		return pid;
	nl = ku_open();
	pg = ku_page();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	for (;;) {
		if (write(ready, "", 1) != 1)
			_exit(3);
		sig = sigwaitinfo(&set, NULL);
		if (sig == SIGUSR1)
			ku_register(nl, pg, 100000000);
		else if (sig == SIGTERM)
			_exit(0);
	}
}

/* Sends sig to every holder and waits until each has acted on it. */
static void tell(const pid_t *pids, int n, int ready, int sig)
{
	char c;
	int i;

	for (i = 0; i < n; i++)
		kill(pids[i], sig);
	for (i = 0; i < n; i++)
		if (read(ready, &c, 1) != 1)
			ku_bail("holder", -EIO, NULL);
}

/*
 * Past the default max_sessions, and with small stack tables: 2000 of the
 * default's would not fit.  The teardown loads the defaults back.
 */
FIXTURE(sessions) {
	int fd;		/* the instruction counter */
	bool reloaded;
};

FIXTURE_SETUP(sessions)
{
	self->fd = icount_open();
	self->reloaded = false;
	if (self->fd < 0)
		SKIP(return, "no instruction counter (run by test_vm_icount)");
	ASSERT_EQ(0, ku_rmmod());
	self->reloaded = true;
	ASSERT_EQ(0, ku_insmod("stack_entries=64 stack_frames=1024 max_sessions=0"));
}

FIXTURE_TEARDOWN(sessions)
{
	if (self->reloaded) {
		EXPECT_EQ(0, ku_rmmod());
		EXPECT_EQ(0, ku_insmod("")) TH_LOG("meter.ko reloads with its defaults");
	}
}

TEST_F(sessions, an_exit_costs_under_two_instructions_per_live_session)
{
	static pid_t pids[SESSIONS];
	uint64_t idle, many;
	int ready[2], i;
	sigset_t set;
	char c;

	if (self->fd < 0)
		return;	/* skipped in the set-up */
	ASSERT_EQ(0, pipe(ready));
	/* blocked before fork, so that no signal comes before sigwaitinfo */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < SESSIONS; i++) {
		pids[i] = holder(ready[1]);
		ASSERT_LE(0, pids[i]);
		ASSERT_EQ(1, read(ready[0], &c, 1));
	}

	/* the same processes throughout: only their sessions change */
	idle = exit_insns(self->fd);
	tell(pids, SESSIONS, ready[0], SIGUSR1);
	many = exit_insns(self->fd);
	for (i = 0; i < SESSIONS; i++) {
		kill(pids[i], SIGTERM);
		waitpid(pids[i], NULL, 0);
	}
	TH_LOG("kernel instructions from a child's exit to its reap, with %d other processes: %" PRIu64
	       " unregistered, %" PRIu64 " each holding a live session (%+" PRId64 ")",
	       SESSIONS, idle, many, (int64_t)(many - idle));
	/* min of 24 varies by +-1600; a walk adds 6 a session */
	EXPECT_GT(idle + 2 * SESSIONS, many);
}

TEST_HARNESS_MAIN
