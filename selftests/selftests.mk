# SPDX-License-Identifier: MIT
#
# selftests: generic rules for test executables, included by the top
# Makefile.  A test is one of
#   selftests/host/test_NAME.c   -> build/selftests/host/test_NAME  (HOST_TESTS)
#   selftests/vm/test_NAME.c     -> build/selftests/vm/test_NAME    (VM_TESTS)
#   selftests/host/test_NAME.sh  -> build/selftests/host/test_NAME  (copied)
#   selftests/vm/test_NAME.sh    -> build/selftests/vm/test_NAME    (copied)
# A C test is compiled with CFLAGS, NL_CFLAGS and -Iselftests, and linked
# with libmeter.a, libnl and -lpthread -lm.  A fragment that needs another
# recipe writes an explicit rule for its target (it wins over these
# pattern rules).  Every test prints TAP; see selftests/run-tests.

SELFTEST_LDLIBS := $(LIBMETER_ANALYSIS_A) $(LIBMETER_A) $(ANALYSIS_LIBS) -lpthread -lm

SELFTEST_HOST_C := $(wildcard selftests/host/test_*.c)
SELFTEST_HOST_SH := $(wildcard selftests/host/test_*.sh)
SELFTEST_VM_C := $(wildcard selftests/vm/test_*.c)
SELFTEST_VM_SH := $(wildcard selftests/vm/test_*.sh)

HOST_TESTS += $(patsubst selftests/host/%.c,$(BUILD)/selftests/host/%,$(SELFTEST_HOST_C)) \
	$(patsubst selftests/host/%.sh,$(BUILD)/selftests/host/%,$(SELFTEST_HOST_SH))
VM_TESTS += $(patsubst selftests/vm/%.c,$(BUILD)/selftests/vm/%,$(SELFTEST_VM_C)) \
	$(patsubst selftests/vm/%.sh,$(BUILD)/selftests/vm/%,$(SELFTEST_VM_SH))

# The kernel's kselftest_harness.h, from Debian's linux-source-6.1 at build
# time (scripts/kselftest-headers); a system include, since the header is
# not -Wextra clean (unused parameters in its macros).
KSFT_DIR := $(BUILD)/kselftest
KSFT_HARNESS := $(KSFT_DIR)/kselftest_harness.h
KSFT_CFLAGS := -isystem $(KSFT_DIR)
$(KSFT_HARNESS):
	scripts/kselftest-headers $(KSFT_DIR)

$(BUILD)/selftests/host/%: selftests/host/%.c $(LIBMETER_ANALYSIS_A) $(LIBMETER_A) | $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NL_CFLAGS) $(KSFT_CFLAGS) -Iselftests -o $@ $< $(LDFLAGS) $(SELFTEST_LDLIBS)

$(BUILD)/selftests/vm/%: selftests/vm/%.c $(LIBMETER_ANALYSIS_A) $(LIBMETER_A) | $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NL_CFLAGS) $(KSFT_CFLAGS) -Iselftests -o $@ $< $(LDFLAGS) $(SELFTEST_LDLIBS)

# the VM tests' shared headers (lib_kernel.h's are in selftests/vm/lib.mk)
$(patsubst selftests/vm/%.c,$(BUILD)/selftests/vm/%,$(SELFTEST_VM_C)): \
	selftests/vm/kmod_util.h selftests/vm/raw_genl.h

$(BUILD)/selftests/host/%: selftests/host/%.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

$(BUILD)/selftests/vm/%: selftests/vm/%.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

# The host test of vm-run needs the warn_test module for the first test
# kernel (selftests/kernels); make check builds it for every test kernel.
.PHONY: selftests
selftests: $(HOST_TESTS) $(VM_TESTS) $(BUILD)/selftests/vm-perf-hold

# Started by vm-run's init (see the file); static, so it needs no libraries.
ALL_TARGETS += $(BUILD)/selftests/vm-perf-hold
$(BUILD)/selftests/vm-perf-hold: selftests/vm-perf-hold.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<

# Rules that tests keep beside them (selftests/host/*.mk, selftests/vm/*.mk;
# they guard against a second inclusion).
-include $(wildcard selftests/host/*.mk selftests/vm/*.mk)
