# SPDX-License-Identifier: MIT
#
# Coverage-guided fuzzing with libFuzzer (Documentation/fuzzing.md): one
# target per reader of outside input, fuzz/fuzz_NAME.c, built with clang
# into build/fuzz/fuzz_NAME over the code it reaches (the analysis
# library and the tools' shared objects, compiled again with the fuzzer's
# coverage and the sanitizers), and run from a copy of its corpus
# fuzz/corpus/NAME/.  Not part of make or make check, which needs no
# clang: check replays the corpus through gcc builds of the same targets
# (selftests/host/fuzz.mk, test_fuzz_replay).
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_JOBS=2]    build, run each target
#   make fuzz-build                              build only

ifndef METER_FUZZ_MK
METER_FUZZ_MK := 1

FUZZ_NAMES := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60
# targets run at once; the machine has 2 cores
FUZZ_JOBS ?= 2
FUZZ_CC ?= clang
FUZZ_DIR := $(BUILD)/fuzz

# The code the targets reach: the readers, and what the tools do with
# what they read (fuzz/fuzz.h).  nldump.c, meter_calib_cache.c and the
# patch plan's two files are compiled into their targets, which call
# their static functions.
FUZZ_CODE_SRCS := $(ANALYSIS_SRCS) $(TOOLS_COMMON_SRCS) \
	$(BUILD)/tools/html_assets.c
FUZZ_HDRS := fuzz/fuzz.h fuzz/fuzz_check.h $(TOOLS_HDRS) $(LIB_HDRS) analysis/nldump.c \
	lib/meter_calib_cache.c patch/patch_elf.c patch/patch_plan.c \
	$(wildcard patch/*.h)
FUZZ_LIBS := $(ANALYSIS_LIBS) $(PATCH_LIBS) -lz -lm
# UBSan's reports end the run, as a crash does.
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := $(CFLAGS) $(NL_CFLAGS) -Itools -fno-omit-frame-pointer \
	$(FUZZ_SAN)

FUZZ_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_CODE_SRCS))
FUZZ_LIB := $(FUZZ_DIR)/libmeter-fuzz.a
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))

$(FUZZ_DIR)/obj/%.o: %.c $(TOOLS_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_DIR)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_HDRS) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) \
		$(FUZZ_LIBS)

# fuzz_nldump's seeds from JSON profiles (fuzz/nldump_seed.c); a plain
# build, not fuzzed
$(FUZZ_DIR)/nldump-seed: fuzz/nldump_seed.c $(LIBMETER_ANALYSIS_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NL_CFLAGS) -o $@ $< $(LIBMETER_ANALYSIS_A) \
		$(ANALYSIS_LIBS)

FUZZ_RUNS := $(addprefix fuzz-run-,$(FUZZ_NAMES))
.PHONY: fuzz fuzz-build $(FUZZ_RUNS)
fuzz-build: $(FUZZ_BINS)

# -k: every target runs even when one crashed, and make fails if any
# did; -Otarget: the lines of one target together.
# clang first (install-deps --fuzz), then the targets in a make that sees it
fuzz:
	@scripts/install-deps --fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@$(MAKE) --no-print-directory -k -j$(FUZZ_JOBS) -Otarget $(FUZZ_RUNS)

$(FUZZ_RUNS): fuzz-run-%: $(FUZZ_DIR)/fuzz_%
	@fuzz/run-target $* $< fuzz/corpus/$* $(FUZZ_DIR)/run/$* \
		$(FUZZ_SECONDS)

# The replay binaries of make check are built with the host tests.
include selftests/host/fuzz.mk

endif
