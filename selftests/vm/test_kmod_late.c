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

int main(void)
{
	uint64_t cookie, t0, s0, f0, cpu0, cpu;
	const char *root = getenv("METER_ROOT"), *kver = getenv("METER_KVER");
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	bool exact = getenv("METER_VM_ICOUNT") != NULL;
	char cmd[512];
	int ret;

	if (!root || !kver) {
		printf("1..0 # SKIP not in the VM (METER_ROOT, METER_KVER)\n");
		return 4;
	}
	snprintf(cmd, sizeof(cmd),
		 "insmod %s/build/kernel/%s/selftests/warn_mod/late_test.ko",
		 root, kver);
	if (system(cmd)) {
		printf("1..0 # SKIP late_test.ko did not load\n");
		return 4;
	}
	ku_plan(3);
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
	cpu = ku_thread_cpu_ns() - cpu0;
	ku_leave(pg);
	if (ret)
		ku_bail("irqs_off_us", ret, "late_test.ko");

	p = ku_profile(nl, cookie, 0);
	ku_diag("%.2f ms of CPU with interrupts off: %llu ticks, %llu samples, %llu to function 2",
		cpu / 1e6, (unsigned long long)(p->ticks - t0),
		(unsigned long long)(p->samples - s0),
		(unsigned long long)(ku_self(p, 2) - f0));
	ku_ok(cpu >= IRQS_OFF_US * 1000ull,
	      "the thread spent %.2f ms of its own CPU time with interrupts off",
	      cpu / 1e6);
	/*
	 * Every tick on time weighs one period; the late one weighs the 50
	 * that passed: the samples exceed the interrupts by its overrun
	 * (the reads of the profile around it take on-time ticks too).
	 */
	ku_ok(p->samples - s0 >= p->ticks - t0 + 45,
	      "a late interrupt weighs the periods that passed: %llu samples for %llu interrupts",
	      (unsigned long long)(p->samples - s0),
	      (unsigned long long)(p->ticks - t0));
	/*
	 * At most its own time's periods where no other tick comes late (the
	 * deterministic clock, as test_vm_icount runs this test); under the
	 * host-timed clock a tick taken just after entry may bring periods
	 * overrun before it.
	 */
	ku_ok(ku_self(p, 2) - f0 >= 45 &&
	      (!exact || ku_self(p, 2) - f0 <= cpu / PERIOD_NS + 1),
	      "they are charged to the function current when it came: %llu samples for its %.2f ms%s",
	      (unsigned long long)(ku_self(p, 2) - f0), cpu / 1e6,
	      exact ? " (no more: deterministic clock)" : "");
	meter_profile_free(p);
	meter_nl_close(nl);
	if (system("rmmod late_test"))
		ku_diag("rmmod late_test failed");
	return ku_exit();
}
