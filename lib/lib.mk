# SPDX-License-Identifier: MIT
#
# libmeter: every lib/*.c (libmeter's own files, the profile model and the
# netlink client) into build/lib/libmeter.a and build/lib/libmeter.so
# (soname libmeter.so.1, exporting only lib/libmeter.map).  libmeter itself
# is never built with -finstrument-functions.  Its thread-local variables
# use the initial-exec model: the signal handler reads them, and the inline
# fast path of METER_FUNCTION() reads meter__tls from any module.

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst lib/%.c,$(BUILD)/lib/obj/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard lib/*.h) $(wildcard include/uapi/linux/*.h)
LIB_CFLAGS := $(CFLAGS) $(NL_CFLAGS) -fPIC -ftls-model=initial-exec \
	-fno-semantic-interposition
LIB_LDLIBS := $(NL_LIBS) -lpthread -ldl

$(BUILD)/lib/obj/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

# The x86-64 thunks return with ret after being jumped to: not for a
# shadow stack (CET).  Unmarked, their object keeps libmeter, and any
# program linked with it, from claiming shadow-stack compatibility.
$(BUILD)/lib/obj/meter_thunk.o: LIB_CFLAGS += -fcf-protection=none

$(LIBMETER_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# Only the shared library interposes malloc (allocation accounting).
$(BUILD)/lib/obj/meter_alloc_so.o: lib/meter_alloc.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -DMETER_SHARED_BUILD -c -o $@ $<

LIB_SO_OBJS := $(filter-out $(BUILD)/lib/obj/meter_alloc.o,$(LIB_OBJS)) \
	$(BUILD)/lib/obj/meter_alloc_so.o

$(LIBMETER_SO).1: $(LIB_SO_OBJS) lib/libmeter.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libmeter.so.1 \
		-Wl,--version-script=lib/libmeter.map -Wl,-z,defs \
		-o $@ $(LIB_SO_OBJS) $(LDFLAGS) $(LIB_LDLIBS)

$(LIBMETER_SO): $(LIBMETER_SO).1
	ln -sf libmeter.so.1 $@

ALL_TARGETS += $(LIBMETER_A) $(LIBMETER_SO) $(LIBMETER_SO).1
