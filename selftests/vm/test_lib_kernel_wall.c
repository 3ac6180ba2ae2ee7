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

#define MS 1000

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

static void wall_half_and_half(void)
{
	char arg[16], out[256];
	const char *args[] = { "wall", arg, NULL };
	const struct meter_func *w, *b;
	struct meter_profile *p;
	uint64_t burn_on;
	double ws, bs;

	snprintf(arg, sizeof(arg), "%d", MS);
	p = run_kernel_env("lib_workload_manual", args, out, sizeof(out),
			   "wall", "METER_CLOCK=wall");
	if (!p) {
		ok(0, "wall: session read back");
		return;
	}
	ok(p->wall, "wall: the session says it samples wall-clock time");
	w = func_named(p, "wait_io");
	b = func_named(p, "spin");	/* burn's work, its only callee */
	burn_on = stack_state(p, "main;burn;spin", METER_STATE_ONCPU);
	diag("samples %llu (runq %llu, blocked %llu); wait_io self %llu "
	     "(on %llu, runq %llu, blocked %llu); spin self %llu (on %llu, "
	     "runq %llu, blocked %llu); main;burn;spin on the CPU %llu; "
	     "no current %llu",
	     (unsigned long long)p->samples,
	     (unsigned long long)p->samples_off[METER_OFF_RUNQ],
	     (unsigned long long)p->samples_off[METER_OFF_BLOCKED],
	     (unsigned long long)(w ? w->self_samples : 0),
	     (unsigned long long)on_of(w),
	     (unsigned long long)off_of(w, METER_OFF_RUNQ),
	     (unsigned long long)off_of(w, METER_OFF_BLOCKED),
	     (unsigned long long)(b ? b->self_samples : 0),
	     (unsigned long long)on_of(b),
	     (unsigned long long)off_of(b, METER_OFF_RUNQ),
	     (unsigned long long)off_of(b, METER_OFF_BLOCKED),
	     (unsigned long long)burn_on,
	     (unsigned long long)p->no_current);
	/* 2 s of wall time at 1 kHz; the waits and the start around them */
	ok(p->samples >= 1900, "wall: about 2 s of samples at 1 kHz (%llu)",
	   (unsigned long long)p->samples);
	ws = p->samples ? (double)off_of(w, METER_OFF_BLOCKED) /
			  (double)p->samples : 0;
	bs = p->samples ? (double)burn_on / (double)p->samples : 0;
	ok(within(ws, 0.5, 3),
	   "wall: wait_io is 50%% +- 3 blocked off the CPU (%.1f%%)",
	   100 * ws);
	ok(within(bs, 0.5, 3), "wall: burn is 50%% +- 3 on the CPU (%.1f%%)",
	   100 * bs);
	ok(on_of(w) * 100 <= p->samples,
	   "wall: wait_io is barely on the CPU (%llu samples)",
	   (unsigned long long)on_of(w));
	ok(stack_state(p, "main;wait_io", 1 + METER_OFF_BLOCKED) ==
	   off_of(w, METER_OFF_BLOCKED),
	   "wall: the blocked samples of wait_io are the stack main;wait_io, "
	   "blocked");
	ok(b && off_of(b, METER_OFF_BLOCKED) * 100 <= b->self_samples,
	   "wall: burn's spin is barely blocked (%llu samples)",
	   (unsigned long long)off_of(b, METER_OFF_BLOCKED));
	ok(p->samples_off[METER_OFF_BLOCKED] >=
	   off_of(w, METER_OFF_BLOCKED), "wall: the session's blocked "
	   "samples hold wait_io's");
	meter_profile_free(p);
}

static void cpu_sees_burn_alone(void)
{
	char arg[16], out[256];
	const char *args[] = { "wall", arg, NULL };
	const struct meter_func *w, *s;
	struct meter_profile *p;
	uint64_t charged;

	snprintf(arg, sizeof(arg), "%d", MS);
	p = run_kernel_env("lib_workload_manual", args, out, sizeof(out),
			   "cpu", "METER_CLOCK=cpu");
	if (!p) {
		ok(0, "cpu: session read back");
		return;
	}
	w = func_named(p, "wait_io");
	s = func_named(p, "spin");
	/*
	 * Shares of the samples charged to a function: start-up and exit
	 * have none current, and a debug kernel stretches them (33 of 1063
	 * there).
	 */
	charged = p->samples - p->no_current;
	diag("cpu: samples %llu, %llu charged; wait_io self %llu; spin self %llu",
	     (unsigned long long)p->samples, (unsigned long long)charged,
	     (unsigned long long)(w ? w->self_samples : 0),
	     (unsigned long long)(s ? s->self_samples : 0));
	ok(!p->wall && !p->samples_off[0] && !p->samples_off[1],
	   "cpu: a CPU-time session, nothing off the CPU");
	ok(s && charged && s->self_samples * 100 >= charged * 95,
	   "cpu: burn's spin has >= 95%% of the samples charged to a function");
	/* what it spends on the CPU setting up and ending its wait */
	ok(!w || w->self_samples * 100 <= charged * 3,
	   "cpu: wait_io has <= 3%% of them (the 3 points above)");
	meter_profile_free(p);
}

static void blocked_on_a_lock(void)
{
	const char *args[] = { "mutex", "500", NULL };
	const struct meter_func *wl, *h;
	struct meter_profile *p;
	char out[256];
	uint64_t blocked;

	p = run_kernel_env("lib_workload_manual", args, out, sizeof(out),
			   "mutex", "METER_CLOCK=wall");
	if (!p) {
		ok(0, "mutex: session read back");
		return;
	}
	wl = func_named(p, "wait_lock");
	h = func_named(p, "spin");
	blocked = off_of(wl, METER_OFF_BLOCKED);
	diag("mutex: samples %llu; wait_lock self %llu (blocked %llu, runq "
	     "%llu); the holder's spin on CPU %llu; threads %zu",
	     (unsigned long long)p->samples,
	     (unsigned long long)(wl ? wl->self_samples : 0),
	     (unsigned long long)blocked,
	     (unsigned long long)off_of(wl, METER_OFF_RUNQ),
	     (unsigned long long)on_of(h), p->nthreads);
	/* 500 ms of waiting at 1 kHz */
	ok(blocked >= 450,
	   "mutex: the waiter's wait_lock is charged the wait, blocked (%llu)",
	   (unsigned long long)blocked);
	ok(wl && on_of(wl) * 10 <= wl->self_samples,
	   "mutex: wait_lock is <= 10%% on the CPU");
	ok(on_of(h) >= 450, "mutex: the holder's spin is on the CPU (%llu)",
	   (unsigned long long)on_of(h));
	ok(stack_state(p, "holder;spin", METER_STATE_ONCPU) > 0,
	   "mutex: the holder thread's stack holder;spin, on the CPU");
	meter_profile_free(p);
}

static void bad_clock_refused(void)
{
	struct meter_nl_reg reg = { 0 };
	struct meter_nl *nl = NULL;
	char err[256] = "";
	void *page;
	int rc;

	page = aligned_alloc(4096, 4096);
	memset(page, 0, 4096);
	((uint32_t *)page)[0] = METER_PAGE_MAGIC;
	((uint32_t *)page)[1] = METER_PAGE_VERSION;
	if (meter_nl_open(&nl, err, sizeof(err))) {
		ok(0, "bad clock: netlink open (%s)", err);
		free(page);
		return;
	}
	reg.page_addr = (uintptr_t)page;
	reg.clock = __METER_CLOCK_MAX;
	rc = meter_nl_register(nl, &reg, NULL, NULL, err, sizeof(err));
	ok(rc == -EINVAL || rc == -ERANGE,
	   "bad clock: REGISTER with clock %d is refused (%d: %s)",
	   __METER_CLOCK_MAX, rc, err);
	meter_nl_close(nl);
	free(page);
}

int main(void)
{
	wall_half_and_half();
	cpu_sees_burn_alone();
	blocked_on_a_lock();
	bad_clock_refused();
	scratch_cleanup();
	return tap_done();
}
