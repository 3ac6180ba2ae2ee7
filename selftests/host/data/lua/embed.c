// SPDX-License-Identifier: MIT
/*
 * A C program that embeds Lua and profiles its state through the Lua
 * module's C API (test_lua_counts): meter_lua_start(L) before running a
 * chunk, meter_lua_stop(L) after.
 */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>

#include "meter_lua.h"

static const char chunk[] =
	"local function sq(x) return x * x end\n"
	"local s = 0\n"
	"for i = 1, 12 do s = s + sq(i) end\n"
	"return s\n";

int main(void)
{
	lua_State *L = luaL_newstate();
	int started, ret;

	luaL_openlibs(L);
	started = meter_lua_start(L);
	ret = luaL_loadbuffer(L, chunk, sizeof(chunk) - 1, "=embedded") ||
	      lua_pcall(L, 0, 1, 0);
	printf("started %d, result %lld, stopped %d\n", started,
	       (long long)lua_tointeger(L, -1), meter_lua_stop(L));
	lua_close(L);
	return ret;
}
