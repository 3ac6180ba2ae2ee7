# SPDX-License-Identifier: MIT
#
# lua: meter's Lua 5.4 module (Documentation/lua.md), build/lua/meter.so,
# found by lua5.4's require "meter" through LUA_CPATH_5_4 (meter-run sets
# it from the build tree) and, installed, in $(LUA_CMOD) on lua5.4's
# default path.  It links libmeter.so, not liblua (the interpreter or the
# program that embeds Lua has it).

LUA_PC := $(shell pkg-config --exists lua5.4 2>/dev/null && echo lua5.4)

ifneq ($(LUA_PC),)
LUA_CFLAGS := $(shell pkg-config --cflags lua5.4)
LUA_MOD := $(BUILD)/lua/meter.so
LUA_CMOD ?= $(PREFIX)/lib/lua/5.4

$(LUA_MOD): lua/meter_lua.c lua/meter_lua.h include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) -Ilua -fPIC -shared -o $@ lua/meter_lua.c \
		-L$(BUILD)/lib $(call origin_rpath,/../lib) -lmeter -lpthread $(LDFLAGS)

ALL_TARGETS += $(LUA_MOD)

.PHONY: install-lua uninstall-lua
install-lua: $(LUA_MOD)
	$(INSTALL) -d $(DESTDIR)$(LUA_CMOD)
	$(INSTALL) -m 755 $(LUA_MOD) $(DESTDIR)$(LUA_CMOD)/meter.so

uninstall-lua:
	rm -f $(DESTDIR)$(LUA_CMOD)/meter.so
	-rmdir $(DESTDIR)$(LUA_CMOD) $(DESTDIR)$(PREFIX)/lib/lua 2>/dev/null
else
.PHONY: install-lua uninstall-lua
install-lua uninstall-lua:
	@echo "lua: no lua5.4 headers (liblua5.4-dev): the Lua module is not built"
endif
