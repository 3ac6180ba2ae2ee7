#!/bin/bash
# SPDX-License-Identifier: MIT
#
# test_bench_summary: bench/summarize.py on a small made-up result tree
# ends with one JSON line that parses and has the keys make bench promises,
# with the figures the fixture implies.
set -u
root=$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)
. "$root/selftests/tools_lib.sh" || exit 1
echo "1..8"
command -v python3 >/dev/null || { for i in 1 2 3 4 5 6 7 8; do skip "bench/summarize.py" "no python3"; done; exit 0; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mk() {	# mk ENV ID PHASE TOOL RATE W REP WORK_CPU TREE_CPU [JSON]
	local d=$t/$1/runs/$2
	mkdir -p "$d"
	echo "$2 $3 $4 $5 $6 $7 ok" >> "$t/$1/index"
	echo "workload=$6 work_cpu_ns=$8 cpu_ns=$8 wall_ns=$8" > "$d/stdout"
	echo "timeit cpu_ns=$9 wall_ns=$9 status=0" > "$d/stderr"
	[ $# -ge 10 ] && echo "${10}" > "$d/profile.json"
	return 0
}
prof() { echo "{\"samples\": $1, \"ticks\": $1, \"functions\": [$2], \"stacks\": [$3]}"; }
fn() { echo "{\"id\": $1, \"name\": \"$2\", \"self_samples\": $3}"; }
mk vm v1 tick off - spin 1 1000000000 1100000000
mk vm v2 tick meter-kernel 10000 spin 1 1010000000 1110000000 "$(prof 10000 "" "")"
mk vm v3 tick meter-signal-hr 10000 spin 1 1200000000 1300000000 "$(prof 10000 "" "")"
mk vm v4 ovh base - tree 1 1000 1000
mk vm v5 ovh meter-kernel 1000 tree 1 1100 1200
mk vm v6 acc meter-kernel 10000 split 1 1 1 "$(prof 100 "$(fn 1 heavy 51), $(fn 2 medium 30), $(fn 3 light 19)" "")"
mk vm v7 acc meter-kernel 10000 appel 1 1 1 "$(prof 100 "$(fn 1 f 0), $(fn 2 g 0), $(fn 3 is_prime 100)" '{"frames": [1, 3], "samples": 90}, {"frames": [2, 3], "samples": 10}')"
# a row that says nothing of how it went: a failed run, not averaged in
mkdir -p "$t/vm/runs/v8"
echo "v8 tick meter-kernel 10000 spin 2" >> "$t/vm/index"
echo "workload=spin work_cpu_ns=9000000000 cpu_ns=9000000000 wall_ns=9000000000" > "$t/vm/runs/v8/stdout"
echo "timeit cpu_ns=9100000000 wall_ns=9100000000 status=0" > "$t/vm/runs/v8/stderr"
mkdir -p "$t/host"; : > "$t/host/index"
printf '%s\n' "variant instr/call overhead ns/call" "baseline 4.0 0.0 1.00" "" \
	"startup: empty main, instructions: meter first run 83000000, meter later runs 297100, without meter 123546" \
	> "$t/host/callcost.txt"
out=$(python3 "$root/bench/summarize.py" "$t" 2>&1)
last=$(printf '%s\n' "$out" | tail -n 1)
json_holds() { # python asserting on d, the last line's JSON
	printf '%s' "$last" | python3 -c "import json, sys
d = json.loads(sys.stdin.read())
$1"
}
check "the last line is a JSON object with the promised keys" json_holds '
for k in ("kernel_tick_ns", "signal_tick_ns", "perf_sample_ns", "accuracy_max_error_pp", "peers", "overhead_pct", "percall_instr"):
    assert k in d, k
assert isinstance(d["peers"], list) and d["peers"]
' ||
	printf '%s\n' "$out" | sed 's/^/# /'
check "tick costs and overheads computed from the runs" json_holds '
assert d["kernel_tick_ns"] == 1000.0, d["kernel_tick_ns"]
assert d["signal_tick_ns"] == 20000.0, d["signal_tick_ns"]
assert d["signal_over_kernel"] == 20.0
assert d["overhead_pct"]["vm"]["meter-kernel@1000"]["tree"] == 10.0
'
check "a row without a status is a failed run, left out of the figures" json_holds '
assert d["failed_runs"] == 1, d["failed_runs"]
assert d["kernel_tick_ns"] == 1000.0, d["kernel_tick_ns"]
'
check "split error and caller share" json_holds '
assert d["accuracy_max_error_pp"] == 1.0, d["accuracy_max_error_pp"]
assert d["caller_share_f_pct"]["vm:meter-kernel@10000"] == 90.0
'
check "start-up instructions from bench/callcost.sh's line" json_holds '
assert d["startup_instr"] == 297100, d["startup_instr"]
assert d["startup_instr_first_run"] == 83000000
assert d["startup_instr_without_meter"] == 123546
'

# bench/compare.py: two runs' exact figures side by side
printf '%s\n' "$last" > "$t/a.out"
python3 "$root/bench/compare.py" "$t/a.out" "$t/a.out" > "$t/same" 2>&1
rc=$?
check "bench/compare.py: a run against itself agrees (exit 0)" \
	bash -c "[ $rc = 0 ] && grep -q '^startup_instr ' '$t/same'" || diag "$t/same"
# the same line with the start-up 1.5 % higher: over the 1 % tolerance
printf '%s\n' "$last" | sed 's/"startup_instr": *297100/"startup_instr":301557/' > "$t/b.out"
python3 "$root/bench/compare.py" "$t/a.out" "$t/b.out" > "$t/diff" 2>&1
rc=$?
check "bench/compare.py: a figure 1.5 % apart is reported over 1 % (exit 1)" \
	bash -c "[ $rc = 1 ] && grep -q '^startup_instr .* over\$' '$t/diff'" || diag "$t/diff"

# a flat report read by address: a row without calls (a function inlined
# without a record) is a row; "<no current function>" is none
cat > "$t/flat.txt" <<'FLAT'
Flat profile:

Each sample counts as 0.001 seconds (period 1 ms).
     % cumulative      self                self     total
  time    seconds   seconds     calls   ms/call   ms/call  name
 60.00      0.060     0.060                                mix
 30.00      0.090     0.030      3000    0.0100    0.0300  work
  4.00      0.094     0.004                                std::char_traits<char>::copy
  6.00      0.100     0.006                                <no current function>
FLAT
check "summarize.py's flat_shares: rows without calls are rows, <no current function> is not" \
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1] + "/bench")
import summarize
r = summarize.flat_shares(sys.argv[2])
sys.exit(r != {"mix": 60.0, "work": 30.0, "std::char_traits<char>::copy": 4.0})' "$root" "$t/flat.txt"
exit $((fails > 0))
