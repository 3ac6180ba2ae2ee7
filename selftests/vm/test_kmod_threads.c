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

FIXTURE(four) {
	struct meter_profile *p;
};

FIXTURE_SETUP(four)
{
	pthread_t th[NTHREADS];
	struct meter_nl *nl;
	int i;

	nl = ku_open();
	ku_register(nl, ku_page(), 200000);
	ku_funcs(nl, NTHREADS);
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, worker,
					    (void *)(uintptr_t)(i + 1)));
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	ASSERT_NE(0, cookies[0]);
	self->p = ku_profile(nl, cookies[0], 0);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(four)
{
	meter_profile_free(self->p);
}

TEST_F(four, threads_of_one_process_join_one_session)
{
	int i;

	for (i = 1; i < NTHREADS; i++)
		EXPECT_EQ(cookies[0], cookies[i]);
}

TEST_F(four, four_equal_threads_within_5_points_of_25_percent)
{
	uint64_t sum = 0;
	double worst = 0;
	int i;

	for (i = 0; i < NTHREADS; i++)
		sum += ku_self(self->p, i + 1);
	ASSERT_LT(1000, sum);
	for (i = 0; i < NTHREADS; i++) {
		double got = 100.0 * ku_self(self->p, i + 1) / sum;

		TH_LOG("thread %d: %.2f%%", i + 1, got);
		if (ku_abs(got - 25.0) > worst)
			worst = ku_abs(got - 25.0);
	}
	EXPECT_GE(5.0, worst);
}

TEST_F(four, all_five_threads_listed_the_unregistered_as_exited)
{
	size_t n = 0, i;

	ASSERT_EQ(NTHREADS + 1, self->p->nthreads);
	for (i = 0; i < self->p->nthreads; i++)
		n += self->p->threads[i].exited;
	EXPECT_EQ(NTHREADS, n);
}

TEST_F(four, each_stack_names_its_workers_tid_and_only_its_function)
{
	const struct meter_profile *p = self->p;
	size_t k;
	int w;

	ASSERT_LT(0, p->nstacks);
	for (k = 0; k < p->nstacks; k++) {
		const struct meter_stack *st = &p->stacks[k];

		for (w = 0; w < NTHREADS && tids[w] != st->tid; w++)
			;
		/* worker w runs function w + 1 and nothing else */
		EXPECT_GT(NTHREADS, w) TH_LOG("stack %zu: tid %u is no worker's",
					      k, st->tid);
		EXPECT_EQ(1, st->depth);
		if (w < NTHREADS && st->depth)
			EXPECT_EQ((uint32_t)w + 1, st->frames[0]);
	}
}

TEST_F(four, a_threads_stacks_hold_its_samples_all_together_every_sample)
{
	const struct meter_profile *p = self->p;
	uint64_t in_stacks = 0, per[NTHREADS] = { 0 };
	size_t k;
	int w;

	for (k = 0; k < p->nstacks; k++) {
		for (w = 0; w < NTHREADS && tids[w] != p->stacks[k].tid; w++)
			;
		if (w < NTHREADS)
			per[w] += p->stacks[k].samples;
		in_stacks += p->stacks[k].samples;
	}
	for (w = 0; w < NTHREADS; w++)
		for (k = 0; k < p->nthreads; k++)
			if (p->threads[k].tid == tids[w])
				EXPECT_GE(p->threads[k].samples, per[w]);
	EXPECT_EQ(p->samples - p->no_current - p->invalid - p->lost, in_stacks);
}

TEST_HARNESS_MAIN
