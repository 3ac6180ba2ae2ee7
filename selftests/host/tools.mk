# SPDX-License-Identifier: MIT
#
# The tools' host tests (selftests/host/test_tools_*): the tests are built
# by selftests/selftests.mk's pattern rules; this builds the instrumented
# program they profile, Appel's f/g/is_prime, twice (METER_FUNCTION and
# -finstrument-functions), linked statically with libmeter so that it runs
# the same on the host and in the VM, and makes the tests depend on the
# tools.

ifndef METER_TOOLS_HOST_MK
METER_TOOLS_HOST_MK := 1

TOOLS_APPEL := $(BUILD)/selftests/tools_appel
TOOLS_APPEL_AUTO := $(BUILD)/selftests/tools_appel_auto
TOOLS_APPEL_LIBS := $(LIBMETER_A) $(NL_LIBS) -lpthread -ldl

$(TOOLS_APPEL): selftests/host/tools_appel.c include/meter.h $(LIBMETER_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) $(TOOLS_APPEL_LIBS)

$(TOOLS_APPEL_AUTO): selftests/host/tools_appel.c include/meter.h $(LIBMETER_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DAPPEL_AUTO -finstrument-functions -o $@ $< \
		$(LDFLAGS) $(TOOLS_APPEL_LIBS)

# split with light() doing 4 or 8 units instead of 2: the changed builds
# that the user guide (4) and test_tools_diff (8, a change far beyond the
# noise of a thousand ticks) compare against the example
TOOLS_SPLIT_CHANGED := $(BUILD)/selftests/split_light4 \
	$(BUILD)/selftests/split_light8
$(TOOLS_SPLIT_CHANGED): $(BUILD)/selftests/split_light%: examples/split.c \
		include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSPLIT_LIGHT_UNITS=$* -o $@ $< -L$(BUILD)/lib \
		-Wl,-rpath,'$$ORIGIN/../lib' -lmeter $(LDFLAGS)

# a tiny function inlined into an instrumented one, built as people build
# (-O2 -g) with the plugin: test_tools_byaddr.  Never compiled with the
# sanitizers (make check-asan): their checks make mix() too big for the
# tiny rule, and it is the shape that is tested (their runtime comes with
# libmeter's)
TOOLS_INLINED := $(BUILD)/selftests/tools_inlined
$(TOOLS_INLINED): selftests/host/tools_inlined.c $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN_FLAGS),$(CFLAGS)) -fplugin=$(METER_PLUGIN) \
		-o $@ $< -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -lmeter \
		$(filter-out $(SAN_FLAGS),$(LDFLAGS))

# a program built as people build, not for meter, one of whose symbols
# is a GCC clone's (spin.constprop.0): test_tools_byaddr under --patch.
# Never with the sanitizers: --patch profiles what it is given as is.
TOOLS_CLONE := $(BUILD)/selftests/tools_clone $(BUILD)/selftests/tools_clone_cxx
$(BUILD)/selftests/tools_clone: selftests/host/tools_clone.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN_FLAGS),$(CFLAGS)) -o $@ $< \
		$(filter-out $(SAN_FLAGS),$(LDFLAGS))
$(BUILD)/selftests/tools_clone_cxx: selftests/host/tools_clone.c
	@mkdir -p $(dir $@)
	$(CXX) -x c++ -std=c++17 -O2 -g -Wall -Wextra -Werror -o $@ $<

TOOLS_TEST_DEPS := $(TOOLS_APPEL) $(TOOLS_APPEL_AUTO) $(TOOLS_SPLIT_CHANGED) \
	$(TOOLS_INLINED) $(TOOLS_CLONE) $(BUILD)/examples/split \
	$(BUILD)/tools/meter-run $(BUILD)/tools/meter-stat

$(patsubst selftests/host/%.sh,$(BUILD)/selftests/host/%,$(wildcard selftests/host/test_tools_*.sh)): $(TOOLS_TEST_DEPS)

ALL_TARGETS += $(TOOLS_APPEL) $(TOOLS_APPEL_AUTO) $(TOOLS_SPLIT_CHANGED) \
	$(TOOLS_INLINED) $(TOOLS_CLONE)

endif
