# SPDX-License-Identifier: MIT
#
# examples: small programs instrumented with METER_FUNCTION(), linked
# with libmeter.so (found through an $ORIGIN rpath, so they run from the
# build tree).  `make demo` profiles build/examples/split.

EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))

$(BUILD)/examples/%: examples/%.c lib/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -lmeter $(LDFLAGS)

ALL_TARGETS += $(EXAMPLES)
