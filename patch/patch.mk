# SPDX-License-Identifier: MIT
#
# Load-time patching (patch/, Documentation/patching.md), decoded with
# Capstone (libcapstone-dev, a build dependency):
#   build/patch/libmeter-patch.a   the plan: an object's functions (ELF
#                                  symbols or .eh_frame) and which entries
#                                  can be patched (test_patch_plan links it)
#   build/lib/libmeter-patch.so    what meter-run --patch preloads: the
#                                  plan, the copies, the hooks, over
#                                  libmeter.so

PATCH_PLAN_SRCS := patch/patch_elf.c patch/patch_plan.c
PATCH_OBJS := $(patsubst patch/%.c,$(BUILD)/patch/obj/%.o,$(PATCH_PLAN_SRCS))
PATCH_SO_SRCS := $(PATCH_PLAN_SRCS) patch/patch_reloc.c \
	patch/patch_runtime.c patch/patch_unwind.c patch/patch_install.c \
	patch/patch_load.c patch/patch_calib.c \
	patch/patch_hook.S
PATCH_HDRS := $(wildcard patch/*.h)
PATCH_CFLAGS := $(shell pkg-config --cflags capstone 2>/dev/null)
PATCH_LIBS := $(shell pkg-config --libs capstone 2>/dev/null || echo -lcapstone)
LIBMETER_PATCH_A := $(BUILD)/patch/libmeter-patch.a
LIBMETER_PATCH_SO := $(BUILD)/lib/libmeter-patch.so

$(LIBMETER_PATCH_SO): $(PATCH_SO_SRCS) $(PATCH_HDRS) $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) $(PATCH_CFLAGS) -shared -Wl,-z,defs -o $@ \
		$(PATCH_SO_SRCS) -L$(BUILD)/lib $(call origin_rpath,) -lmeter \
		$(PATCH_LIBS) $(LDFLAGS)

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

# The program meter-run --patch is tested on (test_patch_counts), built
# plainly; the test needs meter-run and the preload.
$(BUILD)/selftests/host/patch_workload: selftests/host/patch_workload.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -o $@ $< -lpthread

$(BUILD)/selftests/host/patch_signals: selftests/host/patch_signals.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -o $@ $<

$(BUILD)/selftests/host/patch_contexts: selftests/host/patch_contexts.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -o $@ $< -lpthread

# a program, its shared library and a plugin it dlopens, all plain
$(BUILD)/selftests/host/patch_libs: selftests/host/patch_libs.c \
		selftests/host/patch_lib.c selftests/host/patch_plugin.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -Wl,-soname,libpatchdemo.so.1 \
		-o $(dir $@)libpatchdemo.so.1 selftests/host/patch_lib.c
	ln -sf libpatchdemo.so.1 $(dir $@)libpatchdemo.so
	$(CC) -O2 -g -fPIC -shared -o $(dir $@)patch_plugin.so \
		selftests/host/patch_plugin.c
	$(CC) -O2 -g -o $@ $< -L$(dir $@) -lpatchdemo \
		-Wl,-rpath,'$$ORIGIN'

$(BUILD)/selftests/host/patch_exec: selftests/host/patch_exec.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -o $@ $<

# C++ built plainly, and its stripped copy (functions from .eh_frame)
$(BUILD)/selftests/host/patch_exceptions: selftests/host/patch_exceptions.cc
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -o $@ $<
	strip -o $@.stripped $@

$(BUILD)/selftests/host/test_patch_counts: $(BUILD)/selftests/host/patch_workload \
	$(BUILD)/selftests/host/patch_signals \
	$(BUILD)/selftests/host/patch_contexts $(BUILD)/selftests/host/patch_exec \
	$(BUILD)/selftests/host/patch_libs \
	$(BUILD)/selftests/host/patch_exceptions $(LIBMETER_PATCH_SO)

ALL_TARGETS += $(LIBMETER_PATCH_SO)

$(BUILD)/selftests/vm/test_patch_kernel: $(BUILD)/selftests/host/patch_workload \
	$(LIBMETER_PATCH_SO)

# bench/workloads.c built plainly, for the patched split on the
# deterministic clock (selftests/vm/split_shares.sh, test_vm_icount)
$(BUILD)/selftests/patch_split: bench/workloads.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -O2 -g -o $@ $< -lpthread

$(BUILD)/selftests/host/test_vm_icount: $(BUILD)/selftests/patch_split \
	$(LIBMETER_PATCH_SO)

# meter-run --pid's test (host and, with meter.ko, the VM): a plain
# long-running program
$(BUILD)/selftests/host/patch_target: selftests/host/patch_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -o $@ $<

$(BUILD)/selftests/host/test_patch_attach: $(BUILD)/selftests/host/patch_target \
	$(BUILD)/selftests/host/patch_exceptions $(LIBMETER_PATCH_SO)

$(BUILD)/selftests/vm/test_patch_attach: $(BUILD)/selftests/host/test_patch_attach
