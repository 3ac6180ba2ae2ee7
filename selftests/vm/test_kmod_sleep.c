// SPDX-License-Identifier: MIT
/*
 * A function that is current while its thread sleeps or blocks gets no
 * samples: the timer runs on the thread's CPU time only.
 */
#include <poll.h>

#include "kmod_util.h"

int main(void)
{
	struct timespec ts = { 0, 300000000 };
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie, c0, c1, c2;
	int fds[2];

	ku_plan(3);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 1000000);
	ku_funcs(nl, 3);
	if (pipe(fds))
		return 1;

	/*
	 * Entering and leaving the sleep is CPU time of the thread (a few
	 * hundred microseconds per system call under TCG): those samples
	 * are right.  The bound is that CPU time, not the 300 ms asleep.
	 */
	c0 = ku_thread_cpu_ns();
	ku_enter(pg, 1);		/* asleep */
	nanosleep(&ts, NULL);
	ku_leave(pg);
	c1 = ku_thread_cpu_ns();
	ku_enter(pg, 2);		/* blocked on a pipe nobody writes */
	poll(&(struct pollfd){ .fd = fds[0], .events = POLLIN }, 1, 300);
	ku_leave(pg);
	c2 = ku_thread_cpu_ns();
	ku_enter(pg, 3);		/* running */
	ku_burn(200000000);
	ku_leave(pg);

	p = ku_profile(nl, cookie, 0);
	ku_diag("sleeping %llu, blocked %llu, running %llu samples",
		(unsigned long long)ku_self(p, 1),
		(unsigned long long)ku_self(p, 2),
		(unsigned long long)ku_self(p, 3));
	ku_diag("CPU time around the sleep %.3f ms, around the block %.3f ms",
		(c1 - c0) / 1e6, (c2 - c1) / 1e6);
	ku_ok(ku_self(p, 1) <= (c1 - c0) / 1000000 + 2,
	      "a sleeping thread's current gets no samples for its sleep");
	ku_ok(ku_self(p, 2) <= (c2 - c1) / 1000000 + 2,
	      "a blocked thread's current gets no samples while blocked");
	ku_ok(ku_self(p, 3) >= 180, "the running function gets its samples");
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
