#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/byaddress.sh [OUT]: the real programs' self shares by address, on
# the deterministic clock (Documentation/performance.md, "Meter's own
# samples, by address").
#
# perf record (4 kHz, DWARF stacks) of each real program's plain build and
# of its plugin build (bench/realprogs.sh, Debian's flags), BYADDRESS_REPS
# runs each (default 3, interleaved) in the counted VM (selftests/vm-run --icount: guest time = guest
# instructions), at make bench's scales; then, on the host,
# bench/byaddress.py: the plain build by innermost inline frame, the
# plugin build the same way with the samples on meter's own instructions
# (the plugin's "<meter>" lines) counted apart.  Prints a table per
# program, of the runs' samples together, and each run's largest
# difference.  Needs bench/install-deps and `make bench-build`; about ten
# minutes.  OUT (default build/bench/byaddress) keeps the perf data.
# BYADDRESS_WHERE=host: the same on the host (a real CPU's clock), at
# make bench's host scales.
#
#   bench/byaddress.sh runs OUT   the runs (inside the VM, or on the host)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/realprogs.sh"
RP=$ROOT/build/realprogs
PROGS=${BYADDRESS_PROGS:-bzip2 lua zstd}
REPS=${BYADDRESS_REPS:-3}
WHERE=${BYADDRESS_WHERE:-vm}
scale() { realprogs_scale "$1" "$WHERE"; }

if [ "${1:-}" = runs ]; then
	out=$2
	if [ "$WHERE" = vm ]; then
		# as make bench's counted VM: no huge-page scans, no watchdog
		echo never > /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true
		echo 0 > /proc/sys/kernel/watchdog 2>/dev/null || true
	fi
	export METER_BACKEND=signal METER_PERIOD_NS=1000000000 METER_QUIET=1 METER_OUTPUT=/dev/null
	for r in $(seq 1 "$REPS"); do
		for prog in $PROGS; do
			mapfile -t args <<< "$(realprogs_args "$prog" "$RP" "$(scale "$prog")")"
			for v in plain plugin; do
				"$ROOT/build/bench/bin/perf" record -q -B -N -e task-clock -F 4000 \
					--call-graph dwarf,4096 -o "$out/$prog.$v.$r.data" -- \
					"$RP/$prog/$v/$prog" "${args[@]}" > /dev/null
			done
		done
	done
	exit 0
fi

out=${1:-$ROOT/build/bench/byaddress}
rm -rf "$out"
mkdir -p "$out" "$ROOT/build/bench/bin"
realprogs_perf_binary "$ROOT/build/bench/bin/perf"
echo "== building the real programs (bench/realprogs.sh)" >&2
realprogs_build "$RP" $PROGS >&2
# the program's own functions: the records of a run of each plugin build
for prog in $PROGS; do
	mapfile -t args <<< "$(realprogs_args "$prog" "$RP" 1)"
	METER_BACKEND=signal METER_QUIET=1 METER_OUTPUT="$out/$prog.json" \
		"$RP/$prog/plugin/$prog" "${args[@]}" > /dev/null
done
if [ "$WHERE" = host ]; then
	echo "== host: perf on the plain and the plugin builds" >&2
	"$ROOT/bench/byaddress.sh" runs "$out"
	clock="the host's CPU clock"
else
	echo "== counted VM: perf on the plain and the plugin builds" >&2
	"$ROOT/selftests/vm-run" --icount --timeout 3000 --mem 3072 --out "$out" \
		--env "BYADDRESS_PROGS=$PROGS" --env "BYADDRESS_REPS=$REPS" -- \
		"$ROOT/bench/byaddress.sh" runs "$out" >&2
	clock="deterministic clock"
fi
for prog in $PROGS; do
	a=("$RP/$prog/plain/$prog" "$out/$prog.plain.script" "$RP/$prog/plugin/$prog"
	   "$out/$prog.plugin.script" "$out/$prog.json" --tiny "$RP/$prog/plugin/$prog.tiny")
	each=
	for r in $(seq 1 "$REPS"); do
		for v in plain plugin; do
			perf script -i "$out/$prog.$v.$r.data" -F ip,sym,dso,srcline --inline \
				> "$out/$prog.$v.script" 2>/dev/null
			cat "$out/$prog.$v.script" >> "$out/$prog.$v.all"
		done
		each="$each $(python3 "$ROOT/bench/byaddress.py" "${a[@]}" --json |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["max_diff_pp"])')"
	done
	mv "$out/$prog.plain.all" "$out/$prog.plain.script"
	mv "$out/$prog.plugin.all" "$out/$prog.plugin.script"
	echo "$prog (scale $(scale "$prog")), $clock, perf at 4 kHz, $REPS runs: the plain build by inline frame; the plugin build the same, meter's own instructions apart"
	python3 "$ROOT/bench/byaddress.py" "${a[@]}"
	echo "  each run's largest difference:$each pp"
done
