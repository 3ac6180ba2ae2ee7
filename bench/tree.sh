#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What following a process tree costs, in guest instructions (exact, from
# the VM's instruction counter, under -icount): 50 runs of `primes 300`
# from a shell loop, three ways, two rounds (TREE_ROUNDS):
#   off        the same binaries not profiled (METER_BACKEND=off)
#   kernel     profiled by meter.ko, no meter-run (sessions left in the kernel)
#   meter-run  meter-run --follow-fork: also harvested, read and merged
# Prints one line per way and round: user and kernel instructions, and the
# difference from off.  Run on the host: bench/tree.sh (boots the VM).
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)}
if [ "${1:-}" != --guest ]; then
	exec "$ROOT/selftests/vm-run" --count-insns --icount --timeout 900 -- \
		"$ROOT/bench/tree.sh" --guest
fi

P=$ROOT/build/examples/primes
RUN=$ROOT/build/tools/meter-run
STAT=$ROOT/build/tools/meter-stat
VI=$ROOT/build/icount/vm-icount
export METER_QUIET=1
tmp=$(mktemp -d)
cd "$tmp" || exit 1
script="for i in \$(seq 50); do '$P' 300 > /dev/null; done"
METER_BACKEND=kernel "$P" 300 > /dev/null	# the calibration cache, once

for r in $(seq "${TREE_ROUNDS:-2}"); do
	METER_BACKEND=off METER_OUTPUT=/dev/null "$VI" -o off sh -c "$script"
	METER_BACKEND=kernel "$VI" -o kernel sh -c "$script"
	"$VI" -o run "$RUN" --follow-fork -b kernel -f json -o tree.json -- \
		sh -c "$script"
	"$STAT" | awk '$4 == "exited" { print $1 }' | while read -r c; do
		"$STAT" delete "$c" > /dev/null
	done
	# vm-icount's line: "icount user U kernel K ..."
	awk -v r="$r" 'FNR == 1 { u[FILENAME] = $3; k[FILENAME] = $5 }
		END {
			t0 = u["off"] + k["off"]
			split("off kernel run", way, " ")
			for (i = 1; i <= 3; i++) {
				w = way[i]
				printf "round %d %-6s user %11d kernel %11d total %11d (+%.1f%%: user +%d, kernel +%d)\n", r, w, u[w], k[w], u[w] + k[w], 100 * (u[w] + k[w] - t0) / t0, u[w] - u["off"], k[w] - k["off"]
			}
		}' off kernel run
done
rm -rf "$tmp"
