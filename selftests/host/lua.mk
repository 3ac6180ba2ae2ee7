# SPDX-License-Identifier: MIT
#
# The Lua tests' C parts: a Lua module built with meter's GCC plugin and
# linked with libmeter.so (selftests/host/data/lua/native.c: its frames
# join the Lua ones on the same shadow stack), and a program that embeds
# Lua and profiles it through the module's C API (embed.c, linked with
# build/lua/meter.so).

ifndef METER_LUA_HOST_MK
METER_LUA_HOST_MK := 1

ifneq ($(LUA_MOD),)
LUA_NATIVE := $(BUILD)/selftests/lua/meter_native.so
LUA_EMBED := $(BUILD)/selftests/lua/embed

$(LUA_NATIVE): selftests/host/data/lua/native.c $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) $(PLUGIN_FLAGS) -fPIC -shared -o $@ $< \
		-L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../../lib' -lmeter $(LDFLAGS)

$(LUA_EMBED): selftests/host/data/lua/embed.c lua/meter_lua.h $(LUA_MOD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) -Ilua -o $@ $< \
		-L$(BUILD)/lua -l:meter.so -Wl,-rpath,'$$ORIGIN/../../lua' \
		$(shell pkg-config --libs lua5.4) $(LDFLAGS)

$(BUILD)/selftests/host/test_lua_counts: $(LUA_NATIVE) $(LUA_EMBED) $(LUA_MOD)
$(BUILD)/selftests/vm/test_lua_kernel: $(LUA_NATIVE) $(LUA_EMBED) $(LUA_MOD)
endif

endif
