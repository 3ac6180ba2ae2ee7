// SPDX-License-Identifier: MIT
/*
 * The wall clock (METER_CLOCK=wall): meter.ko samples each registered
 * thread whether or not it runs and charges the sample, with the thread's
 * state, to its current function.  A program that waits 1 s for I/O in
 * wait_io() and computes 1 s in burn() is half off the CPU in wait_io and
 * half on it in burn; the CPU clock sees burn alone; a thread blocked on
 * a lock is charged off the CPU to the function waiting for it.
 */
#include "lib_kernel.h"

static uint64_t off_of(const struct meter_func *f, enum meter_off_kind k)
{
	return f ? f->self_off[k] : 0;
}

static uint64_t on_of(const struct meter_func *f)
{
	return f ? f->self_samples - f->self_off[METER_OFF_RUNQ] -
		   f->self_off[METER_OFF_BLOCKED] : 0;
}

/* Samples of stacks whose frames spell want and whose state is state. */
static uint64_t stack_state(const struct meter_profile *p, const char *want,
			    uint8_t state)
{
	char buf[4096];
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < p->nstacks; i++) {
		stack_string(p, &p->stacks[i], buf, sizeof(buf));
		if (!strcmp(buf, want) && p->stacks[i].state == state)
			n += p->stacks[i].samples;
	}
	return n;
}

static int within(double share, double want, double points)
{
	return share >= want - points / 100 && share <= want + points / 100;
}

/* "wall 1000": wait_io blocks 1 s, burn computes 1 s */
FIXTURE(wall) {
	struct backend_run r;
	const struct meter_func *w, *b;
	uint64_t burn_on;
};

FIXTURE_SETUP(wall)
{
	const char *args[] = { "wall", "1000", NULL };
	struct meter_profile *p;

	kernel_run(&self->r, "lib_workload_manual", args, "wall",
		   "METER_CLOCK=wall");
	ASSERT_BACKEND_RUN(&self->r);
	p = self->r.p;
	self->w = func_named(p, "wait_io");
	self->b = func_named(p, "spin");	/* burn's work, its only callee */
	ASSERT_NE(NULL, self->w);
	ASSERT_NE(NULL, self->b);
	self->burn_on = stack_state(p, "main;burn;spin", METER_STATE_ONCPU);
	TH_LOG("samples %llu (runq %llu, blocked %llu); wait_io self %llu (on %llu, runq %llu, blocked %llu); spin self %llu (on %llu, runq %llu, blocked %llu); main;burn;spin on the CPU %llu; no current %llu",
	       (unsigned long long)p->samples,
	       (unsigned long long)p->samples_off[METER_OFF_RUNQ],
	       (unsigned long long)p->samples_off[METER_OFF_BLOCKED],
	       (unsigned long long)self->w->self_samples,
	       (unsigned long long)on_of(self->w),
	       (unsigned long long)off_of(self->w, METER_OFF_RUNQ),
	       (unsigned long long)off_of(self->w, METER_OFF_BLOCKED),
	       (unsigned long long)self->b->self_samples,
	       (unsigned long long)on_of(self->b),
	       (unsigned long long)off_of(self->b, METER_OFF_RUNQ),
	       (unsigned long long)off_of(self->b, METER_OFF_BLOCKED),
	       (unsigned long long)self->burn_on,
	       (unsigned long long)p->no_current);
}

FIXTURE_TEARDOWN(wall)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

/* 2 s of wall time at 1 kHz; the waits and the start around them */
TEST_F(wall, session_samples_wall_clock_time)
{
	EXPECT_TRUE(self->r.p->wall);
	EXPECT_LE(1900, self->r.p->samples);
}

TEST_F(wall, wait_io_half_blocked_off_the_cpu)
{
	double ws = (double)off_of(self->w, METER_OFF_BLOCKED) /
		    (double)self->r.p->samples;

	EXPECT_TRUE(within(ws, 0.5, 3)) TH_LOG("%.1f%%", 100 * ws);
	EXPECT_GE(self->r.p->samples, on_of(self->w) * 100)
		TH_LOG("wait_io is barely on the CPU");
	/* its blocked samples are the stack main;wait_io, blocked, and the
	 * session's blocked samples hold them */
	EXPECT_EQ(off_of(self->w, METER_OFF_BLOCKED),
		  stack_state(self->r.p, "main;wait_io", 1 + METER_OFF_BLOCKED));
	EXPECT_LE(off_of(self->w, METER_OFF_BLOCKED),
		  self->r.p->samples_off[METER_OFF_BLOCKED]);
}

TEST_F(wall, burn_half_on_the_cpu)
{
	double bs = (double)self->burn_on / (double)self->r.p->samples;

	EXPECT_TRUE(within(bs, 0.5, 3)) TH_LOG("%.1f%%", 100 * bs);
	EXPECT_GE(self->b->self_samples,
		  off_of(self->b, METER_OFF_BLOCKED) * 100)
		TH_LOG("burn's spin is barely blocked");
}

/*
 * The CPU clock on the same program: shares of the samples charged to a
 * function (start-up and exit have none current, and a debug kernel
 * stretches them: 33 of 1063 there).
 */
TEST(cpu_clock_sees_burn_alone)
{
	const char *args[] = { "wall", "1000", NULL };
	const struct meter_func *w, *s;
	struct backend_run r;
	uint64_t charged;

	kernel_run(&r, "lib_workload_manual", args, "cpu", "METER_CLOCK=cpu");
	ASSERT_BACKEND_RUN(&r);
	w = func_named(r.p, "wait_io");
	s = func_named(r.p, "spin");
	charged = r.p->samples - r.p->no_current;
	TH_LOG("samples %llu, %llu charged; wait_io self %llu; spin self %llu",
	       (unsigned long long)r.p->samples, (unsigned long long)charged,
	       (unsigned long long)(w ? w->self_samples : 0),
	       (unsigned long long)(s ? s->self_samples : 0));
	EXPECT_FALSE(r.p->wall);
	EXPECT_EQ(0, r.p->samples_off[0]);
	EXPECT_EQ(0, r.p->samples_off[1]);
	ASSERT_NE(NULL, s);
	ASSERT_LT(0, charged);
	EXPECT_GE(s->self_samples * 100, charged * 95);
	/* what it spends on the CPU setting up and ending its wait */
	if (w)
		EXPECT_GE(charged * 3, w->self_samples * 100);
	meter_profile_free(r.p);
	scratch_cleanup();
}

/* "mutex 500": a waiter blocks 500 ms on a lock a holder keeps spinning */
TEST(thread_blocked_on_a_lock_charged_to_its_waiting_function)
{
	const char *args[] = { "mutex", "500", NULL };
	const struct meter_func *wl, *h;
	struct backend_run r;
	uint64_t blocked;

	kernel_run(&r, "lib_workload_manual", args, "mutex", "METER_CLOCK=wall");
	ASSERT_BACKEND_RUN(&r);
	wl = func_named(r.p, "wait_lock");
	h = func_named(r.p, "spin");
	ASSERT_NE(NULL, wl);
	ASSERT_NE(NULL, h);
	blocked = off_of(wl, METER_OFF_BLOCKED);
	TH_LOG("samples %llu; wait_lock self %llu (blocked %llu, runq %llu); the holder's spin on CPU %llu; threads %zu",
	       (unsigned long long)r.p->samples,
	       (unsigned long long)wl->self_samples,
	       (unsigned long long)blocked,
	       (unsigned long long)off_of(wl, METER_OFF_RUNQ),
	       (unsigned long long)on_of(h), r.p->nthreads);
	EXPECT_LE(450, blocked);
	EXPECT_GE(wl->self_samples, on_of(wl) * 10);
	EXPECT_LE(450, on_of(h));
	EXPECT_LT(0, stack_state(r.p, "holder;spin", METER_STATE_ONCPU));
	meter_profile_free(r.p);
	scratch_cleanup();
}

TEST(bad_clock_refused)
{
	struct meter_nl_reg reg = { 0 };
	struct meter_nl *nl = NULL;
	char err[256] = "";
	void *page;
	int rc;

	page = aligned_alloc(4096, 4096);
	ASSERT_NE(NULL, page);
	memset(page, 0, 4096);
	((uint32_t *)page)[0] = METER_PAGE_MAGIC;
	((uint32_t *)page)[1] = METER_PAGE_VERSION;
	ASSERT_EQ(0, meter_nl_open(&nl, err, sizeof(err))) TH_LOG("%s", err);
	reg.page_addr = (uintptr_t)page;
	reg.clock = __METER_CLOCK_MAX;
	rc = meter_nl_register(nl, &reg, NULL, NULL, err, sizeof(err));
	EXPECT_TRUE(rc == -EINVAL || rc == -ERANGE) TH_LOG("%d: %s", rc, err);
	meter_nl_close(nl);
	free(page);
}

TEST_HARNESS_MAIN
