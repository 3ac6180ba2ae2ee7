// SPDX-License-Identifier: MIT
/*
 * meter for Lua 5.4 (Documentation/lua.md): every Lua function prototype
 * and every C function called is a libmeter record, entered and left by
 * Lua's call and return hooks.
 *
 * Lua's hooks say too little in three places, and meter replaces a
 * library function in each, as its own C function doing the same work:
 *  - a tail call gives LUA_HOOKTAILCALL and no return for the caller:
 *    the callee replaces the caller on the stack (both ours and libmeter's);
 *  - resuming and yielding a coroutine give no event: coroutine.resume
 *    and coroutine.wrap's function push the coroutine's frames (kept per
 *    coroutine) on the thread's shadow stack before lua_resume and take
 *    them off after, so each coroutine has its stack and a resume is not
 *    a call;
 *  - an error unwinding to a pcall gives no return for the frames it
 *    drops: pcall and xpcall put the stack back as it was when they were
 *    called.
 * Each lua_State (a coroutine) has its own stack of records here (struct
 * costack), found from the lua_State on every event.
 */
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cputime.h"
#include "meter.h"
#include "meter_lua.h"

/* ------------------------------------------------------------------ */
/* records: by prototype (source, line defined) or C function          */

/*
 * A Lua prototype is keyed by its source's text and line defined: the
 * source string's address is not enough, as a chunk that has run and been
 * collected leaves it to the next one (ldoc's lexer.lua and Penlight's
 * shared one, and one record counted both).
 */
struct rec_slot {
	const void *cfn;	/* a C function; NULL for Lua */
	char *src;		/* a Lua function's source, copied */
	int line;		/* line defined; -1 for a C function */
	size_t hash;
	meter_record_t *rec;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec_slot *recs;
static size_t recs_cap, recs_used;

static size_t key_hash(const void *cfn, const char *src, int line)
{
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */

	if (cfn)
		h = (uint64_t)(uintptr_t)cfn * 0x9e3779b97f4a7c15ULL;
	for (; src && *src; src++)
		h = (h ^ (unsigned char)*src) * 1099511628211ULL;
	h ^= (uint64_t)(uint32_t)line * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ (h >> 29));
}

static struct rec_slot *rec_find(const void *cfn, const char *src, int line,
				 size_t hash)
{
	size_t i;

	for (i = hash & (recs_cap - 1); recs[i].rec; i = (i + 1) & (recs_cap - 1))
		if (recs[i].hash == hash && recs[i].line == line &&
		    recs[i].cfn == cfn &&
		    (cfn || !strcmp(recs[i].src, src)))
			return &recs[i];
	return &recs[i];
}

static bool recs_grow(void)
{
	struct rec_slot *old = recs;
	size_t i, n = recs_cap;

	recs_cap = n ? 2 * n : 1024;
	recs = calloc(recs_cap, sizeof(*recs));
	if (!recs) {
		recs = old;
		recs_cap = n;
		return false;
	}
	for (i = 0; i < n; i++)
		if (old[i].rec)
			*rec_find(old[i].cfn, old[i].src, old[i].line,
				  old[i].hash) = old[i];
	free(old);
	return true;
}

/* The names given, so that two functions never share one (a row of the
 * reports is a name): two files called lexer.lua, say. */
static char **names;
static size_t names_cap, names_used;

static size_t name_slot(const char *name)
{
	size_t i = key_hash(NULL, name, 0) & (names_cap - 1);

	while (names[i] && strcmp(names[i], name))
		i = (i + 1) & (names_cap - 1);
	return i;
}

/* Takes name if no function has it yet; false if taken (or no memory). */
static bool name_take(const char *name)
{
	char **old = names;
	size_t i, n = names_cap;

	if ((names_used + 1) * 2 > names_cap) {
		names_cap = n ? 2 * n : 1024;
		names = calloc(names_cap, sizeof(*names));
		if (!names) {
			names = old;
			names_cap = n;
			return false;
		}
		for (i = 0; i < n; i++)
			if (old[i])
				names[name_slot(old[i])] = old[i];
		free(old);
	}
	i = name_slot(name);
	if (names[i])
		return false;
	names[i] = strdup(name);
	names_used += names[i] != NULL;
	return names[i] != NULL;
}

/* The name a C function has in package.loaded (string.format). */
static bool c_name(lua_State *L, int fidx, char *out, size_t len)
{
	bool found = false;

	fidx = lua_absindex(L, fidx);
	if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) != LUA_TTABLE) {
		lua_pop(L, 1);
		return false;
	}
	lua_pushnil(L);
	while (!found && lua_next(L, -2)) {
		if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				if (lua_type(L, -2) == LUA_TSTRING &&
				    lua_rawequal(L, -1, fidx)) {
					const char *mod = lua_tostring(L, -4);

					snprintf(out, len, "%s%s%s",
						 strcmp(mod, LUA_GNAME) ? mod : "",
						 strcmp(mod, LUA_GNAME) ? "." : "",
						 lua_tostring(L, -2));
					found = true;
					lua_pop(L, 2);
					break;
				}
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
		if (found) {
			lua_pop(L, 1);	/* the key */
			break;
		}
	}
	lua_pop(L, 1);
	return found;
}

/*
 * A new record for the function at the top of L's stack, ar filled "Sn".
 * A C function is named as the library names it (string.format); a Lua
 * function as its first caller does (Lua's debug information: a local,
 * a global, a field, a method; "function" when its first caller is C),
 * with its file's name and line, spaces made _: fib@known.lua:6,
 * main_chunk@known.lua, f@(command_line):1; with the file's path where
 * another file of that name has the name already.
 */
static void lua_name(const lua_Debug *ar, const char *where, char *name,
		     size_t len)
{
	if (*ar->what == 'm')
		snprintf(name, len, "main_chunk@%s", where);
	else
		snprintf(name, len, "%s@%s:%d",
			 ar->name ? ar->name : "function", where,
			 ar->linedefined);
}

static meter_record_t *new_record(lua_State *L, lua_Debug *ar)
{
	const char *base = strrchr(ar->short_src, '/');
	char name[512], *c;
	size_t len;
	int n;
	const char *file = NULL;
	uint32_t line = 0;

	base = base ? base + 1 : ar->short_src;
	if (*ar->what == 'C') {
		if (!c_name(L, -1, name, sizeof(name)))
			snprintf(name, sizeof(name), "%s",
				 ar->name ? ar->name : "?");
	} else {
		lua_name(ar, base, name, sizeof(name));
		/* another file of the same name: the whole path */
		if (!name_take(name)) {
			lua_name(ar, ar->short_src, name, sizeof(name));
			len = strlen(name);
			for (n = 2; !name_take(name) && n < 1000; n++)
				snprintf(name + len, sizeof(name) - len, "#%d",
					 n);
		}
		file = ar->source[0] == '@' ? ar->source + 1 : ar->short_src;
		line = ar->linedefined > 0 ? (uint32_t)ar->linedefined : 0;
	}
	/* one word, as folded stacks want: (command_line), for_iterator */
	for (c = name; *c; c++)
		if (*c == ' ')
			*c = '_';
	return meter_record_register_at(name, file, line);
}

/* the calibration's stub runs: its functions get no record */
static __thread bool calibrating;

/* The record of the function running in L (its ar from the hook). */
static meter_record_t *record_of(lua_State *L, lua_Debug *ar)
{
	meter_record_t *rec = NULL;
	const char *src = NULL;
	const void *cfn = NULL;
	struct rec_slot *s;
	size_t hash;
	int line = -1;

	if (!lua_getinfo(L, "Sf", ar))
		return NULL;
	if (*ar->what == 'C') {
		cfn = (const void *)lua_tocfunction(L, -1);
	} else {
		src = ar->source;
		line = ar->linedefined;
	}
	hash = key_hash(cfn, src, line);
	pthread_mutex_lock(&lock);
	if (recs_cap && (s = rec_find(cfn, src, line, hash))->rec) {
		rec = s->rec;
		goto out;
	}
	if (calibrating)	/* the stub's functions get no record */
		goto out;
	if ((recs_used + 1) * 2 > recs_cap && !recs_grow())
		goto out;
	lua_getinfo(L, "n", ar);
	rec = new_record(L, ar);
	s = rec_find(cfn, src, line, hash);
	if (rec && (cfn || (s->src = strdup(src)))) {
		s->cfn = cfn;
		s->line = line;
		s->hash = hash;
		s->rec = rec;
		recs_used++;
	}
out:
	pthread_mutex_unlock(&lock);
	lua_pop(L, 1);
	return rec;
}

/* ------------------------------------------------------------------ */
/* each coroutine's stack of records                                   */

struct costack {
	lua_State *L;
	meter_record_t **v;
	uint32_t n, cap;
};

static struct costack **costacks;
static size_t ncostacks, costacks_cap;
static __thread struct costack *last;

static struct costack *costack_of(lua_State *L)
{
	struct costack *cs = last, **grown;
	size_t i;

	if (cs && cs->L == L)
		return cs;
	pthread_mutex_lock(&lock);
	for (i = 0; i < ncostacks; i++)
		if (costacks[i]->L == L) {
			cs = costacks[i];
			goto out;
		}
	cs = calloc(1, sizeof(*cs));
	if (cs && ncostacks == costacks_cap) {
		costacks_cap = costacks_cap ? 2 * costacks_cap : 16;
		grown = realloc(costacks, costacks_cap * sizeof(*grown));
		if (!grown) {
			free(cs);
			cs = NULL;
			goto out;
		}
		costacks = grown;
	}
	if (cs) {
		cs->L = L;
		costacks[ncostacks++] = cs;
	}
out:
	pthread_mutex_unlock(&lock);
	last = cs;
	return cs;
}

/* A coroutine that is dead: its stack is forgotten. */
static void costack_drop(lua_State *L)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < ncostacks; i++)
		if (costacks[i]->L == L) {
			free(costacks[i]->v);
			free(costacks[i]);
			costacks[i] = costacks[--ncostacks];
			break;
		}
	pthread_mutex_unlock(&lock);
	last = NULL;
}

static void push(struct costack *cs, meter_record_t *rec)
{
	meter_record_t **v;

	if (cs->n == cs->cap) {
		v = realloc(cs->v, (cs->cap ? 2 * cs->cap : 64) * sizeof(*v));
		if (!v)
			return;
		cs->v = v;
		cs->cap = cs->cap ? 2 * cs->cap : 64;
	}
	cs->v[cs->n++] = rec;
	meter_enter(rec);
}

static void pop(struct costack *cs)
{
	if (!cs->n)
		return;	/* a frame entered before start() */
	meter_leave(cs->v[--cs->n]);
}

/* Back to depth n: frames an error unwound, or a coroutine set aside. */
static void cut(struct costack *cs, uint32_t n)
{
	if (cs->n > n) {
		meter_leave(cs->v[n]);	/* pops down to it, and it */
		cs->n = n;
	}
}

/* ------------------------------------------------------------------ */
/* the hook                                                            */

static void hook(lua_State *L, lua_Debug *ar)
{
	struct costack *cs = costack_of(L);
	meter_record_t *rec;

	if (!cs)
		return;
	switch (ar->event) {
	case LUA_HOOKTAILCALL:
		pop(cs);	/* the callee takes the caller's place */
		__attribute__((fallthrough));
	case LUA_HOOKCALL:
		rec = record_of(L, ar);
		if (rec)
			push(cs, rec);
		break;
	case LUA_HOOKRET:
		pop(cs);
		break;
	}
}

static void set_hook(lua_State *L)
{
	if (lua_gethook(L) != hook)
		lua_sethook(L, hook, LUA_MASKCALL | LUA_MASKRET, 0);
}

/* ------------------------------------------------------------------ */
/* coroutines: resume and wrap                                         */

/*
 * Resumes co with nargs arguments moved from L; returns lua_resume's
 * status, the results on co.  The coroutine's frames are on the thread's
 * shadow stack, above the resumer's, while it runs, and not counted as
 * calls again.
 */
static int resume_with_stack(lua_State *L, lua_State *co, int nargs,
			     int *nres)
{
	struct costack *cs = costack_of(co);
	uint32_t i;
	int status;

	set_hook(co);	/* made before start() */
	for (i = 0; cs && i < cs->n; i++)
		meter_resume(cs->v[i]);
	status = lua_resume(co, L, nargs, nres);
	cs = costack_of(co);
	if (status != LUA_OK && status != LUA_YIELD) {
		if (cs)
			cut(cs, 0);
		costack_drop(co);
	} else if (cs) {
		/* set aside: its frames leave the thread's stack, kept */
		if (cs->n)
			meter_leave(cs->v[0]);
		if (status == LUA_OK) {
			cs->n = 0;
			costack_drop(co);
		}
	}
	return status;
}

/* coroutine.resume, as lcorolib.c's: true and the results, or false and
 * the error */
static int co_resume(lua_State *L)
{
	lua_State *co = lua_tothread(L, 1);
	int status, nres, narg = lua_gettop(L) - 1;

	luaL_argexpected(L, co, 1, "coroutine");
	if (lua_status(co) == LUA_OK && lua_gettop(co) == 0) {
		lua_pushboolean(L, 0);
		lua_pushliteral(L, "cannot resume dead coroutine");
		return 2;
	}
	if (!lua_checkstack(co, narg)) {
		lua_pushboolean(L, 0);
		lua_pushliteral(L, "too many arguments to resume");
		return 2;
	}
	lua_xmove(L, co, narg);
	status = resume_with_stack(L, co, narg, &nres);
	if (status == LUA_OK || status == LUA_YIELD) {
		if (!lua_checkstack(L, nres + 1)) {
			lua_pop(co, nres);
			lua_pushboolean(L, 0);
			lua_pushliteral(L, "too many results to resume");
			return 2;
		}
		lua_pushboolean(L, 1);
		lua_xmove(co, L, nres);
		return nres + 1;
	}
	lua_pushboolean(L, 0);
	lua_xmove(co, L, 1);	/* the error */
	return 2;
}

/* what coroutine.wrap returns: the coroutine is its upvalue */
static int co_wrapped(lua_State *L)
{
	lua_State *co = lua_tothread(L, lua_upvalueindex(1));
	int status, nres, narg = lua_gettop(L);

	if (lua_status(co) == LUA_OK && lua_gettop(co) == 0)
		return luaL_error(L, "cannot resume dead coroutine");
	if (!lua_checkstack(co, narg))
		return luaL_error(L, "too many arguments to resume");
	lua_xmove(L, co, narg);
	status = resume_with_stack(L, co, narg, &nres);
	if (status == LUA_OK || status == LUA_YIELD) {
		if (!lua_checkstack(L, nres + 1))
			return luaL_error(L, "too many results to resume");
		lua_xmove(co, L, nres);
		return nres;
	}
	lua_xmove(co, L, 1);	/* the error, propagated */
	if (lua_type(L, -1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

static int co_wrap(lua_State *L)
{
	lua_State *co;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	co = lua_newthread(L);
	set_hook(co);
	lua_pushvalue(L, 1);
	lua_xmove(L, co, 1);
	lua_pushcclosure(L, co_wrapped, 1);
	return 1;
}

/* ------------------------------------------------------------------ */
/* pcall and xpcall                                                    */

/* after the protected call: the frames an error unwound leave */
static int finish_pcall(lua_State *L, int status, lua_KContext depth)
{
	struct costack *cs = costack_of(L);

	if (cs)
		cut(cs, (uint32_t)depth);
	if (status != LUA_OK && status != LUA_YIELD) {
		lua_pushboolean(L, 0);
		lua_pushvalue(L, -2);
		return 2;
	}
	return lua_gettop(L) - (int)(depth >> 32);
}

/* depth in the low word, the stack index of the results' start high */
static lua_KContext context(lua_State *L, int base)
{
	struct costack *cs = costack_of(L);

	return (lua_KContext)(cs ? cs->n : 0) | ((lua_KContext)base << 32);
}

static int pcall_k(lua_State *L, int status, lua_KContext ctx)
{
	return finish_pcall(L, status, ctx);
}

static int lua_meter_pcall(lua_State *L)
{
	lua_KContext ctx;
	int status;

	luaL_checkany(L, 1);
	lua_pushboolean(L, 1);	/* the first result if no errors */
	lua_insert(L, 1);
	ctx = context(L, 0);
	status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, ctx,
			    pcall_k);
	return finish_pcall(L, status, ctx);
}

static int lua_meter_xpcall(lua_State *L)
{
	int n = lua_gettop(L), status;
	lua_KContext ctx;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushboolean(L, 1);	/* first result */
	lua_pushvalue(L, 1);	/* the function */
	lua_rotate(L, 3, 2);	/* under its arguments */
	ctx = context(L, 2);
	status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, ctx, pcall_k);
	return finish_pcall(L, status, ctx);
}

/* ------------------------------------------------------------------ */
/* start and stop                                                      */

struct replaced {
	const char *table;	/* NULL: the global table */
	const char *name;
	lua_CFunction fn;
};

static const struct replaced replaced[] = {
	{ NULL, "pcall", lua_meter_pcall },
	{ NULL, "xpcall", lua_meter_xpcall },
	{ "coroutine", "resume", co_resume },
	{ "coroutine", "wrap", co_wrap },
};

/* Puts (or takes back) meter's library functions; the originals are kept
 * in the registry. */
static void replace_library(lua_State *L, bool on)
{
	size_t i;

	for (i = 0; i < sizeof(replaced) / sizeof(replaced[0]); i++) {
		const struct replaced *r = &replaced[i];

		if (r->table) {
			if (lua_getglobal(L, r->table) != LUA_TTABLE) {
				lua_pop(L, 1);
				continue;
			}
		} else {
			lua_pushglobaltable(L);
		}
		lua_pushfstring(L, "meter.%s.%s", r->table ? r->table : "_G",
				r->name);
		if (on) {
			lua_getfield(L, -2, r->name);
			lua_setfield(L, LUA_REGISTRYINDEX, lua_tostring(L, -2));
			lua_pushcfunction(L, r->fn);
			lua_setfield(L, -3, r->name);
		} else if (lua_getfield(L, LUA_REGISTRYINDEX,
					lua_tostring(L, -1)) != LUA_TNIL) {
			lua_setfield(L, -3, r->name);
		} else {
			lua_pop(L, 1);
		}
		lua_pop(L, 2);
	}
}

/*
 * What the hook adds to a Lua call, measured as libmeter measures a C
 * call (METERING's stub): an empty function called in a loop with the
 * hook in place and without, the best of CALIB_ROUNDS rounds each way
 * (about 1 ms); the stub's functions get no record, so meter_enter()
 * and meter_leave() are left out: libmeter adds its own calibrated call
 * (meter_api_call_cost).
 */
#define CALIB_CALLS	5000
#define CALIB_ROUNDS	3

static uint64_t best_loop(lua_State *L, int loop)
{
	uint64_t best = 0, t0, t;
	int i;

	for (i = 0; i <= CALIB_ROUNDS; i++) {
		lua_pushvalue(L, loop);
		lua_pushinteger(L, CALIB_CALLS);
		t0 = meter_thread_cpu_ns();
		if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
			lua_pop(L, 1);
			return 0;
		}
		t = meter_thread_cpu_ns() - t0;
		if (i && (!best || t < best))	/* the first warms up */
			best = t;
	}
	return best;
}

static uint64_t calibrate(lua_State *L)
{
	static const char stub[] =
		"local function f() end\n"
		"return function(n) for _ = 1, n do f() end end\n";
	uint64_t plain, hooked;
	int loop;

	if (luaL_loadbuffer(L, stub, sizeof(stub) - 1, "=meter calibration") ||
	    lua_pcall(L, 0, 1, 0)) {
		lua_pop(L, 1);
		return 1;
	}
	loop = lua_gettop(L);
	plain = best_loop(L, loop);
	calibrating = true;
	lua_sethook(L, hook, LUA_MASKCALL | LUA_MASKRET, 0);
	hooked = best_loop(L, loop);
	lua_sethook(L, NULL, 0, 0);
	calibrating = false;
	lua_pop(L, 1);
	if (!plain || !hooked || hooked <= plain)
		return 1;	/* below resolution; 0 would mean unknown */
	return (hooked - plain) * 1000 / CALIB_CALLS;
}

int meter_lua_start(lua_State *L)
{
	static uint64_t cost_ps;	/* once per process */
	lua_State *main_L;

	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	main_L = lua_tothread(L, -1);
	lua_pop(L, 1);
	if (lua_gethook(main_L) == hook && lua_gethook(L) == hook)
		return 0;
	if (!cost_ps)
		cost_ps = calibrate(L);
	meter_api_call_cost(cost_ps);
	set_hook(main_L);
	set_hook(L);
	replace_library(L, true);
	return 1;
}

int meter_lua_stop(lua_State *L)
{
	struct costack *cs = costack_of(L);

	if (lua_gethook(L) != hook)
		return 0;
	lua_sethook(L, NULL, 0, 0);
	replace_library(L, false);
	if (cs)
		cut(cs, 0);
	return 1;
}

static int l_start(lua_State *L)
{
	lua_pushboolean(L, meter_lua_start(L));
	return 1;
}

static int l_stop(lua_State *L)
{
	lua_pushboolean(L, meter_lua_stop(L));
	return 1;
}

static int l_backend(lua_State *L)
{
	lua_pushstring(L, meter_backend());
	return 1;
}

int luaopen_meter(lua_State *L)
{
	static const luaL_Reg fns[] = {
		{ "start", l_start },
		{ "stop", l_stop },
		{ "backend", l_backend },
		{ NULL, NULL },
	};

	luaL_newlib(L, fns);
	return 1;
}
