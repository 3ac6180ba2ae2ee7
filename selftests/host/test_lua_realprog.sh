#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Lua programs we did not write, from Debian's packages, profiled by meter
# (signal backend), against a reference count of the same run: a counting
# hook on every coroutine counts call and tail-call events
# (selftests/host/data/lua/refcount.lua).  Every Lua function of the
# package has the same count in both.
#   ldoc:   lua-ldoc documenting Penlight's sources (lua-penlight)
#   dkjson: lua-dkjson encoding and decoding a document of 2,000 records
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
LUA=/usr/bin/lua5.4
PY=/usr/bin/python3
Q="$PY $ROOT/selftests/host/py_profile.py"
DATA=$ROOT/selftests/host/data/lua
LIB=/usr/share/lua/5.4

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_lua_realprog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..2"

# name, package directory, then the program: each run writes to its own
# fresh directory (ldoc takes another path when its output exists)
both() {
	local name=$1 dir=$2
	shift 2
	mkdir -p "$tmp/ref" "$tmp/meter"
	(cd "$tmp/ref" && "$LUA" "$DATA/refcount.lua" "$tmp/$name.counts" "$@") \
		> /dev/null 2>&1 &&
	(cd "$tmp/meter" && METER_QUIET=1 "$RUN" -b signal -f json \
		-o "$tmp/$name.json" -- "$LUA" "$@") > /dev/null 2>&1 &&
	$Q refcount "$tmp/$name.json" "$tmp/$name.counts" "$dir" > "$tmp/$name.cmp"
	local st=$?
	sed 's/^/# /' "$tmp/$name.cmp"
	return $st
}

ready() { [ -x "$LUA" ] && [ -x "$PY" ] && [ -f "$ROOT/build/lua/meter.so" ]; }

if ready && [ -x /usr/bin/ldoc ] && [ -d "$LIB/pl" ]; then
	check "ldoc documenting Penlight: every Lua function's calls equal the reference" \
		both ldoc "$LIB" /usr/bin/ldoc -d out "$LIB/pl"
else
	skip "ldoc documenting Penlight" "lua-ldoc, lua-penlight or build/lua missing"
fi
if ready && [ -f "$LIB/dkjson.lua" ]; then
	check "dkjson encoding and decoding 2,000 records: calls equal the reference" \
		both dkjson "$LIB" "$DATA/json.lua"
else
	skip "dkjson encoding and decoding" "lua-dkjson or build/lua missing"
fi

exit $((fails > 0))
