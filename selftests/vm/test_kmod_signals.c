// SPDX-License-Identifier: MIT
/*
 * Sampling delivers no signal: a program counting every catchable signal
 * sees none while it is sampled at 10 kHz, and a blocking read is not
 * interrupted.
 */
#include <poll.h>

#include "kmod_util.h"

static volatile sig_atomic_t nsignals;

static void count(int sig)
{
	(void)sig;
	nsignals++;
}

int main(void)
{
	struct sigaction sa;
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie;
	int sig, fds[2], r;

	ku_plan(3);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count;
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 100000);
	ku_funcs(nl, 1);
	if (pipe(fds))
		return 1;
	ku_enter(pg, 1);
	ku_burn(300000000);
	r = poll(&(struct pollfd){ .fd = fds[0], .events = POLLIN }, 1, 100);
	ku_leave(pg);
	p = ku_profile(nl, cookie, 0);
	ku_ok(ku_self(p, 1) > 1000, "sampled (%llu samples)",
	      (unsigned long long)ku_self(p, 1));
	ku_ok(nsignals == 0, "no signal delivered (%d)", (int)nsignals);
	ku_ok(r == 0, "a blocking call is not interrupted");
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
