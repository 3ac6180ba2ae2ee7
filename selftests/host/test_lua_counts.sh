#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Lua 5.4 scripts under meter (lua/, Documentation/lua.md), on the signal
# backend (selftests/vm/test_lua_kernel runs it in the VM on the kernel
# backend): a script with known counts gives them exactly (recursion, a
# tail-call loop 1000 deep, coroutines resumed, errors caught by pcall and
# xpcall five frames down, callbacks from table.sort and string.gsub,
# metamethods), its stacks are each coroutine's own and hold no frame an
# error unwound, records carry file and line; a coroutine made before
# meter starts, start and stop from require "meter", os.exit, a program
# that embeds Lua (the module's C API), and a Lua C module built with
# meter's plugin in mixed stacks.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
LUA=/usr/bin/lua5.4
PY=/usr/bin/python3
DATA=$ROOT/selftests/host/data/lua
Q="$PY $ROOT/selftests/host/py_profile.py"
BACKEND=${METER_LUA_BACKEND:-signal}
NATIVE=$ROOT/build/selftests/lua

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_lua_counts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..13"

if [ ! -x "$LUA" ] || [ ! -f "$ROOT/build/lua/meter.so" ] || [ ! -x "$PY" ]; then
	for i in $(seq 13); do skip "lua test $i" "no $LUA, $PY or build/lua (liblua5.4-dev)"; done
	exit 0
fi

run() { run_json "$1" "$LUA" "${@:2}"; } # out.json, then the script and its arguments

K=known.lua
run "$tmp/k.json" "$DATA/known.lua"
check "known counts: fib 1973, a tail-call loop 1001, a coroutine 1 however often resumed, fail 25 through pcall and xpcall, spin 3" \
	want_calls "$tmp/k.json" "fib@$K:6=1973" "countdown@$K:11=1001" \
		"function@$K:16=1" "function@$K:20=25" error=5 pcall=3 xpcall=2 \
		"spin@$K:25=3" "function@$K:31=1" "main@$K:44=1" \
		coroutine.resume=6 coroutine.yield=5

check "callbacks from C and metamethods: table.sort's comparator 7, gsub's function 3, __add 2" \
	want_calls "$tmp/k.json" "function@$K:36=7" "function@$K:58=3" \
		"add@$K:41=2" table.sort=1 string.gsub=1

$Q tails "$tmp/k.json" "spin@$K:25" 9 | awk '{ print $1 }' | sort -u > "$tmp/tails"
check "each spin under its own caller: main, the coroutine (under resume), the wrapped function; no frame an error unwound" \
	bash -c "[ \$(grep -c . '$tmp/tails') = 3 ] &&
		 grep -q 'main@$K:44;spin@$K:25\$' '$tmp/tails' &&
		 grep -q 'main@$K:44;coroutine.resume;function@$K:31;spin@$K:25\$' '$tmp/tails' &&
		 grep -q 'main@$K:44;w;function@$K:53;spin@$K:25\$' '$tmp/tails' &&
		 ! grep -q 'function@$K:20\|error\|pcall' '$tmp/tails'" || diag "$tmp/tails"

check "records carry file and line: fib at known.lua:6" \
	bash -c "[ \"\$($Q source '$tmp/k.json' 'fib@$K:6')\" = '$DATA/known.lua:6' ]"

check "Lua records carry their calibrated call cost, above a C call's (the header's)" \
	$PY - "$tmp/k.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
fib = [f for f in p["functions"] if f["name"] == "fib@known.lua:6"][0]
assert fib.get("cost_ps", 0) > p["call_cost_ps"] > 0, (fib, p["call_cost_ps"])
assert not [f for f in p["functions"] if "calibration" in f["name"]]
PY

LUA_CPATH_5_4="$ROOT/build/lua/?.so;;" METER_BACKEND=signal METER_QUIET=1 \
	METER_OUTPUT=$tmp/late.json "$LUA" "$DATA/late.lua" > "$tmp/late.out" 2>&1
st=$?
check "require \"meter\": start and stop say whether they changed anything; a coroutine made before start counts after it (tick 3)" \
	bash -c "[ $st = 0 ] && $(declare -f want_calls); Q='$Q'; want_calls '$tmp/late.json' 'tick@late.lua:6=3'" ||
	diag "$tmp/late.out"

run "$tmp/exit.json" -e 'local function f() end f() f() os.exit(3)'
st=$?
check "os.exit(3): status 3 and a profile with f's 2 calls" \
	bash -c "[ $st = 3 ] && $(declare -f want_calls); Q='$Q'; want_calls '$tmp/exit.json' 'f@(command_line):1=2'"

run "$tmp/err.json" -e 'local function f() error("uncaught") end f()'
st=$?
check "an uncaught error: status 1, the message, and a profile" \
	bash -c "[ $st = 1 ] && grep -q uncaught '$tmp/stderr' &&
		 $(declare -f want_calls); Q='$Q'; want_calls '$tmp/err.json' 'f@(command_line):1=1'"

run "$tmp/coerr.json" -e '
local function boom() error("in the coroutine") end
local function body() boom() end
local function after() local s = 0 for i = 1, 2000000 do s = s + i end end
local co = coroutine.create(body)
print(coroutine.resume(co))
after()'
$Q tails "$tmp/coerr.json" "after@(command_line):4" 9 | awk '{ print $1 }' | sort -u > "$tmp/coerr.tails"
check "an error that kills a coroutine leaves none of its frames: after() is under the main chunk only" \
	bash -c "[ \"\$(cat '$tmp/coerr.tails')\" = 'main_chunk@(command_line);after@(command_line):4' ]" ||
	diag "$tmp/coerr.tails"

METER_QUIET=1 "$RUN" -b "$BACKEND" -f json -o "$tmp/embed.json" -- \
	"$NATIVE/embed" > "$tmp/embed.out" 2>&1
check "a program that embeds Lua: meter_lua_start(L) profiles its chunk (sq 12 calls)" \
	bash -c "grep -qx 'started 1, result 650, stopped 1' '$tmp/embed.out' &&
		 $(declare -f want_calls); Q='$Q'; want_calls '$tmp/embed.json' 'sq@embedded:1=12'" ||
	diag "$tmp/embed.out"

for f in folded html; do
	LUA_CPATH_5_4="$NATIVE/?.so;;" METER_QUIET=1 "$RUN" -b "$BACKEND" -f $f \
		-o "$tmp/mixed.$f" -- "$LUA" "$DATA/mixed.lua" > /dev/null 2>&1
done
M=mixed.lua
# the C function as Lua calls it (meter_native.call_back), then its native
# record from the plugin (call_back), then the callback
check "mixed stacks, folded: Lua, the plugin-built module, Lua again; and a native leaf" \
	bash -c "grep -q 'main@$M:14;meter_native.call_back;call_back;function@$M:12;spin@$M:6 [0-9]*\$' '$tmp/mixed.folded' &&
		 grep -q 'main@$M:14;meter_native.native_spin;spin_loop [0-9]*\$' '$tmp/mixed.folded'" ||
	grep spin "$tmp/mixed.folded" | sed 's/^/# /'
check "mixed stacks, HTML: the page holds the native and the Lua frames" \
	bash -c "grep -q '\"call_back\"' '$tmp/mixed.html' && grep -q '\"function@$M:12\"' '$tmp/mixed.html'"

PATH=$ROOT/build/tools:$PATH METER_QUIET=1 "$RUN" -b "$BACKEND" -f flat -- \
	"$LUA" -e 'local function g() end for i = 1, 4 do g() end' > "$tmp/flat" 2>&1
check "the flat profile lists where each Lua function is defined" \
	grep -q '^  g@(command_line):1  (command line):1$' "$tmp/flat" || diag "$tmp/flat"

exit $((fails > 0))
