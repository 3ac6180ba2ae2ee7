#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/run.sh: the benchmarks of `make bench` (Documentation/performance.md).
#
#   bench/run.sh              everything: host part, VM part, report
#   bench/run.sh host OUT     the host part only, raw results into OUT
#   bench/run.sh vm OUT       the VM part (run inside selftests/vm-run)
#   bench/run.sh icount OUT   the instruction-counted part (inside
#                             selftests/vm-run --count-insns --icount)
#   bench/run.sh report OUT   the table and the JSON line from OUT
#
# Every measurement is one run of build/bench/bin/workloads-VARIANT under
# one tool, in a directory of its own, OUT/runs/ID/, holding the
# workload's stdout (its own CPU and wall times), timeit's line (the CPU
# time of the whole command tree: the tool's own processes too) and the
# tool's output.  OUT/index lists the runs: "ID PHASE TOOL RATE WORKLOAD
# REP STATUS SCALE".  Runs are interleaved (each repetition goes through every tool)
# so that drifting load on the machine hits all tools alike.
# bench/summarize.py turns OUT into the table and the JSON line.
#
# Environment: BENCH_REPS (repetitions, 9 for the tick costs, 5 for the
# overheads), BENCH_ACC_REPS (repetitions of the accuracy runs, 5),
# BENCH_QUICK=1 (smaller runs: a smoke test of the plumbing),
# BENCH_OUT (where the whole run keeps its results; default
# build/bench/out), BENCH_PHASES (which parts to run; default
# "callcost tick switch res ovh real acc python lua patch": python and lua
# are bench/python.sh and bench/lua.sh, the language integrations against
# cProfile and yappi, and against a debug.sethook profiler; patch is
# bench/patch_overhead.sh, --patch's whole runs beside uftrace and gprof).
set -eu

ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
B=$ROOT/build/bench/bin
quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
	: "${BENCH_REPS:=1}" "${BENCH_ACC_REPS:=1}"
fi
phases=" ${BENCH_PHASES:-callcost tick switch res ovh real acc python lua patch} "
want() { case $phases in *" $1 "*) return 0 ;; esac; return 1; }

die() { echo "bench: $*" >&2; exit 1; }

# The 1 kHz and 10 kHz sampling rates as periods.
period_ns() { echo $((1000000000 / $1)); }

# run_one ID PHASE TOOL RATE WORKLOAD REP SCALE: one measurement.
# TOOL is one of:
#   base             workloads-plain, nothing else
#   off              workloads-manual, METER_BACKEND=off (calls counted)
#   meter-kernel     workloads-manual under meter-run --backend kernel
#   meter-auto       workloads-auto under meter-run --backend kernel
#   meter-plugin     workloads-plugin (the GCC plugin) under meter-run
#   meter-signal-plugin  workloads-plugin, METER_BACKEND=signal
#   real-perf        a real program's plain build (bench/realprogs.sh:
#                    Debian's flags, inlining on) under perf record
#                    --call-graph dwarf at RATE
#   real-meter       its plugin build (the same flags and the plugin)
#                    under meter-run --backend kernel (on the host, with
#                    no meter.ko: REAL_BACKEND=signal)
#   real-plain       its plain build alone (the cost's baseline)
#   meter-floor      meter-kernel with meter.ko's tick_floor set: the
#                    tick counts the interrupt and returns (the floor)
#   meter-perfclock  meter-kernel with meter.ko's cpu_timer cleared: the
#                    other tick design, perf's task clock instead of
#                    meter.ko's own hrtimer armed at each context switch
#   meter-perfclock-floor  meter-perfclock with tick_floor set
#   meter-signal     workloads-manual, METER_BACKEND=signal
#   meter-signal-hr  the same driven by a CLOCK_MONOTONIC timer at RATE
#                    (BENCH_SIGNAL_HZ; the CPU-time timer set to 1 s)
#   perf             perf record -e task-clock -F RATE (no RATE: perf's
#                    default 4000 Hz); perf-g: with -g (frame pointers)
#   gprof            workloads-pg, then gprof -b -p / -q
#   gperftools       workloads-gperf, CPUPROFILE, CPUPROFILE_FREQUENCY=RATE
#   uftrace          uftrace record workloads-pg
run_one() {
	local id=$1 phase=$2 tool=$3 rate=$4 w=$5 rep=$6 scale=$7
	local d=$OUT/runs/$id rc=0
	local -a cmd env=()
	mkdir -p "$d"
	case $tool in
	base) cmd=("$B/workloads-plain" "$w" "$scale") ;;
	off) env=(METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null)
		cmd=("$B/workloads-manual" "$w" "$scale") ;;
	meter-kernel|meter-auto|meter-plugin|meter-floor|meter-perfclock|meter-perfclock-floor)
		local v=manual
		[ $tool = meter-auto ] && v=auto
		[ $tool = meter-plugin ] && v=plugin
		cmd=(meter-run --no-progress -b kernel --period "$(period_ns "$rate")ns"
		     -f json -o "$d/profile.json" --
		     "$B/workloads-$v" "$w" "$scale") ;;
	meter-signal|meter-signal-auto|meter-signal-plugin)
		local v=manual
		[ $tool = meter-signal-auto ] && v=auto
		[ $tool = meter-signal-plugin ] && v=plugin
		env=(METER_BACKEND=signal METER_QUIET=1 METER_PERIOD_NS="$(period_ns "$rate")"
		     METER_OUTPUT="$d/profile.json")
		cmd=("$B/workloads-$v" "$w" "$scale") ;;
	meter-signal-hr)
		env=(METER_BACKEND=signal METER_QUIET=1 METER_PERIOD_NS=1000000000
		     METER_OUTPUT="$d/profile.json" BENCH_SIGNAL_HZ="$rate")
		cmd=("$B/workloads-manual" "$w" "$scale") ;;
	perf|perf-g)
		local -a f=()
		[ "$rate" = default ] || f=(-F "$rate")
		[ $tool = perf-g ] && f+=(-g)
		# -B -N: no build-id post-processing (minutes under TCG)
		cmd=("$PERF" record -q -B -N -e task-clock "${f[@]}" -o "$d/perf.data"
		     "$B/workloads-plain" "$w" "$scale") ;;
	real-perf)
		echo "$w" > "$d/realprog"
		cmd=("$PERF" record -q -B -N -e task-clock -F "$rate"
		     --call-graph dwarf,4096 -o "$d/perf.data" --
		     "$RP/$w/plain/$w")
		# a here-string, not <(...): the VM has no /dev/fd
		mapfile -t -O ${#cmd[@]} cmd <<< "$(realprogs_args "$w" "$RP" "$scale")" ;;
	real-plain)
		echo "$w" > "$d/realprog"
		cmd=("$RP/$w/plain/$w")
		mapfile -t -O ${#cmd[@]} cmd <<< "$(realprogs_args "$w" "$RP" "$scale")" ;;
	real-meter)
		echo "$w" > "$d/realprog"
		cmd=("${METER_RUN:-meter-run}" --no-progress -b "${REAL_BACKEND:-kernel}"
		     --period "$(period_ns "$rate")ns" -f json -o "$d/profile.json" --
		     "$RP/$w/plugin/$w")
		mapfile -t -O ${#cmd[@]} cmd <<< "$(realprogs_args "$w" "$RP" "$scale")" ;;
	gprof) cmd=("$B/workloads-pg" "$w" "$scale") ;;
	gperftools)
		env=(CPUPROFILE="$d/cpu.prof")
		[ "$rate" = default ] || env+=(CPUPROFILE_FREQUENCY="$rate")
		cmd=("$B/workloads-gperf" "$w" "$scale") ;;
	uftrace)
		cmd=(uftrace record -d "$d/uftrace.data" "$B/workloads-pg" "$w" "$scale") ;;
	*) die "unknown tool $tool" ;;
	esac
	# in the instruction-counting VM: the command's instructions, exactly
	# switch counts its own region (bench/workloads.c), not the command
	if [ -n "${ICOUNT_CMD:-}" ] && [ "$w" = switch ]; then
		env+=(BENCH_ICOUNT_OUT="$d/icount.txt")
	elif [ -n "${ICOUNT_CMD:-}" ]; then
		cmd=("$ICOUNT_CMD" -o "$d/icount.txt" -- "${cmd[@]}")
	fi
	case $tool in *-floor) echo 1 > /sys/module/meter/parameters/tick_floor ;; esac
	case $tool in meter-perfclock*) echo 0 > /sys/module/meter/parameters/cpu_timer ;; esac
	(cd "$d" && env "${env[@]}" "$B/timeit" "${cmd[@]}" \
		> "$d/stdout" 2> "$d/stderr") || rc=$?
	case $tool in *-floor) echo 0 > /sys/module/meter/parameters/tick_floor ;; esac
	case $tool in meter-perfclock*) echo 1 > /sys/module/meter/parameters/cpu_timer ;; esac
	# counted runs: free the finished session now, outside the count, so
	# that no later run pays for its eviction
	if [ -n "${ICOUNT_CMD:-}" ] && [ -f "$d/profile.json" ]; then
		local spid
		spid=$(grep -o '"pid": *[0-9]*' "$d/profile.json" | head -n 1 | grep -o '[0-9]*$')
		[ -z "$spid" ] || meter-stat delete "$spid" > /dev/null 2>&1 || true
	fi
	if [ $rc != 0 ]; then
		echo "bench: $tool $rate $w failed (status $rc):" >&2
		tail -n 5 "$d/stderr" | sed 's/^/  | /' >&2
		echo "$id $phase $tool $rate $w $rep failed $scale" >> "$OUT/index"
		return 0
	fi
	# What the tool says, while its data and the binary are at hand.
	case $tool in
	gprof)
		gprof -b -p "$B/workloads-pg" "$d/gmon.out" > "$d/gprof.flat" 2>&1 || true
		[ "$phase" = acc ] &&
			gprof -b -q "$B/workloads-pg" "$d/gmon.out" > "$d/gprof.graph" 2>&1
		rm -f "$d/gmon.out" ;;
	uftrace)
		if [ "$phase" = acc ]; then
			uftrace report -d "$d/uftrace.data" > "$d/uftrace.report" 2>&1 || true
			[ "$w" = appel ] && { uftrace graph -d "$d/uftrace.data" is_prime \
				> "$d/uftrace.graph" 2>&1 || true; }
		fi
		rm -rf "$d/uftrace.data" ;;
	esac
	echo "$id $phase $tool $rate $w $rep ok $scale" >> "$OUT/index"
}

# The real programs (bench/realprogs.sh), built before the VM boots.
RP=$ROOT/build/realprogs
. "$ROOT/bench/realprogs.sh"

# Scales: each workload run takes a few tenths of a second (host) or about
# half a second of TCG (VM).
if [ "$quick" = 1 ]; then
	host_scale() { case $1 in spin) echo 20 ;; tree) echo 2 ;; matrix) echo 2 ;; threads) echo 2 ;; split) echo 4 ;; appel) echo 2 ;; esac; }
	vm_scale() { case $1 in spin) echo 10 ;; tree) echo 1 ;; matrix) echo 1 ;; threads) echo 1 ;; split) echo 2 ;; appel) echo 1 ;; bzip2) echo 1 ;; lua) echo 1 ;; zstd) echo 1 ;; esac; }
else
	host_scale() { case $1 in spin) echo 200 ;; tree) echo 40 ;; matrix) echo 60 ;; threads) echo 30 ;; split) echo 200 ;; appel) echo 40 ;; esac; }
	vm_scale() { case $1 in spin) echo 300 ;; tree) echo 10 ;; matrix) echo 6 ;; threads) echo 4 ;; split) echo 30 ;; appel) echo 4 ;; bzip2|lua|zstd) realprogs_scale "$1" vm ;; esac; }
fi
host_real_scale() { realprogs_scale "$1" host; }

n=0
next_id() { n=$((n + 1)); id=$(printf '%s%04d' "$1" $n); }

# Each instrumented build runs once before an overhead phase, so that
# libmeter's calibration is kept (per mode) as on any machine after its
# first run: otherwise the phase's first run of a mode pays it (83 million
# instructions; in the counted VM meter-auto on tree cost 489 % at 1 kHz
# against 408 % at 10 kHz).
keep_calibration() {
	local v
	for v in manual auto plugin; do
		METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null \
			"$B/workloads-$v" spin 1 > /dev/null 2>&1 || true
	done
}

# --- host: peers that need no meter.ko ---------------------------------------
host_part() {
	local reps=${BENCH_REPS:-5} r w t
	if want python; then
		echo "== host: Python against cProfile and yappi (bench/python.sh)" >&2
		BENCH_PY_OUT=$OUT/python "$ROOT/bench/python.sh" "${BENCH_REPS:-5}" \
			> "$OUT/python.txt" 2> "$OUT/python.err" ||
			echo "bench: bench/python.sh failed (see $OUT/python.err)" >&2
	fi
	if want lua; then
		echo "== host: Lua against a debug.sethook profiler (bench/lua.sh)" >&2
		BENCH_LUA_OUT=$OUT/lua "$ROOT/bench/lua.sh" > "$OUT/lua.txt" \
			2> "$OUT/lua.err" ||
			echo "bench: bench/lua.sh failed (see $OUT/lua.err)" >&2
	fi
	if want patch; then
		echo "== host: whole-run overhead of --patch (bench/patch_overhead.sh)" >&2
		"$ROOT/bench/patch_overhead.sh" "$([ "$quick" = 1 ] && echo 1 || echo "${BENCH_REPS:-5}")" \
			> "$OUT/patch_overhead.txt" 2> "$OUT/patch_overhead.err" ||
			echo "bench: bench/patch_overhead.sh failed (see $OUT/patch_overhead.err)" >&2
	fi
	if want callcost; then
		echo "== host: per-call cost (bench/callcost.sh)" >&2
		"$ROOT/bench/callcost.sh" > "$OUT/callcost.txt" 2> "$OUT/callcost.err" ||
			echo "bench: bench/callcost.sh failed (see $OUT/callcost.err)" >&2
		cat "$OUT/callcost.txt" >&2
	fi

	if want tick; then
		echo "== host: per-sample cost of the signal backend and perf (spin, 10 kHz) x ${BENCH_REPS:-9}" >&2
		for r in $(seq 1 "${BENCH_REPS:-9}"); do
			for t in "off -" "meter-signal-hr 10000" "base -" "perf 10000"; do
				next_id h
				run_one "$id" tick ${t% *} ${t#* } spin $r "$(host_scale spin)"
			done
		done
	fi
	if want real; then
		echo "== host: real programs, meter (plugin, signal) beside perf (plain), both at 4 kHz" >&2
		for r in $(seq 1 "${BENCH_ACC_REPS:-5}"); do
			for w in bzip2 lua zstd; do
				for t in "real-perf 4000" "real-meter 4000"; do
					next_id h
					PERF=perf REAL_BACKEND=signal \
					METER_RUN=$ROOT/build/tools/meter-run \
						run_one "$id" real ${t% *} ${t#* } $w $r \
						"$(host_real_scale $w)"
				done
			done
		done
	fi
	want ovh && echo "== host: overhead (tree, matrix, threads) x $reps" >&2
	local tools=("base -" "meter-signal 1000" "meter-signal 10000"
		"meter-signal-auto 1000" "meter-signal-plugin 1000" "gprof -"
		"gperftools default"
		"gperftools 1000" "gperftools 10000" "uftrace -")
	want ovh || reps=0
	want ovh && keep_calibration
	for r in $(seq 1 "$reps"); do
		for w in tree matrix threads; do
			for t in "${tools[@]}"; do
				next_id h
				run_one "$id" ovh ${t% *} ${t#* } $w $r "$(host_scale $w)"
			done
		done
	done

	want acc && echo "== host: accuracy (split, appel)" >&2
	want acc || return 0
	for r in $(seq 1 "${BENCH_ACC_REPS:-5}"); do
		for w in split appel; do
			for t in "gprof -" "gperftools 1000" "uftrace -" "meter-signal 1000"; do
				next_id h
				run_one "$id" acc ${t% *} ${t#* } $w $r "$(host_scale $w)"
			done
		done
	done
	# gperftools: its own symbolizer, on the host
	for d in "$OUT"/runs/h*; do
		[ -f "$d/cpu.prof" ] || continue
		google-pprof --text "$B/workloads-gperf" "$d/cpu.prof" > "$d/pprof.txt" 2>/dev/null || true
		rm -f "$d/cpu.prof"
	done
}

# --- VM: meter.ko and perf ------------------------------------------------------
vm_part() {
	local reps=${BENCH_REPS:-9} r w t rate
	PERF=$B/perf
	[ -x "$PERF" ] || PERF=perf
	want tick && echo "== vm: per-tick cost (spin, 10 kHz) x $reps" >&2
	want tick || reps=0
	for r in $(seq 1 "$reps"); do
		for t in "off -" "meter-kernel 10000" "meter-signal-hr 10000" \
			 "base -" "perf 10000"; do
			next_id v
			run_one "$id" tick ${t% *} ${t#* } spin $r "$(vm_scale spin)"
		done
	done

	want res && echo "== vm: resolution (spin, 1 kHz and 10 kHz)" >&2
	want res && for rate in 1000 10000; do
		for t in meter-kernel meter-signal gperftools perf; do
			next_id v
			run_one "$id" res $t $rate spin 1 "$(vm_scale spin)"
		done
	done

	reps=${BENCH_REPS:-5}
	want ovh && echo "== vm: overhead (tree, matrix, threads) x $reps" >&2
	want ovh || reps=0
	local tools=("base -" "meter-kernel 1000" "meter-kernel 10000"
		"meter-auto 1000" "meter-auto 10000" "meter-plugin 1000"
		"meter-plugin 10000" "meter-signal 1000"
		"perf default" "perf 1000" "perf 10000")
	want ovh && keep_calibration
	for r in $(seq 1 "$reps"); do
		for w in tree matrix threads; do
			for t in "${tools[@]}"; do
				next_id v
				run_one "$id" ovh ${t% *} ${t#* } $w $r "$(vm_scale $w)"
			done
		done
	done

	if want real; then
		echo "== vm: real programs, meter (plugin, kernel) beside perf (plain), both at 4 kHz" >&2
		for r in $(seq 1 "${BENCH_ACC_REPS:-5}"); do
			for w in bzip2 lua zstd; do
				for t in "real-plain -" "real-perf 4000" "real-meter 4000"; do
					next_id v
					run_one "$id" real ${t% *} ${t#* } $w $r "$(vm_scale $w)"
				done
			done
		done
	fi

	want acc && echo "== vm: accuracy (split, appel; 10 kHz)" >&2
	want acc || return 0
	for r in $(seq 1 "${BENCH_ACC_REPS:-5}"); do
		for w in split appel; do
			for t in meter-kernel meter-auto perf-g; do
				next_id v
				run_one "$id" acc $t 10000 $w $r "$(vm_scale $w)"
			done
		done
	done
	# perf.data is read on the host (faster than under TCG).
}

# --- VM with the instruction counter and the deterministic clock -----------
# (selftests/vm-run --count-insns --icount: one vCPU, guest time = guest
# instructions).  Every run's instructions are in runs/ID/icount.txt.
icount_part() {
	local reps=${BENCH_INSN_REPS:-2} r t rate v sc s=$(vm_scale spin)
	PERF=$B/perf
	[ -x "$PERF" ] || PERF=perf
	ICOUNT_CMD=$ROOT/build/icount/vm-icount
	# khugepaged scans every 10 s of guest time, whichever run that falls
	# in: millions of kernel instructions that no tool caused
	echo never > /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true
	echo never > /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || true
	# the soft-lockup watchdog's hrtimer fires every 4 s of guest time
	# and sits in the timer tree meter.ko's timer is queued in at every
	# switch: whether it lay before or after moved switch_insns by 10 %
	# between repetitions (500 to 600); off, they agree within 0.6 %
	echo 0 > /proc/sys/kernel/watchdog 2>/dev/null || true
	if want tick; then
		# the tick's instructions: each tool at SCALE and 2 SCALE; the
		# difference over the difference in ticks (bench/summarize.py)
		echo "== icount: per-tick instructions (spin, 10 kHz) x $reps" >&2
		# repetition 0 warms up (the first runs fault in binaries and
		# libraries, in the kernel) and is left out
		for r in $(seq 0 "$reps"); do
			for sc in "$s" $((2 * s)); do
				for t in "off -" "meter-kernel 10000" "meter-floor 10000" \
					 "meter-perfclock 10000" "meter-perfclock-floor 10000" \
					 "meter-signal-hr 10000" "base -" "perf 10000"; do
					next_id i
					run_one "$id" "$([ $r = 0 ] && echo warmup || echo insns)" \
						${t% *} ${t#* } spin $r "$sc"
				done
			done
		done
		echo "== icount: interrupts taken per CPU-second (1, 10, 50 kHz)" >&2
		for rate in 1000 10000 50000; do
			for t in meter-kernel meter-perfclock; do
				next_id i
				run_one "$id" rate $t $rate spin 1 "$s"
			done
		done
	fi
	if want switch; then
		# what each CPU-clock design adds to a context switch of a
		# registered thread: two threads yielding to each other, at
		# 1 Hz, SCALE and 2 SCALE.  Each thread has well under its 1 s
		# of CPU: the timer never fires and, its expiry never the
		# earliest, is never the one the clock event is programmed
		# for.  At 10 Hz the few expiries in a run came where they
		# fell and moved the figure by 4 % between repetitions.
		echo "== icount: per-switch instructions (switch) x $reps" >&2
		for r in $(seq 0 "$reps"); do
			for sc in 50 100; do
				for t in off meter-kernel meter-perfclock; do
					next_id i
					run_one "$id" "$([ $r = 0 ] && echo warmup || echo switch)" \
						$t 1 switch $r "$sc"
				done
			done
		done
	fi
	if want callcost; then
		# per call: user instructions of N and 2N calls (bench/callcost.sh
		# built the variants on the host)
		echo "== icount: instructions per call" >&2
		for v in baseline manual flat plugin plugin_flat auto patched; do
			# patched: the plain build, its entries patched at load
			local bin=$v
			local -a pre=()
			[ $v = patched ] && { bin=baseline; pre=(LD_PRELOAD="$ROOT/build/lib/libmeter-patch.so" METER_PATCH=exe); }
			for sc in 100000 200000; do
				next_id i
				mkdir -p "$OUT/runs/$id"
				env "${pre[@]}" METER_BACKEND=off METER_QUIET=1 \
				METER_OUTPUT=/dev/null METER_CACHE_DIR=off \
					"$ICOUNT_CMD" -o "$OUT/runs/$id/icount.txt" -- \
					"$ROOT/build/bench/callcost/$bin" "$sc" > /dev/null 2>&1 &&
					echo "$id percall $v - callcost 1 ok $sc" >> "$OUT/index"
			done
		done
	fi
	# the overheads (in instructions: one repetition is enough), the
	# accuracy and the real programs again, now on the exact clock
	local keep="" p
	for p in ovh acc real; do want $p && keep="$keep $p"; done
	phases=" $keep " BENCH_REPS=1 vm_part
	ICOUNT_CMD=
}

# perf.data files from the VM: the samples' symbols, on the host (the
# binaries are the same files at the same paths).
perf_scripts() {
	local d
	for d in "$OUT"/runs/*; do
		# meter's reports of a real program: as meter reports it by
		# default (by address, with meter.ko), with --correct, and as
		# taken (--no-correction)
		if [ -f "$d/realprog" ] && [ -f "$d/profile.json" ]; then
			"$ROOT/build/tools/meter-stat" -i "$d/profile.json" -f flat \
				> "$d/flat.txt" 2>&1 || true
			"$ROOT/build/tools/meter-stat" -i "$d/profile.json" -f flat \
				--correct > "$d/flat-corrected.txt" 2>&1 || true
			"$ROOT/build/tools/meter-stat" -i "$d/profile.json" -f flat \
				--no-correction > "$d/flat-taken.txt" 2>&1 || true
		fi
		[ -f "$d/perf.data" ] || continue
		if [ -f "$d/realprog" ]; then
			# each frame's inlined functions too (DWARF), innermost first
			perf script -i "$d/perf.data" -F ip,sym,dso --inline > "$d/perf.script" 2>/dev/null || true
		else
			perf script -i "$d/perf.data" -F ip,sym > "$d/perf.script" 2>/dev/null || true
		fi
		rm -f "$d/perf.data"
	done
}

case ${1:-all} in
host)
	OUT=$2; mkdir -p "$OUT"; host_part ;;
vm)
	OUT=$2; mkdir -p "$OUT"; vm_part ;;
icount)
	OUT=$2; mkdir -p "$OUT"; icount_part ;;
report)
	python3 "$ROOT/bench/summarize.py" "$2" ;;
all)
	t0=$(date +%s)
	OUT=${BENCH_OUT:-$ROOT/build/bench/out}
	rm -rf "$OUT"
	mkdir -p "$OUT/host" "$OUT/vm"
	for c in gprof uftrace google-pprof perf valgrind python3 bc; do
		command -v $c >/dev/null || die "$c is missing: run bench/install-deps"
	done
	[ -f /usr/lib/x86_64-linux-gnu/libprofiler.so ] ||
		[ -n "$(ldconfig -p | grep libprofiler.so)" ] ||
		die "libprofiler is missing: run bench/install-deps"
	realprogs_perf_binary "$B/perf"
	PERF=perf
	if want real; then
		echo "== host: building bzip2 and lua5.4 from apt-get source (bench/realprogs.sh)" >&2
		realprogs_build "$RP" >&2 || die "bench/realprogs.sh could not build the real programs"
	fi
	# the host's load, for the record
	cut -d' ' -f1-3 /proc/loadavg > "$OUT/loadavg.before"
	OUT=$OUT/host host_part
	echo "== vm: booting (TCG)" >&2
	vmrc=0
	envs=(--env "BENCH_PHASES=$phases" --env "BENCH_QUICK=$quick")
	[ -z "${BENCH_REPS:-}" ] || envs+=(--env "BENCH_REPS=$BENCH_REPS")
	[ -z "${BENCH_ACC_REPS:-}" ] || envs+=(--env "BENCH_ACC_REPS=$BENCH_ACC_REPS")
	# Each VM leaves out the results of the parts before it (the VM part's
	# perf.data files alone are over 100 MB: the counted VM's 1 GiB could
	# not unpack its initramfs with them).
	leave=()
	[ ! -d "$OUT/host" ] || leave+=(--leave "$OUT/host")
	# 3 GiB: the real programs' perf.data (DWARF stacks, 4 KiB a sample)
	# live in the VM's memory until the host reads them
	"$ROOT/selftests/vm-run" --timeout 1200 --mem 3072 --out "$OUT/vm" "${leave[@]}" "${envs[@]}" -- \
		"$ROOT/bench/run.sh" vm "$OUT/vm" >&2 || vmrc=$?
	[ $vmrc = 0 ] || echo "bench: the VM part failed (status $vmrc)" >&2
	echo "== vm: booting (TCG, instruction counter, -icount clock)" >&2
	mkdir -p "$OUT/icount"
	[ ! -d "$OUT/vm" ] || leave+=(--leave "$OUT/vm")
	"$ROOT/selftests/vm-run" --count-insns --icount --timeout 1800 --mem 3072 \
		--out "$OUT/icount" "${leave[@]}" "${envs[@]}" -- \
		"$ROOT/bench/run.sh" icount "$OUT/icount" >&2 || vmrc=$?
	[ $vmrc = 0 ] || echo "bench: the VM part failed (status $vmrc)" >&2
	OUT=$OUT/icount perf_scripts
	OUT=$OUT/vm perf_scripts
	OUT=$OUT/host perf_scripts
	echo "wall_s=$(( $(date +%s) - t0 ))" > "$OUT/wall"
	cut -d' ' -f1-3 /proc/loadavg > "$OUT/loadavg.after"
	python3 "$ROOT/bench/summarize.py" "$OUT"
	# A broken tool fails the run (after the report); numbers never do.
	if [ $vmrc != 0 ] || grep -q ' failed$' "$OUT"/host/index "$OUT"/vm/index "$OUT"/icount/index 2>/dev/null; then
		echo "bench: some runs failed (see above and $OUT/*/runs/*/stderr)" >&2
		exit 1
	fi
	;;
*) die "usage: bench/run.sh [host OUT | vm OUT | icount OUT | report OUT]" ;;
esac
