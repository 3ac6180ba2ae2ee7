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

int main(void)
{
	pthread_t th[PER_WAVE];
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t sum = 0;
	long lck0, lck_reg, lck = -1;
	size_t i, exited = 0;
	int w, k, reads = 0;

	ku_plan(4);
	nl = ku_open();
	pg = ku_page();
	lck0 = ku_vmlck_kb(0);
	cookie = ku_register(nl, pg, 100000);
	lck_reg = ku_vmlck_kb(0);
	ku_funcs(nl, 1);
	for (w = 0; w < WAVES; w++) {
		for (k = 0; k < PER_WAVE; k++)
			pthread_create(&th[k], NULL, worker,
				       (void *)(uintptr_t)(k & 1));
		p = ku_profile(nl, cookie, 0);	/* reads race the churn */
		reads += p != NULL;
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
		for (i = 0, sum = 0, exited = 0; i < p->nthreads; i++) {
			sum += p->threads[i].samples;
			exited += p->threads[i].exited;
		}
		if (exited >= WAVES * PER_WAVE || k == 499)
			break;
		meter_profile_free(p);
		usleep(10000);
	}
	ku_diag("%zu threads, %zu exited, %llu samples, threads' sum %llu",
		p->nthreads, exited, (unsigned long long)p->samples,
		(unsigned long long)sum);
	ku_ok(p->nthreads == WAVES * PER_WAVE + 1 &&
	      exited == WAVES * PER_WAVE,
	      "every churned thread is listed as exited");
	ku_ok(sum == p->samples, "the threads' samples add up to the session's");
	ku_ok(reads == WAVES, "reads during the churn all succeed");
	meter_profile_free(p);
	meter_nl_unregister(nl, NULL, 0);
	/* The release runs on a workqueue: give it a moment. */
	for (k = 0; k < 100; k++) {
		lck = ku_vmlck_kb(0);
		if (lck == lck0)
			break;
		usleep(10000);
	}
	ku_ok(lck0 >= 0 && lck_reg == lck0 + METER_PAGE_SIZE / 1024 &&
	      lck == lck0,
	      "the pinned page is charged, then uncharged (VmLck %ld -> %ld -> %ld kB)",
	      lck0, lck_reg, lck);
	meter_nl_close(nl);
	return ku_exit();
}
