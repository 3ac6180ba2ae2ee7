#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The reports' instrumentation correction (analysis/correct.c, --correct;
# off by default), on a profile made here: period 1 ms, 1 us per stacked
# call, 0.25 us per flat call.
# A call's cost comes out of its caller's self time; a callee's calls are
# shared among its callers by the samples of the stacks where each one
# calls it; a function never sampled under a caller pays for its own.
#   f   100000 calls, called by main (stacks main;f 300, main;k;f 0)
#       -> main owes 100 samples
#   g   1000 calls, flat, under f only (main;f;g 10) -> f owes 0.25
#   h   500000 calls: under main 150 samples, under k 50 (main;h,
#       main;k;h): 500 due, main owes 375, k 125 -> k's 140 leave 15
#   k   10 calls, main;k 140 samples
#   main   1 call, never under a caller: owes its own 1 us (0.001)
#   main 90 self: 90 - 100 - 375 - 0.001 -> 0, never below zero
# 90 + 0.25 + 125 = 215.25 samples out of 740; f's 299.75 rounds to 300,
# so 215 are taken out of the rows.  The totals stay 740 (as
# measured); the functions' shares are of the 525 left, the program's
# own time, as an uninstrumented run's are of its whole (f: 300/525).
# Without --correct the reports show the samples as taken and
# say what the estimate is; JSON keeps them as taken.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_correct.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
P=$tmp/p.json
cat > "$P" <<'JSON'
{
  "format": "meter-profile", "version": 1, "command": "corr",
  "backend": "signal", "pid": 7, "uid": 0, "cookie": 9, "parent_cookie": 0,
  "exited": true, "runs": 1, "period_ns": 1000000, "start_ns": 1,
  "end_ns": 2, "samples": 740, "no_current": 0, "invalid": 0, "lost": 0,
  "truncated": 0, "call_cost_ps": 1000000, "flat_call_cost_ps": 250000,
  "functions": [
    {"id": 1, "name": "main", "calls": 1, "self_samples": 90, "total_samples": 740, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 2, "name": "f", "calls": 100000, "self_samples": 300, "total_samples": 310, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 3, "name": "g", "calls": 1000, "self_samples": 10, "total_samples": 10, "alloc_calls": 0, "alloc_bytes": 0, "flat": true},
    {"id": 4, "name": "h", "calls": 500000, "self_samples": 200, "total_samples": 200, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 5, "name": "k", "calls": 10, "self_samples": 140, "total_samples": 190, "alloc_calls": 0, "alloc_bytes": 0}
  ],
  "stacks": [
    {"frames": [1], "samples": 90, "truncated": false},
    {"frames": [1, 2], "samples": 300, "truncated": false},
    {"frames": [1, 2, 3], "samples": 10, "truncated": false},
    {"frames": [1, 4], "samples": 150, "truncated": false},
    {"frames": [1, 5], "samples": 140, "truncated": false},
    {"frames": [1, 5, 4], "samples": 50, "truncated": false}
  ],
  "threads": [{"tid": 7, "samples": 740, "exited": true}]
}
JSON

self_of() { # report name -> self seconds
	flat_rows "$1" | awk -v f="$2" '$NF == f { print $3 }'
}
pct_of() { # report name -> %time
	flat_rows "$1" | awk -v f="$2" '$NF == f { print $1 }'
}

"$STAT" -i "$P" -f flat --correct > "$tmp/flat" 2>&1
check "flat: f keeps its 0.300 s: its calls are charged to its caller" \
	test "$(self_of "$tmp/flat" f)" = 0.300
check "flat: main, which calls f and h, owes more than its 0.090 s: 0.000, never negative" \
	test "$(self_of "$tmp/flat" main)" = 0.000
check "flat: k owes 1/4 of h's 0.500 s (h's samples under k): 0.015 left" \
	test "$(self_of "$tmp/flat" k)" = 0.015
check "flat: the callees h and g keep their time (0.200, 0.010)" \
	test "$(self_of "$tmp/flat" h)/$(self_of "$tmp/flat" g)" = 0.200/0.010
check "flat: the header says how much was taken out (0.215 s, 29.1 %), the mean cost of a call and the flat one" \
	grep -q "Instrumentation correction: 0.215 s (29.1% of the samples) taken out, 998.8 ns per call (250.0 ns flat)" "$tmp/flat"
check "flat: the total stays as measured (740 samples, 0.740 s), the correction beside it" \
	grep -q "^740 samples at a period of 1 ms (1000 Hz): 0.740 s" "$tmp/flat"
check "flat: the shares are of the program's own time, 0.525 s: f 57.14 %, h 38.10 %" \
	bash -c "grep -q \"the functions' shares are of the 0.525 s left\" '$tmp/flat' &&
		 test '$(pct_of "$tmp/flat" f)/$(pct_of "$tmp/flat" h)' = 57.14/38.10"

"$STAT" -i "$P" -f flat > "$tmp/raw" 2>&1
check "default: the samples as taken (main 0.090, k 0.140)" \
	test "$(self_of "$tmp/raw" main)/$(self_of "$tmp/raw" k)" = 0.090/0.140
check "default: the shares of all 740 samples (f 40.54 %)" \
	test "$(pct_of "$tmp/raw" f)" = 40.54
check "default: no correction, and the estimate said (100000 + 500000 + 10 + 1 calls at 1 us, 1000 at 0.25: 0.600 s, 998.8 ns a call)" \
	bash -c "! grep -q 'Instrumentation correction' '$tmp/raw' &&
		 grep -q 'Samples as taken: they include meter.s own cost, estimated at 0.600 s (81.1%; 998.8 ns per call); --correct takes it out.' '$tmp/raw'"
"$STAT" -i "$P" -f flat --correct --no-correction > "$tmp/raw2" 2>&1
check "--no-correction after --correct: as taken" cmp -s "$tmp/raw" "$tmp/raw2"

"$STAT" -i "$P" -f folded --correct > "$tmp/folded" 2>&1
check "folded: main;f 300, main;k 15, main alone gone, main;k;h 50" \
	bash -c "grep -qx 'main;f 300' '$tmp/folded' && grep -qx 'main;k 15' '$tmp/folded' && ! grep -qx 'main [0-9]*' '$tmp/folded' && grep -qx 'main;k;h 50' '$tmp/folded'"
"$STAT" -i "$P" -f callgraph --correct > "$tmp/cg" 2>&1
check "call graph: the correction line too" grep -q "Instrumentation correction: 0.215 s" "$tmp/cg"
check "call graph: of the 0.525 s left, main's total is 100 %, f's self 57.1 %" \
	bash -c "grep -Eq '^ \[1\] +0\.525 100\.0% .* main\$' '$tmp/cg' &&
		 grep -Eq '^ \[2\] +0\.310  59\.0% +0\.300  57\.1% .* f\$' '$tmp/cg'"
"$STAT" diff --correct "$P" "$P" > "$tmp/diff" 2>&1
check "diff --correct: the shares of the program's own time on both sides (f 57.14 %)" \
	test "$(awk '$NF == "f" { print $1 "/" $2 }' "$tmp/diff")" = 57.14/57.14
"$STAT" -i "$P" -f dot --correct > "$tmp/dot" 2>&1
check "dot: the title says what was taken out" grep -q "instrumentation correction: 0.215 s out" "$tmp/dot"
"$STAT" -i "$P" -f json > "$tmp/json" 2>&1
check "json: the samples as taken, the costs and the flat flag kept" \
	bash -c "grep -q '\"name\": \"f\", \"calls\": 100000, \"self_samples\": 300' '$tmp/json' &&
		 grep -q '\"flat_call_cost_ps\": 250000' '$tmp/json' && grep -q '\"flat\": true' '$tmp/json'"

# Two records of one name (a static inline function whose copies all
# became leaves in one file and push in another): one row, whose calls
# cost the mean of the two, 1000 at 0.25 us and 3000 at 1 us: 0.8125 us.
D=$tmp/dup.json
sed -e 's/"name": "f", "calls": 100000/"name": "dup", "calls": 3000/' \
    -e 's/"name": "g", "calls": 1000, \(.*\)"flat": true}/"name": "dup", "calls": 1000, \1"cost_ps": 250000, "flat": true}/' \
    -e 's/"name": "h", "calls": 500000/"name": "h", "calls": 0/' \
    -e 's/"name": "k", "calls": 10/"name": "k", "calls": 0/' \
    -e 's/"name": "main", "calls": 1/"name": "main", "calls": 0/' "$P" > "$D"
"$STAT" -i "$D" -f flat > "$tmp/dup" 2>&1
check "one name, a flat and a stacked record: one row, its calls at the mean cost (812.5 ns)" \
	bash -c "grep -q 'estimated at 0.003 s (0.4%; 812.5 ns per call)' '$tmp/dup' &&
		 test \"\$(grep -c ' dup\$' '$tmp/dup')\" = 1"
"$STAT" -i "$D" -f metering > "$tmp/dupm" 2>&1
check "METERING: the overhead at each call's own cost (4000 calls x 812.500 ns)" \
	grep -q "(4000 calls x 812.500 ns)" "$tmp/dupm"

echo "1..$n"
[ $fails = 0 ]
