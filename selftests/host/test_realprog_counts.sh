#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Exact call counts on real programs from Debian's sources (bzip2 and
# lua5.4, fetched with apt-get source and built by bench/realprogs.sh):
# built with meter's GCC plugin and with gcc -pg in one binary (no
# inlining, so that mcount sees every call), run once, every function that
# gprof's call graph lists has the same number of calls in meter's profile
# (recursive calls included: gprof's "N+M").  The Lua run raises and
# catches errors (longjmp) and recurses; bzip2 compresses and decompresses
# about 1 MB.  Then the builds people make, Debian's flags with inlining
# on: bzip2's plugin build writes what its plain build writes, takes the
# slow path for the thread's first call only (its inlined functions push
# themselves on the fast path), and counts every function it instruments
# exactly as the build without inlining does, inlined or not.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
. "$ROOT/selftests/tools_lib.sh" || exit 1
. "$ROOT/bench/realprogs.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_realprog_counts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
DIR=$ROOT/build/realprogs
TAB=$(printf '\t')

gprof_calls() { # gprof -q output -> "name<TAB>calls", recursive calls included
	awk '/^\[[0-9]+\]/ {
		if ($0 ~ /<cycle [0-9]+ as a whole>/) next
		line = $0; sub(/ \[[0-9]+\]$/, "", line); sub(/ <cycle [0-9]+>$/, "", line)
		n = split(line, f, /[ \t]+/)
		if (n < 6 || f[5] !~ /^[0-9]+(\+[0-9]+)?$/) next
		m = split(f[5], c, "+"); calls = c[1] + (m > 1 ? c[2] : 0)
		name = f[6]; for (i = 7; i <= n; i++) name = name " " f[i]
		print name "\t" calls
	}' "$1" | sort -t "$TAB" -k1,1
}
meter_calls() { # profile -> "name<TAB>calls"
	"$STAT" -i "$1" -f flat | flat_rows /dev/stdin |
		awk 'NF >= 7 { name = $7; for (i = 8; i <= NF; i++) name = name " " $i;
			       print name "\t" $4 }' | sort -t "$TAB" -k1,1
}

if ! realprogs_build "$DIR" bzip2 lua > "$tmp/build.log" 2>&1; then
	nok "bzip2 and lua5.4 from apt-get source build with the plugin and -pg"
	tail -n 20 "$tmp/build.log" | diag
	echo "1..$n"
	exit 1
fi
ok "bzip2 and lua5.4 from apt-get source build with the plugin and -pg"

for prog in bzip2 lua; do
	bin=$DIR/$prog/plugin-pg/$prog
	# gmon.out goes to the working directory
	mkdir -p "$tmp/$prog"
	mapfile -t args <<< "$(realprogs_args $prog "$DIR" 1)"
	(cd "$tmp/$prog" && METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/$prog/m.json" \
		"$bin" "${args[@]}" > /dev/null)
	if [ ! -s "$tmp/$prog/gmon.out" ] || [ ! -s "$tmp/$prog/m.json" ]; then
		nok "$prog: the run wrote gmon.out and meter's profile"
		continue
	fi
	gprof -b -q "$bin" "$tmp/$prog/gmon.out" > "$tmp/$prog/gprof" 2>&1
	gprof_calls "$tmp/$prog/gprof" > "$tmp/$prog/g.tab"
	meter_calls "$tmp/$prog/m.json" > "$tmp/$prog/m.tab"
	join -t "$TAB" -a 1 -e MISSING -o 0,1.2,2.2 "$tmp/$prog/g.tab" "$tmp/$prog/m.tab" |
		awk -F "$TAB" '$2 != $3' > "$tmp/$prog/diff"
	listed=$(wc -l < "$tmp/$prog/g.tab")
	recursive=$(grep -cE '^\[[0-9]+\].* [0-9]+\+[0-9]+ ' "$tmp/$prog/gprof")
	if [ "$listed" -ge 30 ] && [ ! -s "$tmp/$prog/diff" ]; then
		ok "$prog: all $listed functions gprof lists have gprof's exact call counts ($recursive with recursive calls)"
	else
		nok "$prog: meter's call counts equal gprof's ($listed listed, $(wc -l < "$tmp/$prog/diff") differ)"
		head -n 20 "$tmp/$prog/diff" | diag
	fi
done

# bzip2 as Debian builds it: the plugin build against the plain build and
# against the build without inlining (the same work: bzip2 seeds nothing)
prog=bzip2
mapfile -t args <<< "$(realprogs_args $prog "$DIR" 1)"
"$DIR/$prog/plain/$prog" "${args[@]}" > "$tmp/plain.bz2"
METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/o2.json" \
	"$DIR/$prog/plugin/$prog" "${args[@]}" > "$tmp/plugin.bz2"
METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/ni.json" \
	"$DIR/$prog/plugin-ni/$prog" "${args[@]}" > /dev/null
check "bzip2 (Debian's flags): the plugin build's output is the plain build's" \
	cmp -s "$tmp/plain.bz2" "$tmp/plugin.bz2"
slow=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("slow_entries", 0))' "$tmp/o2.json")
check "bzip2 (Debian's flags): one slow-path entry, the thread's first call ($slow)" \
	test "$slow" = 1
# the functions the -O2 build instruments, their counts in both builds
meter_calls "$tmp/o2.json" | awk -F "$TAB" '$2 != ""' > "$tmp/o2.tab"
meter_calls "$tmp/ni.json" > "$tmp/ni.tab"
join -t "$TAB" -a 1 -e MISSING -o 0,1.2,2.2 "$tmp/o2.tab" "$tmp/ni.tab" |
	awk -F "$TAB" '$2 != $3' > "$tmp/o2.diff"
inlined=$(comm -23 <(cut -f1 "$tmp/o2.tab") \
	<(nm "$DIR/$prog/plugin/$prog" | awk '$2 ~ /^[tT]$/ { print $3 }' | sed 's/\..*//' | sort -u) | wc -l)
if [ "$(wc -l < "$tmp/o2.tab")" -ge 30 ] && [ "$inlined" -ge 5 ] && [ ! -s "$tmp/o2.diff" ]; then
	ok "bzip2 (Debian's flags): all $(wc -l < "$tmp/o2.tab") functions counted as without inlining ($inlined of them inlined everywhere)"
else
	nok "bzip2 (Debian's flags): counts equal the build without inlining's ($(wc -l < "$tmp/o2.diff") differ, $inlined inlined)"
	head -n 20 "$tmp/o2.diff" | diag
fi

# lua5.4 linked whole, its API not exported (C modules cannot load):
# meter-run's Lua module fails to load, the script runs on, says why,
# and the C functions are profiled
prog=lua
mapfile -t args <<< "$(realprogs_args $prog "$DIR" 1)"
"$DIR/$prog/plain/$prog" "${args[@]}" > "$tmp/lua.plain"
METER_QUIET=1 "$ROOT/build/tools/meter-run" -b signal -f json -o "$tmp/lua.json" \
	-- "$DIR/$prog/plugin/$prog" "${args[@]}" > "$tmp/lua.out" 2> "$tmp/lua.err"
execs=$(python3 -c 'import json, sys
print(sum(f["calls"] for f in json.load(open(sys.argv[1]))["functions"]
          if f["name"] == "luaV_execute"))' "$tmp/lua.json" 2> /dev/null)
check "lua5.4 that cannot load C modules, under meter-run: the script's output, a warning why Lua functions are not profiled, its C functions counted (luaV_execute ${execs:-none})" \
	bash -c "cmp -s '$tmp/lua.plain' '$tmp/lua.out' &&
		 grep -q 'Lua functions not profiled: this interpreter cannot load meter.s Lua module (.*undefined symbol' '$tmp/lua.err' &&
		 [ '${execs:-0}' -gt 0 ]" || diag "$tmp/lua.err"

echo "1..$n"
[ $fails = 0 ]
