// SPDX-License-Identifier: GPL-2.0
/*
 * late_test: a test-only module that holds interrupts off on the writer's
 * CPU for as long as asked, so that a selftest can make meter's tick come
 * late on purpose (test_kmod_late).  Never installed.
 *
 *   echo 5000 > /sys/module/late_test/parameters/irqs_off_us
 *
 * spins for 5 ms in the writing thread's own context with interrupts off
 * (at most 100 ms).
 */
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

static int late_test_irqs_off_set(const char *val,
				  const struct kernel_param *kp)
{
	unsigned long flags;
	unsigned int us;
	u64 end;
	int err = kstrtouint(val, 0, &us);

	if (err)
		return err;
	if (us > 100000)
		return -EINVAL;
	local_irq_save(flags);
	end = ktime_get_ns() + (u64)us * NSEC_PER_USEC;
	while (ktime_get_ns() < end)
		cpu_relax();
	local_irq_restore(flags);
	return 0;
}

static const struct kernel_param_ops late_test_irqs_off_ops = {
	.set = late_test_irqs_off_set,
};
module_param_cb(irqs_off_us, &late_test_irqs_off_ops, NULL, 0200);
MODULE_PARM_DESC(irqs_off_us, "write N: interrupts off for N us, here");

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("meter selftests: interrupts held off on demand");
