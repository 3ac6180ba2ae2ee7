#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Host tests of a wall-clock profile in every report, on the fixture
# selftests/host/data/wall.json: main calls wait_io, 1 s blocked, then
# burn -> spin, 0.9 s on a CPU and 0.1 s runnable waiting for one.  Also:
# the JSON reader refuses off-CPU data it cannot trust, and meter-run
# refuses --clock wall where only CPU time can be sampled.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
RUN=$ROOT/build/tools/meter-run
DATA=$ROOT/selftests/host/data
WALL=$DATA/wall.json

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_wall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..29"

# --- text reports -------------------------------------------------------

"$STAT" -i "$WALL" -f flat > "$tmp/flat" 2>&1
check "header: the samples are wall-clock time" \
	grep -q '2000 samples at a period of 1 ms (1000 Hz): 2.000 s of wall-clock time' "$tmp/flat" ||
	diag "$tmp/flat"
# a second thread: wall-clock seconds of threads add up past the run's
sed 's/{"tid": 4400, "samples": 2000, "exited": true}/{"tid": 4400, "samples": 1000, "exited": true}, {"tid": 4401, "samples": 1000, "exited": true}/' \
	"$WALL" > "$tmp/two.json"
"$STAT" -i "$tmp/two.json" -f flat > "$tmp/two" 2>&1
check "header: two threads' wall-clock time is said to be summed over them" \
	grep -q '2000 samples at a period of 1 ms (1000 Hz): 2.000 s of wall-clock time summed over 2 threads' "$tmp/two" ||
	diag "$tmp/two"
check "header: the split, 45% on a CPU, 5% runnable, 50% blocked" \
	grep -q '^wall clock: 45.0% on a CPU (0.900 s), 5.0% runnable waiting for a CPU (0.100 s), 50.0% blocked or sleeping (1.000 s)$' "$tmp/flat"
check "header: no line about the tick budget when nothing was stretched" \
	bash -c "! grep -q 'ticks came late on purpose' '$tmp/flat'"
# meter.ko's budget (STRETCHED_TICKS) kept through JSON and said in the header
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p["stretched_ticks"] = 37; json.dump(p, open(sys.argv[2], "w"))' \
	"$WALL" "$tmp/stretched.json"
"$STAT" -i "$tmp/stretched.json" -f json -o "$tmp/again.json" > /dev/null 2>&1
"$STAT" -i "$tmp/again.json" -f flat > "$tmp/stretched" 2>&1
check "header: 37 ticks stretched by the user's tick budget, kept through a JSON round trip" \
	grep -q "^37 ticks came late on purpose: this user's wall-clock threads together asked for more ticks a second than meter.ko's user_wall_ticks budget" "$tmp/stretched" ||
	diag "$tmp/stretched"
check "flat: the columns on-cpu, runq, blocked" \
	grep -Eq '^ +time +seconds +seconds +on-cpu +runq +blocked +calls' "$tmp/flat"
flat_rows "$tmp/flat" > "$tmp/rows"
check "flat: wait_io 1.000 s self, all of it blocked" \
	awk '$NF == "wait_io" && $3 == "1.000" && $4 == "0.000" && $5 == "0.000" && $6 == "1.000" { f = 1 }
	     END { exit !f }' "$tmp/rows" || diag "$tmp/rows"
check "flat: spin 0.900 s on a CPU, 0.100 s runnable" \
	awk '$NF == "spin" && $4 == "0.900" && $5 == "0.100" && $6 == "0.000" { f = 1 }
	     END { exit !f }' "$tmp/rows"

"$STAT" -i "$WALL" -f callgraph > "$tmp/cg" 2>&1
check "call graph: wait_io's entry is 100% off the CPU, spin's 10%" \
	bash -c "grep -Eq '^ \[[0-9]+\] .* 100\.0%  wait_io$' '$tmp/cg' &&
		 grep -Eq '^ \[[0-9]+\] .* 10\.0%  spin$' '$tmp/cg'" || diag "$tmp/cg"
check "call graph: the edge main -> wait_io is 100% off-cpu, main -> burn 10%" \
	bash -c "grep -Eq '^ +wait_io \[[0-9]+\] +50\.0% +1\.000 s +100\.0% off-cpu$' '$tmp/cg' &&
		 grep -Eq '^ +burn \[[0-9]+\] +50\.0% +1\.000 s +10\.0% off-cpu$' '$tmp/cg'"

"$STAT" -i "$WALL" -f metering > "$tmp/met" 2>&1
check "METERING: an Off-CPU column, wait_io 100.00%, spin 10.00%" \
	bash -c "grep -q 'Off-CPU' '$tmp/met' &&
		 grep -Eq '^wait_io: .* 100\.00%$' '$tmp/met' &&
		 grep -Eq '^spin: .* 10\.00%$' '$tmp/met'" || diag "$tmp/met"

# --- files for other tools ------------------------------------------------

"$STAT" -i "$WALL" -f folded > "$tmp/folded" 2>&1
check "folded: off-CPU stacks end in [blocked] or [runq], on-CPU ones as they are" \
	bash -c "grep -qx 'main;wait_io;\[blocked\] 1000' '$tmp/folded' &&
		 grep -qx 'main;burn;spin 900' '$tmp/folded' &&
		 grep -qx 'main;burn;spin;\[runq\] 100' '$tmp/folded'" || diag "$tmp/folded"

"$STAT" -i "$WALL" -f json > "$tmp/wall.json" 2>&1
check "JSON: written back byte for byte (clock, samples_runq/blocked, self_runq/blocked, state)" \
	cmp -s "$WALL" "$tmp/wall.json"

"$STAT" -i "$WALL" -f dot > "$tmp/dot" 2>&1
check "dot: wait_io's node says 1.000 s blocked and is dashed (mostly off the CPU)" \
	grep -q 'wait_io.*blocked 1.000 s".*style="filled,dashed"' "$tmp/dot" || diag "$tmp/dot"

"$STAT" -i "$WALL" -f pprof -o "$tmp/wall.pb.gz" 2>&1
if command -v go > /dev/null 2>&1; then
	gopp() { go_pprof "$@" 2>&1; }
	gopp -raw "$tmp/wall.pb.gz" > "$tmp/raw"
	check "pprof: sample types samples, wall (the default), cpu, runq, blocked, calls; period type wall" \
		bash -c "grep -qx 'samples/count wall/nanoseconds\[dflt\] cpu/nanoseconds runq/nanoseconds blocked/nanoseconds calls/count' '$tmp/raw' &&
			 grep -qx 'PeriodType: wall nanoseconds' '$tmp/raw'" || diag "$tmp/raw"
	gopp -sample_index=blocked -top "$tmp/wall.pb.gz" > "$tmp/blocked"
	check "pprof -sample_index=blocked: wait_io 1s, the only one" \
		bash -c "awk '\$NF == \"wait_io\" && \$1 == \"1s\" { f = 1 } \$NF == \"spin\" { s = 1 }
			      END { exit !(f && !s) }' '$tmp/blocked'" || diag "$tmp/blocked"
	gopp -sample_index=cpu -top "$tmp/wall.pb.gz" > "$tmp/cpu"
	check "pprof -sample_index=cpu: spin 900ms, wait_io nothing" \
		bash -c "awk '\$NF == \"spin\" && \$1 == \"900ms\" { f = 1 } \$NF == \"wait_io\" && \$1 != \"0\" { w = 1 }
			      END { exit !(f && !w) }' '$tmp/cpu'" || diag "$tmp/cpu"
else
	skip "pprof: sample types samples, wall, cpu, runq, blocked, calls" "go is not installed"
	skip "pprof -sample_index=blocked" "go is not installed"
	skip "pprof -sample_index=cpu" "go is not installed"
fi

# --- what is refused --------------------------------------------------------

"$STAT" merge "$WALL" "$DATA/appel.json" > "$tmp/merge" 2>&1
rc=$?
check "merge of a wall-clock and a CPU-time profile: status 1, says why" \
	bash -c "[ $rc = 1 ] && grep -q 'cannot merge a CPU-time profile with a wall-clock one' '$tmp/merge'" ||
	diag "$tmp/merge"

bad() { # description, sed expression on wall.json, expected message
	sed "$2" "$WALL" > "$tmp/bad.json"
	"$STAT" -i "$tmp/bad.json" > "$tmp/bad.out" 2>&1
	local rc=$?
	check "JSON reader refuses $1" \
		bash -c "[ $rc != 0 ] && grep -q '$3' '$tmp/bad.out'" || diag "$tmp/bad.out"
}
bad "an unknown clock" 's/"clock": "wall"/"clock": "moon"/' '"clock" must be "cpu" or "wall"'
bad "more blocked self samples than self samples" \
	's/"self_samples": 1000, "total_samples": 1000, "alloc_calls": 0, "alloc_bytes": 0, "self_runq": 0, "self_blocked": 1000/"self_samples": 1000, "total_samples": 1000, "alloc_calls": 0, "alloc_bytes": 0, "self_runq": 0, "self_blocked": 1001/' \
	'"self_blocked"'
bad "off-CPU stacks in a CPU-time profile" '/"clock"/d; /"samples_runq"/d; /"samples_blocked"/d; s/"self_runq": 100/"self_runq": 0/; s/"self_blocked": 1000/"self_blocked": 0/' \
	'"state" must be'
bad "an unknown stack state" 's/"state": "runq"/"state": "asleep"/' '"state" must be'

"$RUN" --clock wall --backend signal -- /bin/true > "$tmp/run" 2>&1
rc=$?
check "meter-run --clock wall --backend signal: usage error (2), says only the kernel backend can" \
	bash -c "[ $rc = 2 ] && grep -q 'only the kernel backend can' '$tmp/run'" || diag "$tmp/run"
"$RUN" --clock moon -- /bin/true > "$tmp/run" 2>&1
rc=$?
check "meter-run --clock moon: usage error (2)" \
	bash -c "[ $rc = 2 ] && grep -q -- '--clock wants cpu or wall' '$tmp/run'"

# --- CPU profiles are as they were ----------------------------------------

"$STAT" -i "$DATA/appel.json" -f flat > "$tmp/cpu.flat" 2>&1
check "a CPU-time profile: no wall-clock line, no on-cpu column" \
	bash -c "! grep -Eq 'wall clock|on-cpu|wall-clock' '$tmp/cpu.flat'"

# --- threads on wall-clock time: each one's time on and off the CPU, and
# the idle ones set aside (a pool's waiting workers) -------------------------

POOL=$DATA/pool.json
"$STAT" -i "$POOL" -f flat --threads > "$tmp/pool.flat" 2>&1
"$STAT" -i "$POOL" -f flat --threads --hide-idle 5 > "$tmp/pool.idle" 2>&1
check "--threads on wall clock: each thread's seconds on a CPU and off it (worker-0: 0.005 and 1.995)" \
	bash -c "grep -Eq '^ +501 +2000 +33.33% +2.000 +0.005 +1.995  exited +worker-0\$' '$tmp/pool.flat' &&
		 grep -Eq '^ +500 +2000 +33.33% +2.000 +1.900 +0.100  exited +pool\$' '$tmp/pool.flat'" ||
	diag "$tmp/pool.flat"
check "--hide-idle 5: the two waiting workers set aside, said in the header (4.000 s)" \
	bash -c "grep -q '^2 idle threads set aside (--hide-idle): 4.000 s' '$tmp/pool.idle' &&
		 ! grep -q worker- '$tmp/pool.idle' && grep -Eq '^ +500 .* pool\$' '$tmp/pool.idle'" ||
	diag "$tmp/pool.idle"
check "--hide-idle 5: the rows lose the idle threads' samples (compress 2.000 s of 2.000, wait_for_work 0)" \
	awk '$NF == "compress" { c = ($1 == "100.00" && $3 == "2.000") }
	     $NF == "wait_for_work" { w = ($3 == "0.000") }
	     END { exit !(c && w) }' "$tmp/pool.idle" || diag "$tmp/pool.idle"
check "without --hide-idle the waiting workers top the profile (wait_for_work 66.50 %)" \
	awk '$NF == "wait_for_work" && $1 == "66.50" { f = 1 } END { exit !f }' "$tmp/pool.flat"
# with a calibrated cost, --correct and --hide-idle together: the idle
# threads set aside from the corrected profile, which stays corrected
sed 's/"call_cost_ps": 0/"call_cost_ps": 1000000/' "$POOL" > "$tmp/pool-cost.json"
"$STAT" -i "$tmp/pool-cost.json" -f flat --correct --hide-idle 5 > "$tmp/pool.corr" 2>&1
check "--correct --hide-idle 5: still corrected, said in the header" \
	bash -c "grep -q '^Instrumentation correction: .* the functions. shares are of the' '$tmp/pool.corr' &&
		 grep -q '^2 idle threads set aside' '$tmp/pool.corr'" || diag "$tmp/pool.corr"

[ $fails = 0 ]
