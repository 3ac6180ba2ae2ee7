# SPDX-License-Identifier: MIT
#
# libmeter's VM tests (selftests/vm/test_lib_*.c, built by
# selftests/selftests.mk's pattern rule): they run the workloads of
# selftests/host/lib.mk with the kernel backend.

ifndef METER_LIB_VM_MK
METER_LIB_VM_MK := 1

-include selftests/host/lib.mk

$(patsubst selftests/vm/%.c,$(BUILD)/selftests/vm/%,$(wildcard selftests/vm/test_lib_*.c)): \
	$(LIBTEST_WORKLOADS) selftests/host/lib_run.h selftests/host/lib_backend.h selftests/vm/lib_kernel.h

# the VM runs these host tests on meter.ko (selftests/on-kernel)
$(BUILD)/selftests/vm/test_lib_counts $(BUILD)/selftests/vm/test_lib_flat $(BUILD)/selftests/vm/test_lib_fork $(BUILD)/selftests/vm/test_lib_plugin_leaves $(BUILD)/selftests/vm/test_lib_small_pages: $(BUILD)/selftests/vm/%: $(BUILD)/selftests/host/%

endif
