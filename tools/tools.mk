# SPDX-License-Identifier: MIT
# meter-run and meter-stat, and the analysis and renderers they share.
# Linked statically against libmeter.a (the profile model, its JSON form
# and the netlink client), so the tools need only libnl and zlib (the
# pprof writer's gzip) at run time.

TOOLS_COMMON_SRCS := tools/analysis.c tools/cli.c tools/render_common.c \
	tools/render_flat.c tools/render_callgraph.c tools/render_metering.c \
	tools/render_json.c tools/render_folded.c tools/render_pprof.c \
	tools/render_dot.c tools/correct.c
TOOLS_COMMON_OBJS := $(patsubst tools/%.c,$(BUILD)/tools/%.o,$(TOOLS_COMMON_SRCS))
TOOLS_HDRS := $(wildcard tools/*.h) lib/profile.h lib/nlclient.h \
	include/uapi/linux/meter.h

$(BUILD)/tools/%.o: tools/%.c $(TOOLS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NL_CFLAGS) -c -o $@ $<

$(BUILD)/tools/meter-run: $(BUILD)/tools/meter-run.o $(TOOLS_COMMON_OBJS) $(LIBMETER_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(NL_LIBS) -lz -lm $(LDLIBS)

$(BUILD)/tools/meter-stat: $(BUILD)/tools/meter-stat.o $(TOOLS_COMMON_OBJS) $(LIBMETER_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(NL_LIBS) -lz -lm $(LDLIBS)

ALL_TARGETS += $(BUILD)/tools/meter-run $(BUILD)/tools/meter-stat

# The tools' tests: their rules live with them (guarded, so a later
# inclusion from selftests/selftests.mk is harmless).
-include selftests/host/tools.mk
-include selftests/vm/tools.mk
