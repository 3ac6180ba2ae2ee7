// SPDX-License-Identifier: GPL-2.0
/*
 * warn_test: a test-only module that makes the kernel log a WARNING, so
 * that the selftests can check that selftests/vm-run notices kernel splats.
 * Never installed.
 *
 *   insmod warn_test.ko               WARN_ON on load (the default)
 *   insmod warn_test.ko warn=0        loads quietly; then
 *   echo 1 > /sys/module/warn_test/parameters/trigger   warns on demand
 */
#include <linux/bug.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

static bool warn = true;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "WARN_ON when the module loads (default: yes)");

static int warn_test_trigger_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int err = kstrtobool(val, &on);

	if (err)
		return err;
	WARN_ON(on);
	return 0;
}

static const struct kernel_param_ops warn_test_trigger_ops = {
	.set = warn_test_trigger_set,
};
module_param_cb(trigger, &warn_test_trigger_ops, NULL, 0200);
MODULE_PARM_DESC(trigger, "write 1 to WARN_ON now");

static int __init warn_test_init(void)
{
	pr_info("warn_test: loaded (warn=%d)\n", warn);
	WARN_ON(warn);
	return 0;
}

static void __exit warn_test_exit(void)
{
	pr_info("warn_test: unloaded\n");
}

module_init(warn_test_init);
module_exit(warn_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("meter selftests: makes the kernel log a WARNING");
