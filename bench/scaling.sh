#!/bin/bash
# SPDX-License-Identifier: MIT
#
# scaling.sh: many threads ticking at once on the session's shared state.
# 64 threads of the threads workload (manual instrumentation) under
# meter-run at 10 kHz on 2 vCPUs, in the debug kernel of make check-debug,
# whose lock statistics (CONFIG_LOCK_STAT) count how often a tick found
# the session's raw lock held by another CPU.  Prints, for each of RUNS
# runs: CPU seconds, interrupts taken and their rate per CPU-second,
# weighted samples, stacks lost, and the session lock's acquisitions and
# contentions.  `make bench-scaling`; Documentation/performance.md.
#
#   bench/scaling.sh [THREADS [HZ [SCALE [RUNS]]]]    (64 10000 2 3)
set -eu

ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
kdir=$BUILD/debug-kernel/obj
threads=${1:-64}
hz=${2:-10000}
scale=${3:-2}
runs=${4:-3}

[ -f "$kdir/include/config/kernel.release" ] ||
	{ echo "scaling.sh: no debug kernel: run make check-debug first" >&2; exit 1; }
grep -q '^CONFIG_LOCK_STAT=y' "$kdir/.config" ||
	{ echo "scaling.sh: the debug kernel has no CONFIG_LOCK_STAT" >&2; exit 1; }

out=$(mktemp -d "${TMPDIR:-/tmp}/scaling.XXXXXX")
trap 'rm -rf "$out"' EXIT
cat > "$out/inside.sh" <<EOF
set -u
for r in \$(seq $runs); do
	echo 0 > /proc/lock_stat
	echo 1 > /proc/sys/kernel/lock_stat
	BENCH_THREADS=$threads meter-run -F $hz -f json -o /tmp/s.json -- \
		$BUILD/bench/bin/workloads-manual threads $scale > /dev/null
	echo 0 > /proc/sys/kernel/lock_stat
	# lock_stat's line for the class: "name: con-bounces contentions
	# waittime-min -max -total -avg acq-bounces acquisitions ..."
	set -- \$(grep -m 1 'meter_session_lock:' /proc/lock_stat | sed 's/.*meter_session_lock://')
	con=\${2:-?}
	acq=\${8:-?}
	awk -v r=\$r -v con=\$con -v acq=\$acq '
		/^  "(samples|period_ns|ticks|lost)":/ {
			k = \$1; gsub(/[":]/, "", k); v = \$2; sub(/,\$/, "", v); x[k] = v
		}
		END {
			cpu = x["samples"] * x["period_ns"] / 1e9
			printf "run %d: %.2f CPU s, %d interrupts (%.0f per CPU-s), %d samples, %d stacks lost, session lock: %s acquisitions, %s contended\n",
				r, cpu, x["ticks"], cpu ? x["ticks"] / cpu : 0, x["samples"], x["lost"], acq, con
		}' /tmp/s.json
done
EOF
echo "# $threads threads at $hz Hz on 2 vCPUs, debug kernel $(cat "$kdir/include/config/kernel.release")"
"$ROOT/selftests/vm-run" --kernel "$kdir" --mem 2048 --add "$out" -- bash "$out/inside.sh"
