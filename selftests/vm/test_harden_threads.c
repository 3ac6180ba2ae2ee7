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

FIXTURE(churn) {
	struct meter_profile *p;	/* the session after the churn */
	uint64_t sum;			/* the threads' samples */
	size_t exited;
	long lck;			/* VmLck after the releases, kB */
};

FIXTURE_SETUP(churn)
{
	pthread_t th[BATCH];
	struct meter_profile *p;
	struct meter_nl *nl;
	uint64_t cookie;
	int b, k, reads = 0;
	size_t i;

	nl = ku_open();
	cookie = ku_register(nl, ku_page(), 1000000);
	ku_funcs(nl, 2);
	for (b = 0; b < THREADS / BATCH; b++) {
		for (k = 0; k < BATCH; k++)
			ASSERT_EQ(0, pthread_create(&th[k], NULL, short_thread,
						    (void *)(uintptr_t)k));
		p = ku_profile(nl, cookie, 0);
		reads += p != NULL;
		meter_profile_free(p);
		for (k = 0; k < BATCH; k++)
			pthread_join(th[k], NULL);
	}
	/* Releases run on the module's workqueue: give them up to 10 s
	 * (PREEMPT_RT under TCG was still at it after 300 ms).
	 */
	for (k = 0; k < 100 && (self->lck = ku_vmlck_kb(getpid())) != 4; k++)
		usleep(100000);
	self->p = ku_profile(nl, cookie, 0);
	self->sum = 0;
	self->exited = 0;
	for (i = 0; i < self->p->nthreads; i++) {
		self->sum += self->p->threads[i].samples;
		self->exited += self->p->threads[i].exited;
	}
	TH_LOG("%zu threads listed, %zu exited, %llu samples, threads' sum %llu, %d reads during the churn",
	       self->p->nthreads, self->exited,
	       (unsigned long long)self->p->samples,
	       (unsigned long long)self->sum, reads);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(churn)
{
	meter_profile_free(self->p);
}

/*
 * One test, not three: the churn takes most of a minute on the debug
 * kernel, and its three outcomes are one claim, that nothing of an
 * exited thread is left behind.
 */
TEST_F(churn, exited_threads_are_listed_counted_and_unpinned)
{
	EXPECT_EQ(THREADS + 1, self->p->nthreads);
	EXPECT_EQ(THREADS, self->exited);
	EXPECT_EQ(self->p->samples, self->sum);
	EXPECT_EQ(4, self->lck) TH_LOG("VmLck: the main thread's page only");
}

TEST_HARNESS_MAIN
