// SPDX-License-Identifier: MIT
/*
 * SET_PERIOD interrupts no thread that is not running: a session of 200
 * threads asleep on CPU 1 changes its period 20 times from CPU 0, and
 * CPU 1 takes fewer function-call interrupts than there are threads (one
 * IPI per thread per change, 4000, before), while the threads' next
 * ticks still come at the new period (they read it at their switch in).
 */
#include <pthread.h>
#include <stdlib.h>

#include "lib_kernel.h"
#include "kmod_util.h"
#include "nlreg.h"

#define SLEEPERS 200
#define CHANGES 20

/* CPU cpu's function-call interrupts (the CAL line), -1 if unknown. */
static long cal_interrupts(int cpu)
{
	char line[4096], *p, *end;
	long v = -1;
	FILE *f = fopen("/proc/interrupts", "r");
	int i;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "CAL:", 4))
			continue;
		p += 4;
		for (i = 0; i <= cpu; i++) {
			v = strtol(p, &end, 10);
			if (end == p)
				v = -1;
			p = end;
		}
		break;
	}
	fclose(f);
	return v;
}

static int ready_w, stop_r;

static void *sleeper(void *arg)
{
	struct meter_nl_reg reg = { .period_ns = 10000000 };
	struct meter_nl *nl = ku_open();
	uint64_t cookie = 0, eff = 0;
	char c = 1, err[256] = "";

	(void)arg;
	ku_pin_cpu(1);
	reg.page_addr = (uintptr_t)ku_page();
	if (meter_nl_register(nl, &reg, &cookie, &eff, err, sizeof(err)))
		c = 0;
	meter_nl_close(nl);
	if (write(ready_w, &c, 1) != 1)
		return NULL;
	while (read(stop_r, &c, 1) > 0)
		;
	return NULL;
}

TEST(set_period_interrupts_no_sleeping_thread)
{
	int ready[2], stop[2], i, ok = 0;
	struct meter_nl_reg reg = { .period_ns = 10000000 };
	struct meter_nl *nl = ku_open();
	pthread_t th[SLEEPERS];
	uint64_t cookie, eff;
	long before, after;
	char c, err[256] = "";

	ASSERT_EQ(ku_param_get("cpu_timer"), 1);
	ASSERT_EQ(pipe(ready), 0);
	ASSERT_EQ(pipe(stop), 0);
	ready_w = ready[1];
	stop_r = stop[0];
	ku_pin_cpu(0);
	reg.page_addr = (uintptr_t)ku_page();
	ASSERT_EQ(meter_nl_register(nl, &reg, &cookie, &eff, err, sizeof(err)),
		  0) TH_LOG("%s", err);
	for (i = 0; i < SLEEPERS; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, sleeper, NULL), 0);
	for (i = 0; i < SLEEPERS && read(ready[0], &c, 1) == 1; i++)
		ok += c;
	ASSERT_EQ(ok, SLEEPERS);
	usleep(100000);	/* all asleep in read() */
	before = cal_interrupts(1);
	for (i = 0; i < CHANGES; i++)
		ASSERT_EQ(meter_nl_set_period(nl, i % 2 ? 10000000 : 5000000,
					      err, sizeof(err)), 0)
			TH_LOG("%s", err);
	after = cal_interrupts(1);
	ku_diag("CPU 1 took %ld function-call interrupts over %d SET_PERIODs of %d sleeping threads",
		after - before, CHANGES, SLEEPERS);
	fflush(stdout);
	ASSERT_GE(before, 0) TH_LOG("no CAL line in /proc/interrupts");
	EXPECT_LT(after - before, SLEEPERS);
	close(stop[1]);
	for (i = 0; i < SLEEPERS; i++)
		pthread_join(th[i], NULL);
	meter_nl_close(nl);
}

TEST_HARNESS_MAIN
