// SPDX-License-Identifier: MIT
/*
 * Live call counts: a reader takes snapshots of a running program while
 * its threads call instrumented functions.  Each snapshot's count lies
 * between the calls finished before the snapshot began and the calls
 * begun after it ended (so it is live, and never more than the truth); no
 * count ever goes down, across threads that exit and send their counts
 * in several messages; after a reset only the calls since show; the final
 * counts are exact.
 *
 * The program is a child of this test (fork, no exec) that profiles
 * itself with the kernel backend; progress counters in shared memory say
 * what the truth is.  On x86 the worker's stores become visible in order
 * (entered, the call's count, done) and the reader's loads happen in
 * order, so done-before <= count <= entered-after holds exactly.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "lib_kernel.h"
#include "meter.h"

#define NRECS		1200	/* ids over three ADD_CALLS messages */
#define NWORKERS	40
#define NROUNDS		50

struct shared {
	_Atomic uint64_t entered, done;	/* calls of tick */
	_Atomic uint64_t rounds_begun;	/* rounds over the records */
	_Atomic int stop, workers_done;
};

static struct shared *sh;
static meter_record_t *recs[NRECS];

static void __attribute__((noinline)) tick(void)
{
	METER_FUNCTION();
	__asm__ volatile("" ::: "memory");
}

static void *record_worker(void *arg)
{
	int r, i;

	(void)arg;
	for (r = 0; r < NROUNDS; r++) {
		atomic_fetch_add(&sh->rounds_begun, 1);
		for (i = 0; i < NRECS; i++) {
			meter_enter(recs[i]);
			meter_leave(recs[i]);
		}
	}
	return NULL;
}

/* The profiled program. */
static void __attribute__((noreturn)) child(void)
{
	pthread_t th;
	char name[32];
	int i;

	for (i = 0; i < NRECS; i++) {
		snprintf(name, sizeof(name), "rec%04d", i);
		recs[i] = meter_record_register(name);
	}
	while (!atomic_load(&sh->stop)) {
		atomic_fetch_add(&sh->entered, 1);
		tick();
		atomic_fetch_add(&sh->done, 1);
	}
	/* threads that exit one after another while the reader looks */
	for (i = 0; i < NWORKERS; i++) {
		if (pthread_create(&th, NULL, record_worker, NULL))
			_exit(3);
		pthread_join(th, NULL);
		atomic_fetch_add(&sh->workers_done, 1);
	}
	while (atomic_load(&sh->stop) < 2)
		usleep(1000);
	_exit(0);
}

static int snap(pid_t pid, struct meter_profile **p)
{
	struct meter_nl_sel sel = { .pid = pid };
	char err[256];

	if (meter_nl_get_profile(knl, &sel, p, err, sizeof(err))) {
		printf("# get_profile: %s\n", err);
		return -1;
	}
	return 0;
}

/* the profiled program forked and running (tick called 1000 times) */
FIXTURE(live) {
	pid_t pid;
};

FIXTURE_SETUP(live)
{
	char err[256];
	int i;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, meter_nl_open(&knl, err, sizeof(err))) TH_LOG("%s", err);
	setenv("METER_BACKEND", "kernel", 1);
	setenv("METER_QUIET", "1", 1);
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (self->pid == 0)
		child();
	for (i = 0; i < 3000 && atomic_load(&sh->done) < 1000; i++)
		usleep(10000);
	ASSERT_LE(1000, atomic_load(&sh->done)) TH_LOG("the program does not run");
}

/* the program let finish, reaped and its session deleted */
FIXTURE_TEARDOWN(live)
{
	struct meter_profile *p;
	int status;

	atomic_store(&sh->stop, 2);
	waitpid(self->pid, &status, 0);
	p = kernel_profile(self->pid);
	meter_profile_free(p);
}

TEST_F(live, snapshot_lies_between_done_before_and_entered_after)
{
	int n = 0, within = 0, mid = 0, i;
	long long c, prev = 0, down = 0;
	struct meter_profile *p;
	uint64_t d0, e1;

	for (i = 0; i < 40; i++) {
		d0 = atomic_load(&sh->done);
		ASSERT_EQ(0, snap(self->pid, &p));
		e1 = atomic_load(&sh->entered);
		c = calls_of(p, "tick");
		meter_profile_free(p);
		n++;
		within += c >= (long long)d0 && c <= (long long)e1;
		mid += c > 0;
		down += c < prev;
		if (c < (long long)d0 || c > (long long)e1)
			TH_LOG("snapshot %d: done %llu <= calls %lld <= entered %llu fails",
			       i, (unsigned long long)d0, c,
			       (unsigned long long)e1);
		prev = c;
		usleep(20000);
	}
	EXPECT_EQ(n, within);
	/* live: there before the thread exits; and never going down */
	EXPECT_EQ(n, mid);
	EXPECT_EQ(0, down);
}

TEST_F(live, after_a_reset_only_the_calls_since)
{
	struct meter_nl_sel sel = { .pid = self->pid };
	uint64_t before, after, d0, e1;
	struct meter_profile *p;
	char err[256];
	long long c;

	before = atomic_load(&sh->done);
	ASSERT_EQ(0, meter_nl_reset(knl, &sel, err, sizeof(err)))
		TH_LOG("%s", err);
	after = atomic_load(&sh->entered);
	usleep(50000);
	d0 = atomic_load(&sh->done);
	ASSERT_EQ(0, snap(self->pid, &p));
	c = calls_of(p, "tick");
	e1 = atomic_load(&sh->entered);
	meter_profile_free(p);
	EXPECT_LE((long long)(d0 - after), c);
	EXPECT_GE((long long)(e1 - before), c);
}

/* records of threads that exit: counts never drop, never exceed */
TEST_F(live, exiting_threads_counts_never_drop_or_exceed)
{
	static long long prev[NRECS], now[NRECS];
	long long over = 0, down = 0, seen = 0;
	int n = 0, i;
	size_t f;

	atomic_store(&sh->stop, 1);
	while (atomic_load(&sh->workers_done) < NWORKERS && n < 2000) {
		struct meter_profile *p;
		uint64_t begun;

		ASSERT_EQ(0, snap(self->pid, &p));
		begun = atomic_load(&sh->rounds_begun);
		memset(now, 0, sizeof(now));
		for (f = 0; f < p->nfuncs; f++)
			if (p->funcs[f].name &&
			    sscanf(p->funcs[f].name, "rec%4d", &i) == 1 &&
			    i >= 0 && i < NRECS)
				now[i] = (long long)p->funcs[f].calls;
		for (i = 0; i < NRECS; i++) {
			long long c = now[i];

			down += c < prev[i];
			over += c > (long long)begun;
			seen += c > 0 && c < NWORKERS * NROUNDS;
			prev[i] = c;
		}
		meter_profile_free(p);
		n++;
	}
	TH_LOG("%d snapshots while %d threads run %d records and exit", n,
	       NWORKERS, NRECS);
	ASSERT_LT(0, n);
	EXPECT_EQ(0, down);
	EXPECT_EQ(0, over);
	/* the records' counts were seen part way */
	EXPECT_LT(0, seen);
}

TEST_F(live, final_counts_exact)
{
	struct meter_profile *p;
	long long bad = 0;
	int status = -1, i;
	char name[32];

	atomic_store(&sh->stop, 1);
	for (i = 0; i < 60000 && atomic_load(&sh->workers_done) < NWORKERS; i++)
		usleep(1000);
	atomic_store(&sh->stop, 2);
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("status %#x", status);
	p = kernel_profile(self->pid);
	ASSERT_NE(NULL, p);
	for (i = 0; i < NRECS; i++) {
		snprintf(name, sizeof(name), "rec%04d", i);
		bad += calls_of(p, name) != NWORKERS * NROUNDS;
	}
	EXPECT_EQ(0, bad);
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
