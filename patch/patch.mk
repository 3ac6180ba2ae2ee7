# SPDX-License-Identifier: MIT
#
# Load-time patching (patch/, Documentation/patching.md): so far the plan,
# build/patch/libmeter-patch.a: an object's functions (ELF symbols or
# .eh_frame) and which entries can be patched, decoded with Capstone
# (libcapstone-dev).  Only its tests link it until meter-run --patch does.

PATCH_SRCS := $(wildcard patch/*.c)
PATCH_OBJS := $(patsubst patch/%.c,$(BUILD)/patch/obj/%.o,$(PATCH_SRCS))
PATCH_HDRS := $(wildcard patch/*.h)
PATCH_CFLAGS := $(shell pkg-config --cflags capstone 2>/dev/null)
PATCH_LIBS := $(shell pkg-config --libs capstone 2>/dev/null || echo -lcapstone)
LIBMETER_PATCH_A := $(BUILD)/patch/libmeter-patch.a

$(BUILD)/patch/obj/%.o: patch/%.c $(PATCH_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PATCH_CFLAGS) -c -o $@ $<

$(LIBMETER_PATCH_A): $(PATCH_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The plan's test: the library, and a program of corner cases built the
# way a user builds (-O2 -g, no meter flags) for it to read.
$(BUILD)/selftests/host/test_patch_plan: selftests/host/test_patch_plan.c \
		$(LIBMETER_PATCH_A) $(BUILD)/selftests/host/patch_corners | $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(KSFT_CFLAGS) -Ipatch -Iselftests -o $@ $< \
		$(LIBMETER_PATCH_A) $(PATCH_LIBS)

$(BUILD)/selftests/host/patch_corners: selftests/host/patch_corners.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -o $@ $<
