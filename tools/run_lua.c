// SPDX-License-Identifier: MIT
/*
 * A Lua 5.4 interpreter's environment, with meter's Lua module
 * (lua/meter_lua.c) started before the script: lua5.4 runs LUA_INIT_5_4
 * (else LUA_INIT) before anything else, the script, -e and -l included.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_lua.h"

/*
 * An interpreter that cannot load C modules (one linked whole without
 * exporting its API, as bench/realprogs.sh builds lua5.4) still runs its
 * script: the module's error is a warning, and only the Lua functions go
 * unprofiled.
 */
#define START "do local ok, m = pcall(require, 'meter') " \
	"if ok then m.start() else io.stderr:write('meter-run: ', " \
	"'Lua functions not profiled: this interpreter cannot load meter\\'s " \
	"Lua module (', tostring(m):gsub('%%s+', ' '), ')\\n') end end"

static bool is_lua(const char *prog)
{
	const char *b = strrchr(prog, '/');

	b = b ? b + 1 : prog;
	return !strcmp(b, "lua") || !strcmp(b, "lua5.4");
}

/* build/tools/meter-run runs from the build tree: build/lua has meter.so */
static void cpath_from_build_tree(void)
{
	char build[PATH_MAX], *cpath;
	const char *old = getenv("LUA_CPATH_5_4");

	if (!old)
		old = getenv("LUA_CPATH");
	if (cli_build_tree("lua/meter.so", build, sizeof(build)))
		return;
	/* ";;" is lua's default path */
	cpath = malloc(strlen(build) + (old ? strlen(old) : 0) + 32);
	if (!cpath)
		return;
	sprintf(cpath, "%s/lua/?.so;%s", build, old ? old : ";");
	setenv("LUA_CPATH_5_4", cpath, 1);
	free(cpath);
}

bool run_lua_env(char **argv)
{
	const char *old = getenv("LUA_INIT_5_4");
	char *init;

	if (!argv[0] || !is_lua(argv[0]))
		return false;
	if (!old)
		old = getenv("LUA_INIT");
	init = malloc(sizeof(START) + (old ? strlen(old) : 0) + 32);
	if (!init)
		return false;
	if (old && old[0] == '@')	/* a file to run */
		sprintf(init, START "; dofile([==[%s]==])", old + 1);
	else
		sprintf(init, START "; %s", old ? old : "");
	setenv("LUA_INIT_5_4", init, 1);
	free(init);
	cpath_from_build_tree();
	return true;
}
