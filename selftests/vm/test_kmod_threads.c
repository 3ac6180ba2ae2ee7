// SPDX-License-Identifier: MIT
/*
 * Four threads burning equal CPU time, each in its own function and each
 * registered on its own page, get 25% each within 5 points; all four join
 * one session and are listed with their samples.
 */
#include <pthread.h>

#include "kmod_util.h"

#define NTHREADS 4

static uint64_t cookies[NTHREADS];
static pthread_barrier_t barrier;

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();

	cookies[id - 1] = ku_register(nl, pg, 200000);
	pthread_barrier_wait(&barrier);
	ku_enter(pg, id);
	ku_burn(300000000);
	ku_leave(pg);
	meter_nl_unregister(nl, NULL, 0);
	meter_nl_close(nl);
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t sum = 0;
	double worst = 0;
	int i;

	ku_plan(4);
	nl = ku_open();
	pg = ku_page();
	ku_register(nl, pg, 200000);
	ku_funcs(nl, NTHREADS);
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);

	ku_ok(cookies[0] && cookies[0] == cookies[1] &&
	      cookies[1] == cookies[2] && cookies[2] == cookies[3],
	      "threads of one process join one session");
	p = ku_profile(nl, cookies[0], 0);
	for (i = 0; i < NTHREADS; i++)
		sum += ku_self(p, i + 1);
	for (i = 0; i < NTHREADS && sum; i++) {
		double got = 100.0 * ku_self(p, i + 1) / sum;

		ku_diag("thread %d: %llu samples, %.2f%%", i + 1,
			(unsigned long long)ku_self(p, i + 1), got);
		if (ku_abs(got - 25.0) > worst)
			worst = ku_abs(got - 25.0);
	}
	ku_ok(sum > 1000 && worst <= 5.0,
	      "four equal threads within 5 points of 25%% (worst %.2f)", worst);
	ku_ok(p->nthreads == NTHREADS + 1, "five threads listed (%zu)",
	      p->nthreads);
	{
		size_t n = 0;

		for (i = 0; i < (int)p->nthreads; i++)
			n += p->threads[i].exited;
		ku_ok(n == NTHREADS, "unregistered threads are listed as exited");
	}
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
