# SPDX-License-Identifier: MIT
#
# The VM's instruction counter (selftests/icount/plugin.c): a QEMU plugin
# built against the installed QEMU's own qemu-plugin.h (fetched from
# Debian's source package by scripts/qemu-plugin-header, into build/), and
# vm-icount, the guest command that reads it (static: the VM has only what
# vm-run copies in).

ICOUNT_PLUGIN := $(BUILD)/icount/icount.so
ICOUNT_GUEST := $(BUILD)/icount/vm-icount

$(BUILD)/icount/include/qemu-plugin.h: scripts/qemu-plugin-header
	scripts/qemu-plugin-header $(dir $@)

$(ICOUNT_PLUGIN): selftests/icount/plugin.c $(BUILD)/icount/include/qemu-plugin.h
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -shared -fPIC \
		-I$(BUILD)/icount/include -o $@ $<

$(ICOUNT_GUEST): selftests/icount/vm-icount.c selftests/icount/icount.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

.PHONY: icount
icount: $(ICOUNT_PLUGIN) $(ICOUNT_GUEST)

# The counter's own test, run in the VM by selftests/host/test_vm_icount.
$(BUILD)/icount/exact: selftests/icount/exact.c selftests/icount/icount.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

$(BUILD)/selftests/host/test_vm_icount: $(ICOUNT_PLUGIN) $(ICOUNT_GUEST) \
	$(BUILD)/icount/exact
