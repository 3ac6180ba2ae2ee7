# SPDX-License-Identifier: MIT
#
# The analysis library, build/analysis/libmeter-analysis.a: the profile
# model, its JSON reader, merging, the netlink sessions and dumps, the
# report's rows and the instrumentation correction (analysis/*.c), with the
# pieces shared with libmeter (common/*.c).  The tools and the tests link
# it; a profiled process never does.

ANALYSIS_SRCS := $(wildcard analysis/*.c) $(wildcard common/*.c)
ANALYSIS_OBJS := $(patsubst %.c,$(BUILD)/analysis/obj/%.o,$(notdir $(ANALYSIS_SRCS)))
ANALYSIS_HDRS := $(wildcard analysis/*.h common/*.h) \
	$(wildcard include/uapi/linux/*.h)

$(BUILD)/analysis/obj/%.o: analysis/%.c $(ANALYSIS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NL_CFLAGS) -c -o $@ $<

$(BUILD)/analysis/obj/%.o: common/%.c $(ANALYSIS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NL_CFLAGS) -c -o $@ $<

$(LIBMETER_ANALYSIS_A): $(ANALYSIS_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

ALL_TARGETS += $(LIBMETER_ANALYSIS_A)
