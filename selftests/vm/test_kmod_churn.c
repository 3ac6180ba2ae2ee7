// SPDX-License-Identifier: MIT
/*
 * Thread churn: 200 short-lived threads register (half unregister, half
 * just exit) while the main thread keeps reading the profile.  Every
 * thread is listed as exited, the threads' samples add up to the
 * session's, and the pinned pages are uncharged (VmLck back to what it
 * was) once they are gone.
 */
#include <pthread.h>

#include "kmod_util.h"

#define WAVES 50
#define PER_WAVE 4

static uint64_t cookie;

static void *worker(void *arg)
{
	int unregister = (int)(uintptr_t)arg;
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();

	ku_register(nl, pg, 100000);
	ku_enter(pg, 1);
	ku_burn(2000000);
	ku_leave(pg);
	if (unregister)
		meter_nl_unregister(nl, NULL, 0);
	meter_nl_close(nl);
	munmap(pg, METER_PAGE_SIZE);
	return NULL;
}

FIXTURE(churn) {
	struct meter_profile *p;	/* once every thread is listed exited */
	uint64_t sum;			/* the threads' samples */
	size_t exited;
	int reads;			/* reads during the churn that succeeded */
	long lck0, lck_reg, lck;	/* VmLck before, registered, after, kB */
};

FIXTURE_SETUP(churn)
{
	pthread_t th[PER_WAVE];
	struct meter_profile *p;
	struct meter_nl *nl;
	size_t i;
	int w, k;

	nl = ku_open();
	self->lck0 = ku_vmlck_kb(0);
	cookie = ku_register(nl, ku_page(), 100000);
	self->lck_reg = ku_vmlck_kb(0);
	ku_funcs(nl, 1);
	for (w = 0; w < WAVES; w++) {
		for (k = 0; k < PER_WAVE; k++)
			ASSERT_EQ(0, pthread_create(&th[k], NULL, worker,
						    (void *)(uintptr_t)(k & 1)));
		p = ku_profile(nl, cookie, 0);	/* reads race the churn */
		self->reads += p != NULL;
		meter_profile_free(p);
		for (k = 0; k < PER_WAVE; k++)
			pthread_join(th[k], NULL);
	}
	/*
	 * pthread_join() returns when the thread's tid is cleared, in
	 * exit_mm(), before the exit tracepoint that lists it as exited:
	 * on a slow kernel the last ones may still be on their way.
	 */
	for (k = 0; k < 500; k++) {
		p = ku_profile(nl, cookie, 0);
		for (i = 0, self->sum = 0, self->exited = 0; i < p->nthreads; i++) {
			self->sum += p->threads[i].samples;
			self->exited += p->threads[i].exited;
		}
		if (self->exited >= WAVES * PER_WAVE || k == 499)
			break;
		meter_profile_free(p);
		usleep(10000);
	}
	self->p = p;
	TH_LOG("%zu threads, %zu exited, %llu samples, threads' sum %llu",
	       p->nthreads, self->exited, (unsigned long long)p->samples,
	       (unsigned long long)self->sum);
	meter_nl_unregister(nl, NULL, 0);
	/* The release runs on a workqueue: give it a moment. */
	for (k = 0; k < 100; k++) {
		self->lck = ku_vmlck_kb(0);
		if (self->lck == self->lck0)
			break;
		usleep(10000);
	}
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(churn)
{
	meter_profile_free(self->p);
}

TEST_F(churn, every_churned_thread_is_listed_as_exited)
{
	EXPECT_EQ(WAVES * PER_WAVE + 1, self->p->nthreads);
	EXPECT_EQ(WAVES * PER_WAVE, self->exited);
}

TEST_F(churn, the_threads_samples_add_up_to_the_sessions)
{
	EXPECT_EQ(self->p->samples, self->sum);
}

TEST_F(churn, reads_during_the_churn_all_succeed)
{
	EXPECT_EQ(WAVES, self->reads);
}

TEST_F(churn, the_pinned_page_is_charged_then_uncharged)
{
	TH_LOG("VmLck %ld -> %ld -> %ld kB", self->lck0, self->lck_reg,
	       self->lck);
	ASSERT_LE(0, self->lck0);
	EXPECT_EQ(self->lck0 + METER_PAGE_SIZE / 1024, self->lck_reg);
	EXPECT_EQ(self->lck0, self->lck);
}

TEST_HARNESS_MAIN
