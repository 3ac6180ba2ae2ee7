// SPDX-License-Identifier: MIT
/*
 * A function that is current while its thread sleeps or blocks gets no
 * samples: the timer runs on the thread's CPU time only.
 */
#include <poll.h>

#include "kmod_util.h"

FIXTURE(off_cpu) {
	uint64_t asleep, blocked, running;	/* self samples */
	uint64_t cpu_asleep, cpu_blocked;	/* CPU ms around each */
};

/* 1 kHz: f1 current in a 300 ms sleep, f2 in a 300 ms poll() on a pipe
 * nobody writes, f3 in 200 ms of CPU */
FIXTURE_SETUP(off_cpu)
{
	struct timespec ts = { 0, 300000000 };
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie, c0, c1, c2;
	int fds[2];

	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 1000000);
	ku_funcs(nl, 3);
	ASSERT_EQ(0, pipe(fds));
	c0 = ku_thread_cpu_ns();
	ku_enter(pg, 1);
	nanosleep(&ts, NULL);
	ku_leave(pg);
	c1 = ku_thread_cpu_ns();
	ku_enter(pg, 2);
	poll(&(struct pollfd){ .fd = fds[0], .events = POLLIN }, 1, 300);
	ku_leave(pg);
	c2 = ku_thread_cpu_ns();
	ku_enter(pg, 3);
	ku_burn(200000000);
	ku_leave(pg);

	p = ku_profile(nl, cookie, 0);
	self->asleep = ku_self(p, 1);
	self->blocked = ku_self(p, 2);
	self->running = ku_self(p, 3);
	self->cpu_asleep = (c1 - c0) / 1000000;
	self->cpu_blocked = (c2 - c1) / 1000000;
	meter_profile_free(p);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(off_cpu)
{
}

/*
 * Entering and leaving the sleep is CPU time of the thread (a few hundred
 * microseconds per system call under TCG): those samples are right.  The
 * bound is that CPU time, not the 300 ms asleep.
 */
TEST_F(off_cpu, a_sleeping_threads_current_gets_no_samples_for_its_sleep)
{
	EXPECT_GE(self->cpu_asleep + 2, self->asleep)
		TH_LOG("%llu samples, %llu ms of CPU around the sleep",
		       (unsigned long long)self->asleep,
		       (unsigned long long)self->cpu_asleep);
}

TEST_F(off_cpu, a_blocked_threads_current_gets_no_samples_while_blocked)
{
	EXPECT_GE(self->cpu_blocked + 2, self->blocked)
		TH_LOG("%llu samples, %llu ms of CPU around the block",
		       (unsigned long long)self->blocked,
		       (unsigned long long)self->cpu_blocked);
}

TEST_F(off_cpu, the_running_function_gets_its_samples)
{
	EXPECT_LE(180, self->running);
}

TEST_HARNESS_MAIN
