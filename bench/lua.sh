#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/lua.sh: meter's Lua module against a debug.sethook profiler
# written the usual way (bench/lua_hookprof.lua: a count and os.clock()
# per call and return), on Debian's lua5.4.  Instructions from callgrind:
# per call, a loop of N and 2N calls of an empty function, the difference
# over N; whole runs of ldoc documenting Penlight and dkjson on 2,000
# records (test_lua_realprog's programs), overhead over the plain run.
# meter with METER_BACKEND=off: sampling does not touch the call path.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${BENCH_LUA_OUT:-$ROOT/build/bench/lua}
LUA=/usr/bin/lua5.4
mkdir -p "$OUT"
[ -f build/lua/meter.so ] || make -s all
cat > "$OUT/calls.lua" <<'LUA'
local function f() end
local n = tonumber(arg[1])
for _ = 1, n do f() end
LUA

insns() { # tool, then the script and its arguments
	local t=$1 env=(METER_UNUSED=1)
	shift
	case $t in
	meter) env=(METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null
		    "LUA_CPATH_5_4=$ROOT/build/lua/?.so;;"
		    "LUA_INIT_5_4=require('meter').start()") ;;
	hook) set -- "$ROOT/bench/lua_hookprof.lua" "$@" ;;
	esac
	(cd "$OUT" && rm -rf docs && env "${env[@]}" valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null "$LUA" "$@" 2>&1 > /dev/null |
		awk '/Collected/ { print $4 }')
}

echo "Lua, per call (callgrind, instructions; over the plain call):"
for t in plain meter hook; do
	a=$(insns $t "$OUT/calls.lua" 100000)
	b=$(insns $t "$OUT/calls.lua" 200000)
	per=$(( (b - a) / 100000 ))
	[ $t = plain ] && base=$per
	printf '  %-6s %6d instr  %6d over plain\n' $t $per $((per - base))
done
echo "Lua, whole run (callgrind, instructions; overhead over the plain run):"
for p in ldoc dkjson; do
	case $p in
	ldoc) args=(/usr/bin/ldoc -q -d docs /usr/share/lua/5.4/pl) ;;
	dkjson) args=("$ROOT/selftests/host/data/lua/json.lua") ;;
	esac
	plain=$(insns plain "${args[@]}")
	for t in meter hook; do
		n=$(insns $t "${args[@]}")
		awk -v p=$p -v t=$t -v n="$n" -v b="$plain" \
			'BEGIN { printf "  %-7s %-6s %6.1f %%\n", p, t, 100 * (n / b - 1) }'
	done
done
