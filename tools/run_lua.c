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

#include "run_lua.h"

#define START "require('meter').start()"

static bool is_lua(const char *prog)
{
	const char *b = strrchr(prog, '/');

	b = b ? b + 1 : prog;
	return !strcmp(b, "lua") || !strcmp(b, "lua5.4");
}

/* build/tools/meter-run runs from the build tree: build/lua has meter.so */
static void cpath_from_build_tree(void)
{
	char exe[PATH_MAX], mod[PATH_MAX + 32], *slash, *cpath;
	const char *old = getenv("LUA_CPATH_5_4");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (!old)
		old = getenv("LUA_CPATH");
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (!slash || strcmp(slash, "/tools"))
		return;
	*slash = '\0';
	snprintf(mod, sizeof(mod), "%s/lua/meter.so", exe);
	if (access(mod, R_OK))
		return;
	/* ";;" is lua's default path */
	cpath = malloc(strlen(exe) + (old ? strlen(old) : 0) + 32);
	if (!cpath)
		return;
	sprintf(cpath, "%s/lua/?.so;%s", exe, old ? old : ";");
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
