# SPDX-License-Identifier: MIT
#
# The fuzz targets' replay for make check (test_fuzz_replay): each target
# of fuzz/ linked with fuzz/replay_main.c instead of libFuzzer, built
# with gcc and AddressSanitizer and UBSan over the same code compiled
# again with them, into build/selftests/fuzz/replay_NAME.  The test runs
# them over fuzz/corpus/NAME/.  Included by fuzz/fuzz.mk, which names the
# targets and their code.

ifndef METER_FUZZ_HOST_MK
METER_FUZZ_HOST_MK := 1

FUZZ_REPLAY_DIR := $(BUILD)/selftests/fuzz
# gcc's undefined leaves out float-cast-overflow, which clang's has
FUZZ_REPLAY_CFLAGS := $(CFLAGS) $(NL_CFLAGS) -Itools \
	-fno-omit-frame-pointer -fsanitize=address,undefined \
	-fsanitize=float-cast-overflow -fno-sanitize-recover=all
FUZZ_REPLAY_OBJS := $(patsubst %.c,$(FUZZ_REPLAY_DIR)/obj/%.o,$(FUZZ_CODE_SRCS))
FUZZ_REPLAY_LIB := $(FUZZ_REPLAY_DIR)/libmeter-replay.a
FUZZ_REPLAYS := $(addprefix $(FUZZ_REPLAY_DIR)/replay_,$(FUZZ_NAMES))

$(FUZZ_REPLAY_DIR)/obj/%.o: %.c $(TOOLS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(FUZZ_REPLAY_CFLAGS) -c -o $@ $<

$(FUZZ_REPLAY_LIB): $(FUZZ_REPLAY_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_REPLAY_DIR)/replay_%: fuzz/fuzz_%.c fuzz/replay_main.c $(FUZZ_HDRS) $(FUZZ_REPLAY_LIB)
	$(CC) $(FUZZ_REPLAY_CFLAGS) -o $@ $< fuzz/replay_main.c \
		$(FUZZ_REPLAY_LIB) $(FUZZ_LIBS)

$(BUILD)/selftests/host/test_fuzz_replay: $(FUZZ_REPLAYS)

endif
