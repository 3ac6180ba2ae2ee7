// SPDX-License-Identifier: MIT
/*
 * Thread churn: 2000 threads register and exit in batches of 50 (half
 * unregister first, half just exit) while the main thread reads the
 * session.  Every thread is accounted for as exited (the module keeps a
 * row for max_thread_rows of them, 1024, and folds the rest into one
 * row), the threads' samples add up to the session's, and their 2000
 * pinned pages are uncharged (VmLck back to the main thread's one page).
 * A process that starts and ends registered threads for ever holds
 * kernel memory that stops growing: a second round of churn leaves its
 * cgroup's slab where the first left it.  vm-run fails the run on any
 * kernel WARN, BUG or Oops.
 */
#include <pthread.h>

#include "kmod_util.h"

#define THREADS		2000
#define BATCH		50
#define ROUND		3000	/* threads in a round of the slab test */

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

/*
 * threads short threads, BATCH at a time, each batch read once while it
 * runs (the reads that succeeded are returned); then up to 10 s for the
 * releases, which run on the module's workqueue (PREEMPT_RT under TCG
 * was still at it after 300 ms): VmLck in kB, 4 when all are done.
 */
static int churn(struct meter_nl *nl, uint64_t cookie, int threads,
		 long *lck)
{
	pthread_t th[BATCH];
	struct meter_profile *p;
	int b, k, reads = 0;

	for (b = 0; b < threads / BATCH; b++) {
		for (k = 0; k < BATCH; k++)
			if (pthread_create(&th[k], NULL, short_thread,
					   (void *)(uintptr_t)k))
				ku_bail("pthread_create", errno, NULL);
		p = ku_profile(nl, cookie, 0);
		reads += p != NULL;
		meter_profile_free(p);
		for (k = 0; k < BATCH; k++)
			pthread_join(th[k], NULL);
	}
	for (k = 0; k < 100 && (*lck = ku_vmlck_kb(getpid())) != 4; k++)
		usleep(100000);
	return reads;
}

FIXTURE(churn) {
	struct meter_profile *p;	/* the session after the churn */
	uint64_t sum;			/* the threads' samples */
	size_t threads, exited, rows;	/* folded rows counted whole */
	long lck;			/* VmLck after the releases, kB */
};

FIXTURE_SETUP(churn)
{
	const struct meter_thread_row *t;
	struct meter_nl *nl;
	uint64_t cookie;
	size_t i, n;
	int reads;

	nl = ku_open();
	cookie = ku_register(nl, ku_page(), 1000000);
	ku_funcs(nl, 2);
	reads = churn(nl, cookie, THREADS, &self->lck);
	self->p = ku_profile(nl, cookie, 0);
	for (i = 0; i < self->p->nthreads; i++) {
		t = &self->p->threads[i];
		n = t->folded ? t->folded : 1;
		self->sum += t->samples;
		self->threads += n;
		self->exited += t->exited ? n : 0;
		self->rows += !t->folded;
	}
	TH_LOG("%zu threads in %zu rows (%zu of them kept whole), %zu exited, %llu samples, threads' sum %llu, %d reads during the churn",
	       self->threads, self->p->nthreads, self->rows, self->exited,
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
	long rows = ku_param_get("max_thread_rows");

	EXPECT_EQ(THREADS + 1, self->threads);
	EXPECT_EQ(THREADS, self->exited);
	/* the main thread's row, the ended threads kept, one folded row */
	EXPECT_EQ(rows + 1, self->rows);
	EXPECT_EQ(rows + 2, self->p->nthreads);
	EXPECT_EQ(self->p->samples, self->sum);
	EXPECT_EQ(4, self->lck) TH_LOG("VmLck: the main thread's page only");
}

/*
 * The cgroup's unreclaimable slab once the frees the kernel defers are
 * done.  kfree_rcu() gathers frees for up to 5 s (KFREE_DRAIN_JIFFIES on
 * 6.1) and lazy RCU (6.12) holds callbacks for up to 10 s: read 3 s
 * after a churn, the level was at times still falling (653 KiB, then
 * 407 KiB 5 s after the churn, on 6.1).  Dropping the slab caches runs
 * their shrinkers, which hand every gathered batch to RCU at once; the
 * level is read a second after each drop until three readings agree
 * within a page (memory.stat is flushed at the latest every 2 s; what
 * the test itself allocates meanwhile, a file opened, is far less).
 */
static long slab_settled(const char *cg)
{
	long v, last = -1;
	int same = 0, i;

	for (i = 0; i < 30 && same < 2; i++) {
		if (ku_write("/proc/sys/vm/drop_caches", "2"))
			return -1;
		sleep(1);
		v = ku_cg_stat(cg, "slab_unreclaimable");
		same = last >= 0 && labs(v - last) <= 4096 ? same + 1 : 0;
		last = v;
	}
	return same == 2 ? last : -1;
}

/*
 * Records of ended threads are freed: after a first round of churn has
 * filled the session's rows, a second round of 3000 threads leaves the
 * slab charged to the process's cgroup within 384 KiB of where it was
 * (their records, 512 bytes each, would add 1.5 MiB).  The session's
 * period is 1 s, so that none of the threads is sampled: a sampled
 * thread's stacks are its own entries in the session's stack table,
 * which grows by a quarter of a MiB at a time (up to stack_entries) as
 * new threads are sampled, memory that is bounded and counted against
 * max_session_mb, not left behind.
 */
TEST(register_and_exit_churn_leaves_no_growing_slab)
{
	long lck, before, after;
	struct meter_nl *nl;
	uint64_t cookie;

	if (geteuid())
		SKIP(return, "needs root (cgroups)");
	ASSERT_EQ(0, ku_cg_setup()) TH_LOG("cgroup2 with the memory controller");
	ASSERT_EQ(0, ku_cg_make("churn"));
	ASSERT_EQ(0, ku_cg_enter("churn", getpid()));
	nl = ku_open();
	cookie = ku_register(nl, ku_page(), METER_PERIOD_MAX_NS);
	ku_funcs(nl, 2);
	churn(nl, cookie, ROUND, &lck);
	before = slab_settled("churn");
	ASSERT_LE(0, before) TH_LOG("the level settles");
	churn(nl, cookie, ROUND, &lck);
	ASSERT_EQ(4, lck) TH_LOG("VmLck: the releases are done");
	after = slab_settled("churn");
	ASSERT_LE(0, after) TH_LOG("the level settles");
	TH_LOG("the cgroup's unreclaimable slab: %ld KiB after %d threads, %ld KiB after %d more",
	       before >> 10, ROUND, after >> 10, ROUND);
	EXPECT_GT(ROUND * 128L, after - before);
	meter_nl_close(nl);
}

TEST_HARNESS_MAIN
