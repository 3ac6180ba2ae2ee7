// SPDX-License-Identifier: MIT
/*
 * One user's wall-clock threads cannot take another's CPU: meter.ko holds
 * an unprivileged user's wall-clock threads together to user_wall_ticks
 * ticks a second (kmod/budget.c).
 *   - 1024 sleeping threads of nobody's, each asking for a tick every
 *     100 us (10 million a second together), all on CPU 0, leave a victim
 *     pinned there within a few percent of its speed without them
 *     (interleaved rounds, one run).
 *   - The profile still holds the whole of their time: samples come to
 *     threads x seconds / period, and STRETCHED_TICKS says ticks were
 *     delayed.
 * The budget is lowered to 1000 for the test: a tick under TCG costs
 * about 30 times what it does on hardware.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "lib_kernel.h"
#include "kmod_util.h"
#include "nlreg.h"

#define ATTACKERS 1024
#define PERIOD_NS 100000ULL
#ifndef BUDGET
#define BUDGET 1000
#endif

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int ready_fd, stop_fd;

/* A wall-clock registration, then asleep until the stop pipe closes. */
static void *attacker(void *arg)
{
	struct meter_nl_reg reg = {
		.period_ns = PERIOD_NS,
		.clock = METER_CLOCK_WALL,
	};
	uint64_t cookie = 0, eff = 0;
	struct meter_nl *nl = ku_open();
	char c = 1, err[256] = "";

	(void)arg;
	reg.page_addr = (uintptr_t)ku_page();
	if (meter_nl_register(nl, &reg, &cookie, &eff, err, sizeof(err)))
		c = 0;
	/* the registration is the thread's, not the socket's */
	meter_nl_close(nl);
	if (write(ready_fd, &c, 1) != 1)
		return NULL;
	while (read(stop_fd, &c, 1) > 0)
		;
	return NULL;
}

/* nobody's process of ATTACKERS sleeping threads; returns its pid. */
static pid_t start_attackers(int *stop_w)
{
	int ready[2], stop[2], i, ok = 0;
	pthread_attr_t attr;
	pthread_t th;
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(stop))
		ku_bail("pipe", -errno, NULL);
	pid = fork();
	if (!pid) {
		close(ready[0]);
		close(stop[1]);
		ready_fd = ready[1];
		stop_fd = stop[0];
		pin_cpu0();
		/* a socket a thread while they register, and the pipes */
		setrlimit(RLIMIT_NOFILE, &(struct rlimit){ 4096, 4096 });
		ku_become_nobody();
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		for (i = 0; i < ATTACKERS; i++)
			if (pthread_create(&th, &attr, attacker, NULL))
				_exit(3);
		pause();
		_exit(0);
	}
	close(ready[1]);
	close(stop[0]);
	for (i = 0; i < ATTACKERS && read(ready[0], &c, 1) == 1; i++)
		ok += c;
	close(ready[0]);
	*stop_w = stop[1];
	return ok == ATTACKERS ? pid : -pid;
}

/* Wall-clock time of a fixed amount of work on CPU 0. */
static uint64_t victim_ns(void)
{
	volatile uint64_t x = 0;
	uint64_t start = ku_mono_ns();
	long i;

	for (i = 0; i < 60000000; i++)
		x += (uint64_t)i * 7;
	return ku_mono_ns() - start;
}

/* The attackers gone: their process and its threads reaped. */
static void stop_attackers(pid_t pid, int stop_w)
{
	int st;

	close(stop_w);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

TEST(sleeping_wall_threads_of_one_user_leave_a_pinned_victim_its_speed)
{
	uint64_t alone = 0, beside = 0, t_reg, t0, secs_ns = 0, all_ns = 0;
	struct meter_profile *p = NULL;
	struct meter_nl *nl = ku_open();
	int stop_w, r;
	pid_t pid;

	/* The default, 10000, is 1-2 % of a CPU where a tick costs what it
	 * does on hardware (about 1 us); under TCG a tick costs about 28 us
	 * of the guest's time (10000 a second took 28 % of CPU 0), so the
	 * test holds the user to 1000, the same share of the VM's CPU. */
	ASSERT_EQ(ku_param_get("user_wall_ticks"), 10000);
	ASSERT_EQ(ku_param_set("user_wall_ticks", BUDGET), 0);
	pin_cpu0();
	/* Interleaved, alone first and last: 3 rounds alone, 2 beside. */
	alone += victim_ns();
	for (r = 0; r < 2; r++) {
		t_reg = ku_mono_ns();
		pid = start_attackers(&stop_w);
		ASSERT_GT(pid, 0) TH_LOG("not every attacker thread registered");
		t0 = ku_mono_ns();
		beside += victim_ns();
		if (!p) {
			secs_ns = ku_mono_ns() - t0;
			all_ns = ku_mono_ns() - t_reg;
			p = ku_profile(nl, 0, pid);
		}
		stop_attackers(pid, stop_w);
		alone += victim_ns();
	}
	alone = alone * 2 / 3;
	ku_diag("victim alone %.3f s, beside %d sleeping wall-clock threads at %llu us %.3f s (two rounds each): %.3f of its speed",
		alone / 1e9, ATTACKERS, PERIOD_NS / 1000, beside / 1e9,
		(double)alone / (double)beside);
	ku_diag("attackers' session: %llu samples in %.2f s since all registered (%llu periods of %d threads; %.2f s since the first), %llu ticks, %llu stretched",
		(unsigned long long)p->samples, secs_ns / 1e9,
		(unsigned long long)(secs_ns / PERIOD_NS * ATTACKERS),
		ATTACKERS, all_ns / 1e9, (unsigned long long)p->ticks,
		(unsigned long long)p->stretched_ticks);
	fflush(stdout);
	EXPECT_GE((double)alone / (double)beside, 0.9);
	EXPECT_GT(p->stretched_ticks, 0);
	/* Time stays whole: the threads' seconds, in periods, but for the
	 * ticks still due when the profile was read (one stretched period
	 * each at most). */
	EXPECT_GE(p->samples, secs_ns / PERIOD_NS * ATTACKERS / 2);
	EXPECT_LE(p->ticks, 2 * (ATTACKERS + BUDGET * all_ns / 1000000000));
	meter_profile_free(p);
	ASSERT_EQ(ku_param_set("user_wall_ticks", 10000), 0);
	meter_nl_close(nl);
}

TEST_HARNESS_MAIN
