// SPDX-License-Identifier: MIT
/*
 * One user's wall-clock threads cannot take another's CPU: meter.ko holds
 * an unprivileged user's wall-clock threads together to user_wall_ticks
 * ticks a second (kmod/budget.c).
 *   - 1024 sleeping threads of nobody's, each asking for a tick every
 *     100 us (10 million a second together), all on CPU 0, take at most
 *     the budget's ticks, and leave a victim pinned there its speed
 *     (six interleaved rounds, one run).
 *   - The profile still holds the whole of their time: samples come to
 *     threads x seconds / period, and STRETCHED_TICKS says ticks were
 *     delayed.
 * The budget is lowered to 1000 for the test: a tick under TCG costs
 * about 30 times what it does on hardware.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "lib_kernel.h"
#include "kmod_util.h"
#include "nlreg.h"

#define ATTACKERS 1024
#define PERIOD_NS 100000ULL
#define ROUNDS 6
#ifndef BUDGET
#define BUDGET 1000
#endif

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
		ku_pin_cpu(0);
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

	/* about 0.6 s under TCG: host hiccups of a tenth of a second moved
	 * a 0.2 s victim by up to 2.6 times on a slow host */
	for (i = 0; i < 180000000; i++)
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

TEST(sleeping_wall_threads_of_one_user_leave_a_pinned_victim_its_speed)
{
	uint64_t alone[ROUNDS + 1], beside[ROUNDS];
	uint64_t t_reg, t0, secs_ns = 0, all_ns = 0;
	struct meter_profile *p = NULL;
	struct meter_nl *nl = ku_open();
	double ratio[ROUNDS];
	int stop_w, r;
	pid_t pid;

	/* The default, 10000, is 1-2 % of a CPU where a tick costs what it
	 * does on hardware (about 1 us); under TCG a tick costs about 28 us
	 * of the guest's time (10000 a second took 28 % of CPU 0), so the
	 * test holds the user to 1000, the same share of the VM's CPU. */
	ASSERT_EQ(ku_param_get("user_wall_ticks"), 10000);
	ASSERT_EQ(ku_param_set("user_wall_ticks", BUDGET), 0);
	ku_pin_cpu(0);
	/* Interleaved, alone before and after each round beside them. */
	alone[0] = victim_ns();
	for (r = 0; r < ROUNDS; r++) {
		t_reg = ku_mono_ns();
		pid = start_attackers(&stop_w);
		ASSERT_GT(pid, 0) TH_LOG("not every attacker thread registered");
		t0 = ku_mono_ns();
		beside[r] = victim_ns();
		if (!p) {
			secs_ns = ku_mono_ns() - t0;
			all_ns = ku_mono_ns() - t_reg;
			p = ku_profile(nl, 0, pid);
		}
		stop_attackers(pid, stop_w);
		alone[r + 1] = victim_ns();
		ratio[r] = (alone[r] + alone[r + 1]) / 2.0 / (double)beside[r];
		ku_diag("round %d: victim alone %.3f s, beside %d sleeping wall-clock threads at %llu us %.3f s: %.3f of its speed",
			r + 1, alone[r] / 1e9, ATTACKERS, PERIOD_NS / 1000,
			beside[r] / 1e9, ratio[r]);
	}
	qsort(ratio, ROUNDS, sizeof(ratio[0]), cmp_double);
	ku_diag("median %.3f of its speed",
		(ratio[ROUNDS / 2 - 1] + ratio[ROUNDS / 2]) / 2);
	ku_diag("attackers' session: %llu samples in %.2f s since all registered (%llu periods of %d threads; %.2f s since the first), %llu ticks, %llu stretched",
		(unsigned long long)p->samples, secs_ns / 1e9,
		(unsigned long long)(secs_ns / PERIOD_NS * ATTACKERS),
		ATTACKERS, all_ns / 1e9, (unsigned long long)p->ticks,
		(unsigned long long)p->stretched_ticks);
	fflush(stdout);
	/* The exact check: the user's ticks within the budget (and the
	 * first, unstretched tick of each thread). */
	EXPECT_LE(p->ticks, 2 * (ATTACKERS + BUDGET * all_ns / 1000000000));
	EXPECT_GT(p->stretched_ticks, 0);
	/* Time stays whole: the threads' seconds, in periods, but for the
	 * ticks still due when the profile was read (one stretched period
	 * each at most). */
	EXPECT_GE(p->samples, secs_ns / PERIOD_NS * ATTACKERS / 2);
	/* The victim, by wall-clock time under TCG: rounds differ with
	 * nothing changed (the host's load; 0.49 to 1.29 of a 0.2 s victim
	 * in one run on a slow host), so the victim is longer and the median
	 * of six is held to 0.8; without the budget it is about 0.5. */
	EXPECT_GE((ratio[ROUNDS / 2 - 1] + ratio[ROUNDS / 2]) / 2, 0.8);
	meter_profile_free(p);
	ASSERT_EQ(ku_param_set("user_wall_ticks", 10000), 0);
	meter_nl_close(nl);
}

TEST_HARNESS_MAIN
