# SPDX-License-Identifier: MIT
# meter-run and meter-stat, their command-line helpers and the renderers
# they share.  Linked statically against libmeter-analysis.a (the profile
# model, its JSON form, the netlink client), so the tools need only libnl
# and zlib (the pprof writer's gzip) at run time, and no libmeter.

TOOLS_COMMON_SRCS := tools/cli.c tools/render_common.c \
	tools/render_flat.c tools/render_callgraph.c tools/render_metering.c \
	tools/render_json.c tools/render_folded.c tools/render_pprof.c \
	tools/render_dot.c tools/render_top.c
TOOLS_COMMON_OBJS := $(patsubst tools/%.c,$(BUILD)/tools/%.o,$(TOOLS_COMMON_SRCS))
TOOLS_HDRS := $(wildcard tools/*.h) $(ANALYSIS_HDRS)

$(BUILD)/tools/%.o: tools/%.c $(TOOLS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NL_CFLAGS) -c -o $@ $<

$(BUILD)/tools/meter-run: $(BUILD)/tools/meter-run.o $(BUILD)/tools/run_collect.o $(TOOLS_COMMON_OBJS) $(LIBMETER_ANALYSIS_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(NL_LIBS) -lz -lm $(LDLIBS)

$(BUILD)/tools/meter-stat: $(BUILD)/tools/meter-stat.o $(TOOLS_COMMON_OBJS) $(LIBMETER_ANALYSIS_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(NL_LIBS) -lz -lm $(LDLIBS)

# where an installed meter-run looks for libmeter-alloc.so (--alloc)
$(BUILD)/tools/meter-run.o: CFLAGS += -DMETER_LIBDIR='"$(LIBDIR)"'

ALL_TARGETS += $(BUILD)/tools/meter-run $(BUILD)/tools/meter-stat

# The tools' tests: their rules live with them (guarded, so a later
# inclusion from selftests/selftests.mk is harmless).
-include selftests/host/tools.mk
-include selftests/vm/tools.mk
