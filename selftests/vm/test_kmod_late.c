// SPDX-License-Identifier: MIT
/*
 * What a late interrupt does to a profile: the thread holds interrupts off
 * for 5 ms (late_test.ko, in its own context, inside function 2) while
 * sampled at 10 kHz.  The tick's timer then fires once for the 50 periods
 * that passed; meter.ko counts one tick and weighs it 50 periods of CPU
 * time, all charged to the function current when the interrupt is taken.
 */
#include <fcntl.h>

#include "kmod_util.h"

#define PERIOD_NS	100000		/* 10 kHz */
#define IRQS_OFF_US	5000		/* 50 periods */

static int hold_irqs_off(unsigned int us)
{
	char buf[32];
	int fd = open("/sys/module/late_test/parameters/irqs_off_us", O_WRONLY);
	int n = snprintf(buf, sizeof(buf), "%u", us);
	int ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, buf, n) == n;
	close(fd);
	return ok ? 0 : -EIO;
}

FIXTURE(late) {
	uint64_t cpu;		/* ns of CPU with interrupts off */
	uint64_t ticks, samples, charged;	/* over that time */
	bool exact, loaded;
};

FIXTURE_SETUP(late)
{
	const char *root = getenv("METER_ROOT"), *kver = getenv("METER_KVER");
	uint64_t cookie, t0, s0, f0, cpu0;
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	char cmd[512];
	int ret;

	self->loaded = false;
	if (!root || !kver)
		SKIP(return, "not in the VM (METER_ROOT, METER_KVER)");
	snprintf(cmd, sizeof(cmd),
		 "insmod %s/build/kernel/%s/selftests/warn_mod/late_test.ko",
		 root, kver);
	if (system(cmd))
		SKIP(return, "late_test.ko did not load");
	self->loaded = true;
	self->exact = getenv("METER_VM_ICOUNT") != NULL;
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, PERIOD_NS);
	ku_funcs(nl, 2);
	ku_enter(pg, 1);
	ku_burn(20000000);
	p = ku_profile(nl, cookie, 0);
	t0 = p->ticks;
	s0 = p->samples;
	f0 = ku_self(p, 2);
	meter_profile_free(p);

	ku_enter(pg, 2);
	cpu0 = ku_thread_cpu_ns();
	ret = hold_irqs_off(IRQS_OFF_US);
	self->cpu = ku_thread_cpu_ns() - cpu0;
	ku_leave(pg);
	ASSERT_EQ(0, ret) TH_LOG("late_test.ko's irqs_off_us");

	p = ku_profile(nl, cookie, 0);
	self->ticks = p->ticks - t0;
	self->samples = p->samples - s0;
	self->charged = ku_self(p, 2) - f0;
	TH_LOG("%.2f ms of CPU with interrupts off: %llu ticks, %llu samples, %llu to function 2",
	       self->cpu / 1e6, (unsigned long long)self->ticks,
	       (unsigned long long)self->samples,
	       (unsigned long long)self->charged);
	meter_profile_free(p);
	meter_nl_close(nl);
}

FIXTURE_TEARDOWN(late)
{
	if (self->loaded && system("rmmod late_test"))
		TH_LOG("rmmod late_test failed");
}

TEST_F(late, the_thread_spent_its_own_cpu_time_with_interrupts_off)
{
	if (!self->loaded)
		return;	/* skipped in the set-up */
	EXPECT_LE(IRQS_OFF_US * 1000ull, self->cpu);
}

/*
 * Every tick on time weighs one period; the late one weighs the 50 that
 * passed: the samples exceed the interrupts by its overrun (the reads of
 * the profile around it take on-time ticks too).
 */
TEST_F(late, a_late_interrupt_weighs_the_periods_that_passed)
{
	if (!self->loaded)
		return;	/* skipped in the set-up */
	EXPECT_LE(self->ticks + 45, self->samples);
}

/*
 * At most its own time's periods where no other tick comes late (the
 * deterministic clock, as test_vm_icount runs this test); under the
 * host-timed clock a tick taken just after entry may bring periods
 * overrun before it.
 */
TEST_F(late, they_are_charged_to_the_function_current_when_it_came)
{
	if (!self->loaded)
		return;	/* skipped in the set-up */
	EXPECT_LE(45, self->charged);
	if (self->exact) {
		EXPECT_GE(self->cpu / PERIOD_NS + 1, self->charged)
			TH_LOG("no more than its own periods: deterministic clock");
	}
}

TEST_HARNESS_MAIN
