// SPDX-License-Identifier: MIT
/*
 * Sampling delivers no signal: a program counting every catchable signal
 * sees none while it is sampled at 10 kHz, and a blocking read is not
 * interrupted.  On kselftest_harness.h: the run is the fixture, each test
 * one thing it must show.
 */
#include <poll.h>

#include "kmod_util.h"

static volatile sig_atomic_t nsignals;

static void count(int sig)
{
	(void)sig;
	nsignals++;
}

FIXTURE(sampled_run) {
	uint64_t self_samples;
	int poll_ret;
};

/* 0.3 s of CPU in f1 at 10 kHz, then a 100 ms poll() on an empty pipe */
FIXTURE_SETUP(sampled_run)
{
	struct sigaction sa;
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie;
	int sig, fds[2];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count;
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 100000);
	ku_funcs(nl, 1);
	ASSERT_EQ(0, pipe(fds));
	ku_enter(pg, 1);
	ku_burn(300000000);
	self->poll_ret = poll(&(struct pollfd){ .fd = fds[0], .events = POLLIN },
			      1, 100);
	ku_leave(pg);
	p = ku_profile(nl, cookie, 0);
	self->self_samples = ku_self(p, 1);
	meter_profile_free(p);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(sampled_run)
{
}

TEST_F(sampled_run, the_thread_was_sampled)
{
	EXPECT_LT(1000, self->self_samples);
}

TEST_F(sampled_run, no_signal_is_delivered)
{
	EXPECT_EQ(0, nsignals);
}

TEST_F(sampled_run, a_blocking_call_is_not_interrupted)
{
	EXPECT_EQ(0, self->poll_ret);
}

TEST_HARNESS_MAIN
