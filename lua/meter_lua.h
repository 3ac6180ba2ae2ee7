/* SPDX-License-Identifier: MIT */
/*
 * meter for Lua 5.4: the module's C API, for a program that embeds Lua
 * (Documentation/lua.md).  meter_lua_start(L) profiles L's Lua state (its
 * main thread, L, and the coroutines they create): 1, or 0 when it was
 * already; meter_lua_stop(L) stops (1, or 0 when it was not profiled).
 * luaopen_meter is what require "meter" calls.
 */
#ifndef METER_LUA_H
#define METER_LUA_H

#include <lua.h>

int meter_lua_start(lua_State *L);
int meter_lua_stop(lua_State *L);
int luaopen_meter(lua_State *L);

#endif
