# SPDX-License-Identifier: MIT
#
# examples: small programs instrumented with METER_FUNCTION(), linked
# with libmeter.so (found through an $ORIGIN rpath, so they run from the
# build tree).  `make demo` profiles build/examples/split.

EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))

$(BUILD)/examples/%: examples/%.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -lmeter $(LDFLAGS)

ALL_TARGETS += $(EXAMPLES)

# wordfreq: C++ built as C++ usually is (-O2) with meter's GCC plugin,
# libmeter linked by pkg-config's recipe (the user guide's C++ example)
$(BUILD)/examples/wordfreq: examples/wordfreq.cc include/meter.h $(LIBMETER_SO) \
		$(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror $(PLUGIN_FLAGS) -o $@ $< \
		-L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' \
		-Wl,--push-state,--no-as-needed -lmeter -Wl,--pop-state

ALL_TARGETS += $(BUILD)/examples/wordfreq
