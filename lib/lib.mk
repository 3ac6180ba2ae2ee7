# SPDX-License-Identifier: MIT
#
# libmeter, the runtime linked into profiled programs: lib/*.c and the
# pieces it shares with the tools (common/: the JSON writer and the netlink
# socket) into build/lib/libmeter.a and build/lib/libmeter.so (soname
# libmeter.so.1, exporting only lib/libmeter.map).  Nothing that reads,
# merges or dumps profiles (analysis/) is in it.  libmeter itself is never
# built with -finstrument-functions.  Its thread-local variables use the
# initial-exec model: the signal handler reads them, and the inline fast
# path of METER_FUNCTION() reads meter__tls from any module.
#
# libmeter-alloc.so (lib/alloc_preload.c) is the allocation-accounting
# preload library, linked against libmeter.so.

LIB_SRCS := $(filter-out lib/alloc_preload.c,$(wildcard lib/*.c)) \
	$(wildcard common/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/lib/obj/%.o,$(notdir $(LIB_SRCS)))
LIB_HDRS := $(wildcard lib/*.h common/*.h) $(wildcard include/uapi/linux/*.h)
LIB_CFLAGS := $(filter-out -Ianalysis,$(CFLAGS)) $(NL_CFLAGS) -fPIC \
	-ftls-model=initial-exec -fno-semantic-interposition
LIB_LDLIBS := $(NL_LIBS) -lpthread -ldl
LIBMETER_ALLOC_SO := $(BUILD)/lib/libmeter-alloc.so

$(BUILD)/lib/obj/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/obj/%.o: common/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

# The x86-64 thunks return with ret after being jumped to: not for a
# shadow stack (CET).  Unmarked, their object keeps libmeter, and any
# program linked with it, from claiming shadow-stack compatibility.
$(BUILD)/lib/obj/meter_thunk.o: LIB_CFLAGS += -fcf-protection=none

# The thunks call the shadow stack's code having saved the general
# registers only (lib/meter_shadow.c).
$(BUILD)/lib/obj/meter_shadow.o: LIB_CFLAGS += -mgeneral-regs-only

# Sanitized builds (SANITIZE=..., make check-asan) leave three files out
# of AddressSanitizer; UBSan still checks them:
#  - meter_auto.c: find_cfa() looks for the instrumented function's return
#    address by reading the words of the stack above the hook, other
#    functions' frames and so their ASan red zones included: by design,
#    not an overflow;
#  - alloc_preload.c (libmeter-alloc.so's malloc) and meter_alloc.c (what
#    it calls): they run inside malloc, which ld.so and libc call before
#    the ASan runtime has mapped its shadow memory (a checked access
#    there is a SIGSEGV), and in programs that have no ASan runtime at
#    all (meter-run --alloc -- sh ...).
# meter_shadow.c stays in: ASan's checks use general registers only and
# call the runtime only to report (then the process ends), which keeps
# the rule above; so do the thunks (meter_thunk.c, assembly that ASan
# does not instrument) and the calibration stubs (meter_calibrate.c).
NO_ASAN := $(if $(findstring address,$(SANITIZE)),-fno-sanitize=address)
$(BUILD)/lib/obj/meter_auto.o $(BUILD)/lib/obj/meter_alloc.o \
$(LIBMETER_ALLOC_SO): LIB_CFLAGS += $(NO_ASAN)

# The static archive leaves libc's longjmp alone (meter_longjmp.c): in a
# program linked statically there is no libc's to jump with after it.
$(LIBMETER_A): $(filter-out %/meter_longjmp.o,$(LIB_OBJS))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBMETER_SO).1: $(LIB_OBJS) lib/libmeter.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libmeter.so.1 \
		-Wl,--version-script=lib/libmeter.map -Wl,-z,defs \
		-o $@ $(LIB_OBJS) $(LDFLAGS) $(LIB_LDLIBS)

$(LIBMETER_SO): $(LIBMETER_SO).1
	ln -sf libmeter.so.1 $@

$(LIBMETER_ALLOC_SO): lib/alloc_preload.c $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -shared -Wl,-z,defs -o $@ $< \
		-L$(BUILD)/lib $(call origin_rpath,) -lmeter -ldl $(LDFLAGS)

ALL_TARGETS += $(LIBMETER_A) $(LIBMETER_SO) $(LIBMETER_SO).1 \
	$(LIBMETER_ALLOC_SO)
