#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Whole-run overhead of meter-run --patch on plain builds (issue 40),
# beside the tools a user would take instead: uftrace's dynamic patching
# of the same binary (uftrace record -P .), and gprof and uftrace on the
# -pg build of the same flags.  On the host, CPU time (user + system) of
# the whole command over the plain build's, median of ROUNDS interleaved
# rounds (bench/timeit: the command and its children); tree
# (bench/workloads.c, -O2, scale 100) and bzip2 (Debian's source and
# flags, -9 over Lua's sources 4 times).  meter with the signal backend
# at 1 kHz, what it uses without meter.ko.  Prints a table and a JSON
# line.  Usage: bench/patch_overhead.sh [ROUNDS]  (default 5)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
ROUNDS=${1:-5}
B=build/bench/bin
RP=build/realprogs
T=$(mktemp -d /tmp/patch_overhead.XXXXXX)
trap 'rm -rf "$T"' EXIT
. bench/realprogs.sh

[ -x $B/workloads-plain ] && [ -x $B/workloads-pg ] && [ -x $B/timeit ] ||
	make -s bench-build >&2
[ -f build/lib/libmeter-patch.so ] || make -s build/lib/libmeter-patch.so >&2
realprogs_build "$ROOT/$RP" bzip2 >&2
mapfile -t BZARGS < <(realprogs_args bzip2 "$ROOT/$RP" 4)

# the command of one variant on one program, a word a line
cmd_of() { # prog variant
	local bin pg
	case $1 in
	tree) bin=$ROOT/$B/workloads-plain; pg=$ROOT/$B/workloads-pg ;;
	bzip2) bin=$ROOT/$RP/bzip2/plain/bzip2; pg=$ROOT/$RP/bzip2/pg-deb/bzip2 ;;
	esac
	case $2 in
	plain) echo "$bin" ;;
	meter-patch) printf '%s\n' env LD_PRELOAD="$ROOT/build/lib/libmeter-patch.so" \
		METER_PATCH=exe METER_BACKEND=signal METER_QUIET=1 \
		METER_OUTPUT=/dev/null "$bin" ;;
	uftrace-P) printf '%s\n' uftrace record -P . -d "$T/uft" "$bin" ;;
	gprof) echo "$pg" ;;
	uftrace-pg) printf '%s\n' uftrace record -d "$T/uft" "$pg" ;;
	esac
	case $1 in
	tree) printf '%s\n' tree 100 ;;
	bzip2) printf '%s\n' "${BZARGS[@]}" ;;
	esac
}

cpu_s() { # prog variant: one run's CPU time, children included (timeit)
	local -a c
	mapfile -t c < <(cmd_of "$1" "$2")
	rm -rf "$T/uft" "$T/gmon.out"
	(cd "$T" && "$ROOT/$B/timeit" "${c[@]}" > /dev/null 2> "$T/time")
	sed -n 's/^timeit cpu_ns=\([0-9]*\).*/\1/p' "$T/time" |
		awk '{ printf "%.4f\n", $1 / 1e9 }'
}

command -v uftrace > /dev/null || { echo "uftrace is not installed" >&2; exit 1; }
variants="plain meter-patch uftrace-P gprof uftrace-pg"
declare -A runs
for r in $(seq 1 "$ROUNDS"); do
	for p in tree bzip2; do
		for v in $variants; do
			runs[$p.$v]+="$(cpu_s $p $v) "
		done
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
printf '%-10s %-34s %10s %10s\n' program tool "cpu s" overhead
json="{\"rounds\":$ROUNDS"
for p in tree bzip2; do
	base=$(echo "${runs[$p.plain]}" | median)
	for v in $variants; do
		m=$(echo "${runs[$p.$v]}" | median)
		o=$(echo "scale=1; 100 * ($m - $base) / $base" | bc)
		case $v in
		plain) label="plain build" ;;
		meter-patch) label="meter --patch (plain build)" ;;
		uftrace-P) label="uftrace record -P . (plain build)" ;;
		gprof) label="gprof (-pg build)" ;;
		uftrace-pg) label="uftrace record (-pg build)" ;;
		esac
		printf '%-10s %-34s %10s %9s%%\n' $p "$label" "$m" "$o"
		json+=",\"$p.$v\":{\"cpu_s\":$m,\"overhead_pct\":$o}"
	done
done
echo "$json}"
