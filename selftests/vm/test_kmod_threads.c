// SPDX-License-Identifier: MIT
/*
 * Four threads burning equal CPU time, each in its own function and each
 * registered on its own page, get 25% each within 5 points; all four join
 * one session and are listed with their samples; each sampled stack names
 * the thread it was taken in (STACK_TID).
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kmod_util.h"

#define NTHREADS 4

static uint64_t cookies[NTHREADS];
static uint32_t tids[NTHREADS];
static pthread_barrier_t barrier;

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();

	cookies[id - 1] = ku_register(nl, pg, 200000);
	tids[id - 1] = (uint32_t)syscall(SYS_gettid);
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

	ku_plan(6);
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
	{
		uint64_t in_stacks = 0, per[NTHREADS] = { 0 };
		bool right = p->nstacks > 0, within = true;
		size_t k;
		int w;

		for (k = 0; k < p->nstacks; k++) {
			const struct meter_stack *st = &p->stacks[k];

			for (w = 0; w < NTHREADS && tids[w] != st->tid; w++)
				;
			/* worker w runs function w + 1 and nothing else */
			if (w == NTHREADS || st->depth != 1 ||
			    st->frames[0] != (uint32_t)w + 1) {
				ku_diag("stack %zu: tid %u, %u frames, leaf %u",
					k, st->tid, st->depth,
					st->depth ? st->frames[0] : 0);
				right = false;
				continue;
			}
			per[w] += st->samples;
			in_stacks += st->samples;
		}
		ku_ok(right, "each stack names its worker's tid, and only "
		      "that worker's function is in it");
		for (w = 0; w < NTHREADS; w++)
			for (k = 0; k < p->nthreads; k++)
				if (p->threads[k].tid == tids[w] &&
				    per[w] > p->threads[k].samples)
					within = false;
		ku_ok(within && in_stacks == p->samples - p->no_current -
		      p->invalid - p->lost,
		      "a thread's stacks hold at most its samples, all of "
		      "them together every sample with a stack (%llu)",
		      (unsigned long long)in_stacks);
	}
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
