#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Host tests of the renderers, on fixture profiles in selftests/host/data/
# read by `meter-stat -i` (no kernel needed):
#   appel.json               Appel's example: f makes the expensive calls to
#                            is_prime, g the cheap ones, equally often
#   appel-renumbered.json    the same functions with other ids, plus h
#   recursive.json           recursion, unsorted ids, allocation, threads,
#                            non-ASCII names, a truncated stack, 64-bit
#                            cookies, ticks with no current function
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
DATA=$ROOT/selftests/host/data
APPEL=$DATA/appel.json
APPEL2=$DATA/appel-renumbered.json
REC=$DATA/recursive.json

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_render.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..47"

# --- flat profile ---------------------------------------------------------

"$STAT" -i "$APPEL" --format flat > "$tmp/flat" 2> "$tmp/err"
flat_rows "$tmp/flat" > "$tmp/rows"

check "flat: % time column adds up to 100" \
	awk '{ s += $1 } END { exit !(s > 99.9 && s < 100.1) }' "$tmp/rows"
check "flat: cumulative seconds never decrease and end at the total (1.050 s)" \
	awk '$2 + 0 < last - 1e-9 { bad = 1 } { last = $2 + 0 }
	     END { exit bad || last != 1.05 }' "$tmp/rows"
check "flat: self seconds add up to the cumulative total" \
	awk '{ s += $3 } END { exit !(s > 1.049 && s < 1.051) }' "$tmp/rows"
check "flat: call counts are the recorded ones, exactly" \
	awk '$NF == "is_prime" && $4 == 200 { a++ } $NF == "f" && $4 == 100 { a++ }
	     $NF == "g" && $4 == 100 { a++ } $NF == "main" && $4 == 1 { a++ }
	     END { exit a != 4 }' "$tmp/rows"
check "flat: ordered by self time, is_prime first at 95.24%" \
	awk 'NR == 1 { exit !($NF == "is_prime" && $1 == "95.24") }' "$tmp/rows"
check "flat: states the sample period and the sample count" \
	grep -q "1050 samples at a period of 1 ms" "$tmp/flat"
check "flat: ms/call columns are self and total seconds over calls (f: 0.2000, 9.2000)" \
	awk '$NF == "f" { exit !($5 == "0.2000" && $6 == "9.2000") }' "$tmp/rows"

"$STAT" -i "$REC" --format flat > "$tmp/flat2"
flat_rows "$tmp/flat2" > "$tmp/rows2"
check "flat: ticks with no current function are a row, so % still adds up to 100" \
	awk '/<no current function>/ { seen = 1 } { s += $1 }
	     END { exit !(seen && s > 99.9 && s < 100.1) }' "$tmp/rows2"

"$STAT" -i "$APPEL" --format flat --threshold 5 > "$tmp/thr"
check "flat: --threshold 5 leaves out the functions below 5%" \
	bash -c "flat_rows() { awk '/^ *time +seconds/ { on = 1; next } on && NF == 0 { exit } on { print }' \"\$1\"; };
		 [ \"\$(flat_rows $tmp/thr | awk '{ print \$NF }')\" = is_prime ] &&
		 grep -q '3 functions below 5% not shown' $tmp/thr"

"$STAT" -i "$APPEL" --format flat --order name > "$tmp/byname"
check "flat: --order name sorts by name" \
	test "$(flat_rows "$tmp/byname" | awk '{ printf "%s ", $NF }')" = "f g is_prime main "

"$STAT" -i "$REC" --format flat --threads > "$tmp/threads"
check "flat --threads: a table of each thread's samples (tid 100: 60, tid 101: 40, exited)" \
	bash -c "grep -Eq '^ +100 +60 +60\.00% .* running\$' $tmp/threads &&
		 grep -Eq '^ +101 +40 +40\.00% .* exited\$' $tmp/threads"

# --- call graph -------------------------------------------------------------

"$STAT" -i "$APPEL" --format callgraph > "$tmp/cg"
# The entry of is_prime: its caller lines come right before its [N] line.
awk '/^ -+$/ { blk = ""; next } { blk = blk $0 "\n" }
     /^ \[[0-9]+\].* is_prime$/ { print blk; exit }' "$tmp/cg" > "$tmp/isprime"
check "callgraph: Appel's example charges 90% of is_prime to f (expensive calls), not half" \
	grep -Eq '^ +f \[[0-9]+\] +90\.0% +0\.900 s$' "$tmp/isprime"
check "callgraph: ... and 10% to g (cheap calls, as many)" \
	grep -Eq '^ +g \[[0-9]+\] +10\.0% +0\.100 s$' "$tmp/isprime"
check "callgraph: every function has an [N] label, main is [1] (topological)" \
	grep -Eq '^ \[1\] +1\.050 100\.0% +0\.010 +1\.0% +1  main$' "$tmp/cg"

"$STAT" -i "$REC" --format callgraph > "$tmp/cgrec"
check "callgraph: recursion is marked and fib appears as its own caller" \
	bash -c "grep -Eq '^ \[[0-9]+\].* fib <recursive>$' $tmp/cgrec &&
		 grep -Eq '^ +fib \[[0-9]+\] +31\.2%' $tmp/cgrec"

"$STAT" -i "$APPEL" --format callgraph --hide-self 5 --hide-subs 50 > "$tmp/hide"
check "callgraph: --hide-self 5 --hide-subs 50 hides g (small self, small edges) and keeps f" \
	bash -c "! grep -Eq '^ \[[0-9]+\].*  g$' $tmp/hide &&
		 grep -Eq '^ \[[0-9]+\].*  f$' $tmp/hide &&
		 grep -q '1 function hidden' $tmp/hide"

# Caller lines (above an [N] line) of every entry must add up to 100%.
callers_sum_100() { # call graph report
	awk '/^ -+$/ { s = 0; have = 0; after = 0; next }
	     /^ \[[0-9]+\]/ { if (have && (s < 99.85 || s > 100.15)) bad = 1; n++; after = 1; next }
	     /%/ && !after { v = $0; sub(/%.*/, "", v); sub(/.* /, "", v); s += v; have = 1 }
	     END { exit bad || n < 3 }' "$1"
}
check "callgraph: each function's caller shares add up to 100% (appel)" callers_sum_100 "$tmp/cg"
check "callgraph: ... also under recursion, each sample split 1/k (recursive)" callers_sum_100 "$tmp/cgrec"

"$STAT" -i "$APPEL" --format flat --order total > "$tmp/bytotal"
"$STAT" -i "$APPEL" --format flat --order calls > "$tmp/bycalls"
check "flat: --order total puts main first, --order calls is_prime (200 calls)" \
	bash -c "[ \"\$(awk '/^ *time +seconds/ { getline; print \$NF; exit }' $tmp/bytotal)\" = main ] &&
		 [ \"\$(awk '/^ *time +seconds/ { getline; print \$NF; exit }' $tmp/bycalls)\" = is_prime ]"

# --- METERING table -----------------------------------------------------

"$STAT" -i "$APPEL" --format metering > "$tmp/met"
check "metering: TOTAL line has the sum of the calls (401) and of the times (1.05 s)" \
	grep -Eq '^TOTAL: +401 +1\.050000$' "$tmp/met"
check "metering: estimated overhead line is calls x call cost (401 x 1.5 ns)" \
	grep -q 'Estimated total monitoring overhead: 0.000001 seconds (401 calls x 1.500 ns)' "$tmp/met"
"$STAT" -i "$APPEL" --format metering --inclusive > "$tmp/meti"
check "metering: --inclusive charges f with its callees (0.920000 s, 87.62%)" \
	grep -Eq '^f: +87\.62 +100 +0\.009200 +0\.920000$' "$tmp/meti"
"$STAT" -i "$REC" --format metering > "$tmp/metrec"
check "metering: allocation columns appear when recorded (naïve_ж: 4096 bytes)" \
	grep -Eq '^naïve_ж: .* 4096$' "$tmp/metrec"

# --- JSON -------------------------------------------------------------------

"$STAT" -i "$APPEL" --format json > "$tmp/appel.json"
check "json: appel.json round-trips through meter-stat -i byte-identically" \
	cmp -s "$APPEL" "$tmp/appel.json"
"$STAT" -i "$REC" --format json > "$tmp/rec.json"
check "json: recursive.json (64-bit cookies, escapes, UTF-8, truncated stack, threads) round-trips byte-identically" \
	cmp -s "$REC" "$tmp/rec.json"

# --- folded -------------------------------------------------------------------

"$STAT" -i "$REC" --format folded > "$tmp/folded"
check "folded: every line matches root;...;leaf COUNT" \
	bash -c "[ -s $tmp/folded ] && ! grep -Evq '^[^ ;]+(;[^ ;]+)* [0-9]+\$' $tmp/folded"
want=$(awk '/"frames"/ { sub(/.*"samples": /, ""); s += $0 + 0 } END { print s }' "$REC")
got=$(awk '{ s += $NF } END { print s }' "$tmp/folded")
check "folded: counts add up to the stacks' samples ($want)" test "$got" = "$want"
"$STAT" -i "$APPEL" --format folded > "$tmp/folded2"
check "folded: Appel's stacks, root first" grep -qx 'main;f;is_prime 900' "$tmp/folded2"
check "folded: a truncated stack starts with [truncated]" \
	grep -qx '\[truncated\];main;fib;naïve_ж 15' "$tmp/folded"
printf '%s\n' '{"format": "meter-profile", "version": 1, "period_ns": 1000, "samples": 3,' \
	'"functions": [{"id": 1, "name": "operator new;x y", "self_samples": 3}],' \
	'"stacks": [{"frames": [1], "samples": 3}]}' > "$tmp/names.json"
check "folded: spaces and semicolons in names become _" \
	bash -c "'$STAT' -i $tmp/names.json -f folded | grep -qx 'operator_new_x_y 3'"

# --- pprof --------------------------------------------------------------------

"$STAT" -i "$APPEL" --format pprof -o "$tmp/appel.pb.gz"
check "pprof: output is gzip with a valid CRC (gzip -t)" gzip -t "$tmp/appel.pb.gz"
check "pprof: the message is compressed ($(stat -c %s "$tmp/appel.pb.gz") bytes for $(gzip -dc "$tmp/appel.pb.gz" | wc -c))" \
	test "$(stat -c %s "$tmp/appel.pb.gz")" -lt "$(gzip -dc "$tmp/appel.pb.gz" | wc -c)"
if command -v go > /dev/null 2>&1; then
	go_pprof -sample_index=samples -top "$tmp/appel.pb.gz" \
		> "$tmp/top" 2> "$tmp/top.err"
	check "pprof: go tool pprof -top lists is_prime 1000, f 20, g 20, main 10 samples" \
		awk '$NF == "is_prime" && $1 == 1000 { a++ } $NF == "f" && $1 == 20 { a++ }
		     $NF == "g" && $1 == 20 { a++ } $NF == "main" && $1 == 10 && $4 == 1050 { a++ }
		     END { exit a != 4 }' "$tmp/top" || { diag "$tmp/top"; diag "$tmp/top.err"; }
	go_pprof -sample_index=calls -nodefraction=0 -top "$tmp/appel.pb.gz" \
		> "$tmp/calls" 2> "$tmp/calls.err"
	check "pprof: the calls sample type gives the exact counts (is_prime 200, f 100, g 100, main 1), no comment lines" \
		bash -c "awk '\$NF == \"is_prime\" && \$1 == 200 { a++ } \$NF == \"f\" && \$1 == 100 { a++ }
			     \$NF == \"g\" && \$1 == 100 { a++ } \$NF == \"main\" && \$1 == 1 { a++ }
			     END { exit a != 4 }' '$tmp/calls' && ! grep -q '^calls ' '$tmp/top'" ||
		{ diag "$tmp/calls"; diag "$tmp/calls.err"; }
	"$STAT" -i "$REC" --format pprof -o "$tmp/rec.pb.gz"
	go_pprof -sample_index=samples -top "$tmp/rec.pb.gz" \
		> "$tmp/top2" 2> "$tmp/top2.err"
	check "pprof: recursion counted once in cum (fib 60 flat, 80 cum), no-current ticks and truncated stacks shown" \
		awk '$NF == "fib" && $1 == 60 && $4 == 80 { a++ } $NF == "main" && $4 == 95 { a++ }
		     /\[no current function\]$/ && $1 == 5 { a++ } /\[truncated\]$/ && $4 == 15 { a++ }
		     END { exit a != 4 }' "$tmp/top2" || { diag "$tmp/top2"; diag "$tmp/top2.err"; }
else
	skip "pprof: go tool pprof -top lists the right sample counts" "go is not installed"
	skip "pprof: the calls sample type gives the exact counts" "go is not installed"
	skip "pprof: recursion, no-current ticks and truncated stacks" "go is not installed"
fi

# --- the rate delivered -----------------------------------------------------------

# 1050 samples from 263 ticks: the signal backend on a 250 Hz scheduler tick
sed 's/"samples": 1050,/"samples": 1050, "ticks": 263,/' "$APPEL" > "$tmp/late.json"
"$STAT" -i "$tmp/late.json" --format flat > "$tmp/late" 2>&1
check "header: ticks well below the samples give the rate delivered (250 of 1000 Hz)" \
	grep -q '^1050 samples at a period of 1 ms from 263 ticks (1000 Hz asked, 250 Hz delivered): 1.050 s of CPU time' "$tmp/late" ||
	diag "$tmp/late"
"$STAT" -i "$tmp/late.json" --format html -o "$tmp/late.html" > /dev/null 2>&1
check "html: the rate fact says 250 Hz delivered of 1000 Hz asked" \
	grep -q '250 Hz delivered of 1000 Hz asked' "$tmp/late.html"
sed 's/"samples": 1050,/"samples": 1050, "ticks": 1000,/' "$APPEL" > "$tmp/ontime.json"
"$STAT" -i "$tmp/ontime.json" --format flat > "$tmp/ontime" 2>&1
check "header: ticks near the samples (a few late) give the rate asked only" \
	grep -q '^1050 samples at a period of 1 ms (1000 Hz): ' "$tmp/ontime"

# 1.05 s sampled, 0.5 s more not: the signal backend's short threads
sed 's/"samples": 1050,/"samples": 1050, "unsampled_ns": 500000000,/' "$APPEL" > "$tmp/unsampled.json"
sed 's/"samples": 1050,/"samples": 1050, "unsampled_ns": 20000000,/' "$APPEL" > "$tmp/unsampled-few.json"
"$STAT" -i "$tmp/unsampled.json" --format flat > "$tmp/unsampled" 2>&1
"$STAT" -i "$tmp/unsampled-few.json" --format flat > "$tmp/unsampled-few" 2>&1
check "header: CPU time no tick covered is said to be missing (0.5 s), a little (0.02 s) is not" \
	bash -c "grep -q '^0.500 s more CPU time ran between the signal backend.s ticks' '$tmp/unsampled' &&
		 ! grep -q 'more CPU time ran between' '$tmp/unsampled-few'" || diag "$tmp/unsampled"

# samples but no calls: a process killed before it sent its counts
sed 's/"calls": [0-9]*/"calls": 0/g' "$APPEL" > "$tmp/nocalls.json"
"$STAT" -i "$tmp/nocalls.json" --format flat > "$tmp/nocalls" 2>&1
check "header: samples with no calls at all say why the calls column is blank" \
	bash -c "grep -q '^No call counts: the process ended without sending them' '$tmp/nocalls' &&
		 ! grep -q '^No call counts' '$tmp/flat'" || diag "$tmp/nocalls"

# --- dot ------------------------------------------------------------------------

"$STAT" -i "$APPEL" --format dot > "$tmp/dot"
check "dot: edges carry the exact share of samples (f -> is_prime 85.7%, g -> is_prime 9.5%)" \
	bash -c "grep -q 'n1 -> n3 \\[label=\"85.7%\"' $tmp/dot && grep -q 'n2 -> n3 \\[label=\"9.5%\"' $tmp/dot"
if command -v dot > /dev/null 2>&1; then
	check "dot: graphviz accepts the graph" dot -Tsvg -o /dev/null "$tmp/dot"
else
	check "dot: the graph is one balanced digraph block" \
		bash -c "head -1 $tmp/dot | grep -q '^digraph meter {\$' && tail -1 $tmp/dot | grep -qx '}'"
fi

# --- a row is a name: two records of one name (a static inline function
# copied into two translation units) are one row, in show and in watch's
# top view alike -----------------------------------------------------------

sed 's/"name": "g"/"name": "is_prime"/' "$DATA/narrow.json" > "$tmp/twice.json"
"$STAT" -i "$tmp/twice.json" --no-correction -f flat > "$tmp/twice.flat" 2>&1
"$STAT" -i "$tmp/twice.json" -f top > "$tmp/twice.top" 2>&1
check "two records of one name: one flat row, their calls summed (102 + 2)" \
	awk '$NF == "is_prime" { n++; c = $4 } END { exit !(n == 1 && c == 104) }' \
	"$tmp/twice.flat" || diag "$tmp/twice.flat"
check "two records of one name: one top row, their calls and samples summed" \
	awk '$NF == "is_prime" { n++; c = $6; s = $5 } END { exit !(n == 1 && c == 104 && s == 1994) }' \
	"$tmp/twice.top" || diag "$tmp/twice.top"

# --- C++ names short unless --whole-names; a time a call in a unit that
# shows it -------------------------------------------------------------------

CXXSTR='std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >'
sed -e "s/\"name\": \"is_prime\"/\"name\": \"Lexer::Read($CXXSTR*) const\"/" \
    -e 's/"calls": \([0-9]*\),/"calls": \1000000,/' "$DATA/narrow.json" > "$tmp/cxx.json"
"$STAT" -i "$tmp/cxx.json" -f flat > "$tmp/cxx.flat" 2>&1
"$STAT" -i "$tmp/cxx.json" -f flat --whole-names > "$tmp/cxx.whole" 2>&1
check "C++ name shown short by default (Lexer::Read, no parameter list)" \
	awk '$NF == "Lexer::Read" { f = 1 } END { exit !f }' "$tmp/cxx.flat" || diag "$tmp/cxx.flat"
check "--whole-names: the demangler's whole name" \
	grep -qF "Lexer::Read($CXXSTR*) const" "$tmp/cxx.whole" || diag "$tmp/cxx.whole"
check "nanoseconds a call: the column says ns/call and is_prime's 19.5 ns shows" \
	bash -c "grep -q 'ns/call   ns/call' '$tmp/cxx.flat' &&
		 awk '\$NF == \"Lexer::Read\" && \$5 > 19 && \$5 < 20 { f = 1 } END { exit !f }' '$tmp/cxx.flat'" ||
	diag "$tmp/cxx.flat"

echo "# $fails failed"
[ "$fails" -eq 0 ]
