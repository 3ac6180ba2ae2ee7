// SPDX-License-Identifier: MIT
/*
 * Thread churn: 2000 threads register and exit in batches of 50 (half
 * unregister first, half just exit) while the main thread reads the
 * session.  Every thread is listed as exited, the threads' samples add up
 * to the session's, and their 2000 pinned pages are uncharged (VmLck
 * back to the main thread's one page).  vm-run fails the run on any
 * kernel WARN, BUG or Oops.
 */
#include <pthread.h>

#include "kmod_util.h"

#define THREADS		2000
#define BATCH		50

static void *short_thread(void *arg)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();

	ku_register(nl, pg, 1000000);
	ku_enter(pg, 1);
	ku_burn(200000);
	ku_leave(pg);
	if ((uintptr_t)arg & 1)
		meter_nl_unregister(nl, NULL, 0);
	meter_nl_close(nl);
	munmap(pg, METER_PAGE_SIZE);
	return NULL;
}

static void test_threads(struct meter_nl *nl, uint64_t cookie)
{
	pthread_t th[BATCH];
	struct meter_profile *p;
	uint64_t sum = 0;
	size_t i, exited = 0;
	int b, k, reads = 0;
	long lck;

	for (b = 0; b < THREADS / BATCH; b++) {
		for (k = 0; k < BATCH; k++)
			if (pthread_create(&th[k], NULL, short_thread,
					   (void *)(uintptr_t)k))
				ku_bail("pthread_create", -errno, NULL);
		p = ku_profile(nl, cookie, 0);
		reads += p != NULL;
		meter_profile_free(p);
		for (k = 0; k < BATCH; k++)
			pthread_join(th[k], NULL);
	}
	/* Releases run on the module's workqueue: give them up to 10 s
	 * (PREEMPT_RT under TCG was still at it after 300 ms).
	 */
	for (k = 0; k < 100 && (lck = ku_vmlck_kb(getpid())) != 4; k++)
		usleep(100000);
	p = ku_profile(nl, cookie, 0);
	for (i = 0; i < p->nthreads; i++) {
		sum += p->threads[i].samples;
		exited += p->threads[i].exited;
	}
	ku_diag("%zu threads listed, %zu exited, %llu samples, threads' sum %llu, %d reads during the churn",
		p->nthreads, exited, (unsigned long long)p->samples,
		(unsigned long long)sum, reads);
	ku_ok(p->nthreads == THREADS + 1 && exited == THREADS &&
	      sum == p->samples,
	      "%d threads registered and exited in batches of %d: all listed as exited, samples add up",
	      THREADS, BATCH);
	ku_ok(lck == 4, "their %d pinned pages were uncharged (VmLck %ld kB: the main thread's page)",
	      THREADS, lck);
	meter_profile_free(p);
}

int main(void)
{
	struct meter_nl *nl;
	uint64_t cookie;

	ku_plan(2);
	nl = ku_open();
	cookie = ku_register(nl, ku_page(), 1000000);
	ku_funcs(nl, 2);
	test_threads(nl, cookie);
	meter_nl_close(nl);
	return ku_exit();
}
