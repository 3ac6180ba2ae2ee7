#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The reports' instrumentation correction (tools/correct.c), on a profile
# made here: period 1 ms, 1 us per stacked call, 0.25 us per flat call.
#   f   100000 calls, 300 samples of self  -> 100 out: 200
#   g     1000 calls, flat, 10 samples     -> 0.25 out: 10
#   h   500000 calls, 100 samples          -> 500 due, never below 0: 0
#   main                                    90, untouched
# 200.25 samples (0.200 s) out of 500.  --no-correction shows them as
# taken; JSON keeps them as taken.
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
  "end_ns": 2, "samples": 500, "no_current": 0, "invalid": 0, "lost": 0,
  "truncated": 0, "call_cost_ps": 1000000, "flat_call_cost_ps": 250000,
  "functions": [
    {"id": 1, "name": "main", "calls": 1, "self_samples": 90, "total_samples": 500, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 2, "name": "f", "calls": 100000, "self_samples": 300, "total_samples": 300, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 3, "name": "g", "calls": 1000, "self_samples": 10, "total_samples": 10, "alloc_calls": 0, "alloc_bytes": 0, "flat": true},
    {"id": 4, "name": "h", "calls": 500000, "self_samples": 100, "total_samples": 100, "alloc_calls": 0, "alloc_bytes": 0}
  ],
  "stacks": [
    {"frames": [1], "samples": 90, "truncated": false},
    {"frames": [1, 2], "samples": 300, "truncated": false},
    {"frames": [1, 3], "samples": 10, "truncated": false},
    {"frames": [1, 4], "samples": 100, "truncated": false}
  ],
  "threads": [{"tid": 7, "samples": 500, "exited": true}]
}
JSON

self_of() { # report name -> self seconds
	flat_rows "$1" | awk -v f="$2" '$NF == f { print $3 }'
}

"$STAT" -i "$P" -f flat > "$tmp/flat" 2>&1
check "flat: f's self time is 0.300 s less 100000 x 1 us (0.200)" \
	test "$(self_of "$tmp/flat" f)" = 0.200
check "flat: h's 500 samples due are capped at its 100: 0.000, never negative" \
	test "$(self_of "$tmp/flat" h)" = 0.000
check "flat: g is flat: 1000 x 0.25 us, not 1 us, taken out (0.010 left)" \
	test "$(self_of "$tmp/flat" g)" = 0.010
check "flat: main, with one call, keeps its 0.090 s" \
	test "$(self_of "$tmp/flat" main)" = 0.090
check "flat: the header says how much was taken out (0.200 s, 40.0 %)" \
	grep -q "Instrumentation correction: 0.200 s (40.0% of the samples) taken out, 1000.0 ns per call (250.0 ns flat)" "$tmp/flat"
check "flat: the total is the corrected CPU time (300 samples, 0.300 s)" \
	grep -q "^300 samples at a period of 1 ms (1000 Hz): 0.300 s" "$tmp/flat"

"$STAT" -i "$P" -f flat --no-correction > "$tmp/raw" 2>&1
check "--no-correction: the samples as taken (f 0.300, h 0.100)" \
	test "$(self_of "$tmp/raw" f)/$(self_of "$tmp/raw" h)" = 0.300/0.100
check "--no-correction: no correction line" \
	bash -c "! grep -q 'Instrumentation correction' '$tmp/raw'"

"$STAT" -i "$P" -f folded > "$tmp/folded" 2>&1
check "folded: main;f 200, h's stack gone, main 90" \
	bash -c "grep -qx 'main;f 200' '$tmp/folded' && ! grep -q 'main;h' '$tmp/folded' && grep -qx 'main 90' '$tmp/folded'"
"$STAT" -i "$P" -f callgraph > "$tmp/cg" 2>&1
check "call graph: the correction line too" grep -q "Instrumentation correction: 0.200 s" "$tmp/cg"
"$STAT" -i "$P" -f dot > "$tmp/dot" 2>&1
check "dot: the title says what was taken out" grep -q "instrumentation correction: 0.200 s out" "$tmp/dot"
"$STAT" -i "$P" -f json > "$tmp/json" 2>&1
check "json: the samples as taken, the costs and the flat flag kept" \
	bash -c "grep -q '\"name\": \"f\", \"calls\": 100000, \"self_samples\": 300' '$tmp/json' &&
		 grep -q '\"flat_call_cost_ps\": 250000' '$tmp/json' && grep -q '\"flat\": true' '$tmp/json'"

echo "1..$n"
[ $fails = 0 ]
