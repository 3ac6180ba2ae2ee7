// SPDX-License-Identifier: MIT
/*
 * Interrupts are never held off for long by the module: with the largest
 * stack table the module allows (stack_entries=2^20: 2^21 slots, 48 MiB;
 * stack_frames=2^24: 64 MiB), a session's table growing to keep a
 * thousand stacks, then full PROFILE_GET dumps and resets of it, never
 * hold the session's raw lock (interrupts off) for more than HOLD_MAX_US,
 * as the kernel's lock statistics measure it (/proc/lock_stat,
 * holdtime-max of the lock's class).  Growth moves at most 1024 slots
 * and copies at most 4096 frames per hold, as a dump does; a reset swaps
 * a pointer (design.md); scanning 2^21 slots under one hold takes
 * hundreds of milliseconds here.  The irqsoff tracer's
 * longest section over the same time, the whole kernel's, is reported
 * beside it, with kmemleak's scanner paused; should it be meter's (calls
 * of meter.ko's outside the tick in its function trace), it too must be
 * under HOLD_MAX_US.
 *
 * Needs CONFIG_LOCK_STAT and the irqsoff tracer (make check-debug's
 * kernel): skipped where the kernel lacks either.  Reloads meter.ko with the largest tables, then with
 * its defaults again.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "kmod_util.h"

#define TR		"/sys/kernel/tracing/"
#define HOLD_MAX_US	20000	/* 20 ms: far above one piece, far below a scan */
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

static int has_irqsoff(void)
{
	char buf[512] = "";
	FILE *f = fopen(TR "available_tracers", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strstr(buf, "irqsoff") != NULL;
}

/*
 * holdtime-max, in us, of the session lock's class: the line is "name:
 * con-bounces contentions waittime-min -max -total -avg acq-bounces
 * acquisitions holdtime-min holdtime-max ..."; -1 if not there.
 */
static double lock_hold_max_us(long *acquisitions)
{
	char line[512];
	FILE *f = fopen("/proc/lock_stat", "r");
	double v[12], max = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "meter_session_lock:");

		if (!p || sscanf(p + strlen("meter_session_lock:"),
				 "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf",
				 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
				 &v[6], &v[7], &v[8], &v[9]) != 10)
			continue;
		*acquisitions = (long)v[7];
		max = v[9];
		break;
	}
	fclose(f);
	return max;
}

/* The trace's "started at" and "ended at" lines, for the diagnostics. */
/*
 * Where the tracer's longest section started and ended, and how many of
 * the calls in it (the tracer's function trace: "callee <-caller") are
 * meter.ko's, the tick's left out: an interrupt that ran the tick is held
 * long only when the host stops the vCPU, not by meter.  The tick is what
 * meter.ko runs in hard-IRQ context (the line's context flag 'h', or 'H'
 * inside a softirq); meter.ko's code in process context (a dump, a
 * reset, a grow moving entries) still counts.
 */
static bool tr_in_hardirq(const char *line)
{
	char who[64], flags[32];
	const char *f = flags;

	/* "comm-pid  CPUflags ...": flags after the CPU number are
	 * irqs-off, need-resched, hardirq/softirq, preempt depth */
	if (sscanf(line, "%63s %31s", who, flags) != 2)
		return false;
	while (*f >= '0' && *f <= '9')
		f++;
	return strlen(f) >= 3 && strchr("hHzZ", f[2]);
}

static int tr_where(char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(TR "trace", "r");
	size_t n = 0;
	int ours = 0;

	out[0] = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '#') {
			if (!strstr(line, "meter_") || tr_in_hardirq(line) ||
			    strstr(line, "meter_sample") ||
			    strstr(line, "meter_id_ok") ||
			    strstr(line, "meter_task_sample"))
				continue;
			/* the first few, to say whose they are */
			if (ours++ < 5)
				ku_diag("in the section: %.*s",
					(int)strcspn(line, "\n"), line);
			continue;
		}
		if (!strstr(line, "started at:") && !strstr(line, "ended at:"))
			continue;
		line[strcspn(line, "\n")] = 0;
		if (n + 1 < len)
			n += snprintf(out + n, len - n, "%s ", line + 2);
	}
	fclose(f);
	return ours;
}

/*
 * One test: its set-up (the largest tables, a thousand stacks, the
 * tracers) takes minutes on the debug kernel, and what it shows is one
 * claim, that meter.ko never holds interrupts off for long.
 */
FIXTURE(largest_tables) {
	int unused;
};

FIXTURE_SETUP(largest_tables)
{
}

FIXTURE_TEARDOWN(largest_tables)
{
}

TEST_F_TIMEOUT(largest_tables, interrupts_are_never_held_off_for_long, 1800)
{
	struct meter_nl_sel sel = { 0 };
	struct meter_profile *p = NULL;
	char msg[256] = "", where[512];
	int ret = 0, ret2 = 0, i, d;
	struct meter_page *pg;
	struct meter_nl *nl;
	size_t nstacks = 0;
	long us, acq = 0;
	int ours = 0;
	double hold;

	if (geteuid() || access("/proc/lock_stat", W_OK))
		SKIP(return, "no lock statistics in this kernel (make check-debug has them)");
	/* an "ok" says both were measured */
	if (!has_irqsoff())
		SKIP(return, "no irqsoff tracer in this kernel (make check-debug has it)");
	ASSERT_EQ(0, ku_rmmod());
	ASSERT_EQ(0, ku_insmod("stack_entries=1048576 stack_frames=16777216 max_session_mb=512"))
		TH_LOG("reload meter.ko with the largest tables");

	nl = ku_open();
	pg = ku_page();
	sel.cookie = ku_register(nl, pg, 100000);
	ku_funcs(nl, 96);
	ku_write("/proc/lock_stat", "0");
	ku_write("/proc/sys/kernel/lock_stat", "1");
	/* 1024 distinct stacks of 34 frames: the table grows three times */
	for (d = 1; d <= 32; d++)
		ku_enter(pg, d);
	for (i = 0; i < 1200; i++) {
		ku_enter(pg, 33 + i % 32);
		ku_enter(pg, 65 + (i / 32) % 32);
		ku_burn(150000);
		ku_leave(pg);
		ku_leave(pg);
	}

	/*
	 * kmemleak's scan thread holds interrupts off for 12 ms and more
	 * here (KASAN, TCG): off while we measure, so that the tracer's
	 * longest section is not always the scanner's.
	 */
	ku_write(KMEMLEAK, "scan=off");
	ku_write(TR "tracing_on", "0");
	ku_write(TR "current_tracer", "irqsoff");
	ku_write(TR "tracing_max_latency", "0");
	ku_write(TR "tracing_on", "1");
	for (i = 0; i < 3 && !ret && !ret2; i++) {
		meter_profile_free(p);
		p = NULL;
		ret = meter_nl_get_profile(nl, &sel, &p, msg, sizeof(msg));
		if (p && p->nstacks > nstacks)
			nstacks = p->nstacks;
		ret2 = meter_nl_reset(nl, &sel, msg, sizeof(msg));
		ku_burn(20000000);
	}
	ku_write("/proc/sys/kernel/lock_stat", "0");
	hold = lock_hold_max_us(&acq);
	where[0] = 0;
	ku_write(TR "tracing_on", "0");
	us = ku_read_long(TR "tracing_max_latency");
	ours = tr_where(where, sizeof(where));
	ku_write(TR "current_tracer", "nop");
	ku_write(KMEMLEAK, "scan=on");

	TH_LOG("a table grown to %zu stacks, then 3 full dumps and resets of it: %s",
	       nstacks, ret || ret2 ? msg : "done");
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, ret2);
	EXPECT_LT(0, nstacks);
	TH_LOG("the irqsoff tracer's longest section meanwhile, anywhere in the kernel: %ld us, %s, with %d of meter.ko's calls outside the tick in it",
	       us, where, ours);
	EXPECT_LE(0, us) TH_LOG("tracing_max_latency unreadable");
	/* a section of meter's would be under HOLD_MAX_US */
	if (ours)
		EXPECT_GT(HOLD_MAX_US, us);
	TH_LOG("the session lock (interrupts off) was held at most %.1f us at a time over %ld holds",
	       hold, acq);
	EXPECT_LT(0, acq);
	EXPECT_LE(0, hold);
	EXPECT_GT(HOLD_MAX_US, hold);
	meter_profile_free(p);
	meter_nl_unregister(nl, NULL, 0);
	meter_nl_close(nl);

	/* back to the defaults for the tests that follow */
	for (i = 0; i < 50 && (ret = ku_rmmod()); i++)
		usleep(100000);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, ku_insmod("")) TH_LOG("reload meter.ko with its defaults");
}

TEST_HARNESS_MAIN
