/* SPDX-License-Identifier: MIT */
#ifndef RUN_LUA_H
#define RUN_LUA_H

#include <stdbool.h>

/*
 * meter-run's way into a Lua 5.4 program (Documentation/lua.md): when
 * PROG is lua5.4 (or lua), LUA_INIT_5_4 starts meter before the script
 * (after whatever LUA_INIT_5_4 or LUA_INIT said to run), and
 * LUA_CPATH_5_4 is led by the build tree's lua/ directory when meter-run
 * runs from the build tree.  Called in the child, before the exec; false
 * when PROG is not Lua.
 */
bool run_lua_env(char **argv);

#endif
