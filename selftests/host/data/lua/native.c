// SPDX-License-Identifier: MIT
/*
 * meter_native: a Lua C module built with meter's GCC plugin, for the
 * mixed Lua and native stacks of test_lua_counts: call_back(f, n) calls
 * f n times through run_callback; native_spin(n) burns CPU in C.
 */
#include <lauxlib.h>
#include <lua.h>

static __attribute__((noinline)) void run_callback(lua_State *L)
{
	lua_pushvalue(L, 1);
	lua_call(L, 0, 0);
}

static int call_back(lua_State *L)
{
	lua_Integer i, n = luaL_checkinteger(L, 2);

	luaL_checktype(L, 1, LUA_TFUNCTION);
	for (i = 0; i < n; i++)
		run_callback(L);
	return 0;
}

static __attribute__((noinline)) unsigned long spin_loop(long n)
{
	volatile unsigned long s = 0;
	long i;

	for (i = 0; i < n; i++)
		s += (unsigned long)i;
	return s;
}

static int native_spin(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)spin_loop(luaL_checkinteger(L, 1)));
	return 1;
}

int luaopen_meter_native(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "call_back", call_back },
		{ "native_spin", native_spin },
		{ NULL, NULL },
	};

	luaL_newlib(L, fns);
	return 1;
}
