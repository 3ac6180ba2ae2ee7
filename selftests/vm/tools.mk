# SPDX-License-Identifier: MIT
#
# The tools' VM tests (selftests/vm/test_tools_*.sh, copied by
# selftests/selftests.mk's pattern rule): they run meter-run and meter-stat
# on Appel's program, built by selftests/host/tools.mk.

ifndef METER_TOOLS_VM_MK
METER_TOOLS_VM_MK := 1

-include selftests/host/tools.mk

$(patsubst selftests/vm/%.sh,$(BUILD)/selftests/vm/%,$(wildcard selftests/vm/test_tools_*.sh)): $(TOOLS_TEST_DEPS)

# the VM runs the host's test_tools_byaddr on meter.ko (selftests/on-kernel)
$(BUILD)/selftests/vm/test_tools_byaddr: $(BUILD)/selftests/host/test_tools_byaddr

endif
