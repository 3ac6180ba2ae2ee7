#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/python.sh [REPS]: meter's Python integration against cProfile and
# yappi (python3-yappi, its CPU clock, builtins off as its default), on
# Debian's /usr/bin/python3.  Prints three tables and, as its last line,
# one JSON object (Documentation/performance.md, "Python").
#
#   per call    instructions a Python call costs over the plain call, from
#               callgrind: a loop of N and of 2N calls of an empty function,
#               the difference over N (start-up cancels out).  meter with
#               METER_BACKEND=off (sampling does not touch the call path),
#               in its default mode (PEP 523) and with builtins
#               (METER_PYTHON_BUILTINS=1, the profile hook).
#   whole run   the three real programs of test_py_realprog (docutils,
#               pygments, networkx): instructions of the whole run under
#               each tool (callgrind, meter's backend off), and user+system
#               CPU time with meter on its signal backend through meter-run,
#               REPS rounds (default 5) with the tools interleaved, medians;
#               overhead = tool / plain - 1, and meter's over cProfile's.
#   self shares the functions with 5 % or more of a program's self time in
#               meter's profile, beside meter's with builtins on, and
#               cProfile's (builtins on) and yappi's (off) tottime shares.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${1:-5}
PY=/usr/bin/python3
OUT=${BENCH_PY_OUT:-$ROOT/build/bench/python}
RUN=$ROOT/build/tools/meter-run
PKGS=/usr/lib/python3/dist-packages
SPEC=/usr/share/doc/docutils-doc/docs/ref/rst/restructuredtext.txt
mkdir -p "$OUT"
export PYTHONHASHSEED=0 PYTHONPATH=$ROOT/build/python
[ -x "$RUN" ] && ls build/python/meter/_meter*.so > /dev/null 2>&1 ||
	make -s all

cat > "$OUT/calls.py" <<'EOF'
import sys


def f():
    pass


def main(n):
    for _ in range(n):
        f()


main(int(sys.argv[1]))
EOF

# The command line of tool $1 running the Python program "$@".
tool_cmd() {
	local t=$1
	shift
	case $t in
	plain) echo "$PY" "$@" ;;
	meter|meter-builtins) echo "$PY" -m meter._run "$@" ;;
	cprofile) echo "$PY" -m cProfile -o "$OUT/cprofile.prof" "$@" ;;
	yappi) echo "$PY" -m yappi -o "$OUT/yappi.prof" -f pstat "$@" ;;
	esac
}

# Its environment: meter's, the backend off (sampling does not touch the
# call path), given to valgrind itself (it does not follow an exec of env).
tool_env() {
	case $1 in
	meter) echo METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null ;;
	meter-builtins) echo METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null METER_PYTHON_BUILTINS=1 ;;
	*) echo METER_UNUSED=1 ;;
	esac
}

insns() { # tool, then the Python command: the instructions callgrind counts
	local t=$1
	shift
	# shellcheck disable=SC2046
	env $(tool_env "$t") valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null "$@" 2>&1 > /dev/null |
		awk '/Collected/ { print $4 }'
}

TOOLS="plain meter meter-builtins cprofile yappi"
"$PY" -c 'import yappi' 2> /dev/null || TOOLS=${TOOLS% yappi}

echo "== per call (callgrind, instructions a call; N = 100000)" >&2
declare -A per
for t in $TOOLS; do
	# shellcheck disable=SC2046
	a=$(insns "$t" $(tool_cmd "$t" "$OUT/calls.py" 100000))
	# shellcheck disable=SC2046
	b=$(insns "$t" $(tool_cmd "$t" "$OUT/calls.py" 200000))
	per[$t]=$(( (b - a) / 100000 ))
done

prog_args() { # the real program's arguments
	case $1 in
	docutils) echo /usr/bin/rst2html "$SPEC" ;;
	pygments) echo /usr/bin/pygmentize -f html -O full -o "$OUT/states.html" "$PKGS/docutils/parsers/rst/states.py" ;;
	networkx) echo "$ROOT/selftests/host/data/py/graphs.py" 300 ;;
	esac
}
PROGS="docutils pygments networkx"

echo "== whole run, instructions (callgrind)" >&2
declare -A whole
for p in $PROGS; do
	for t in $TOOLS; do
		if [ "$t" = meter-builtins ]; then continue; fi
		# shellcheck disable=SC2046
		whole[$p,$t]=$(insns "$t" $(tool_cmd "$t" $(prog_args "$p")))
	done
done

echo "== whole run, CPU time, $REPS interleaved rounds" >&2
cpu_of() { # user+system seconds of a command
	/usr/bin/time -f '%U %S' -o "$OUT/time" "$@" > /dev/null 2>&1 || true
	awk '{ printf "%.3f", $1 + $2 }' "$OUT/time"
}
declare -A cpu
for r in $(seq "$REPS"); do
	for p in $PROGS; do
		# shellcheck disable=SC2046
		cpu[$p,plain,$r]=$(cpu_of "$PY" $(prog_args "$p"))
		# shellcheck disable=SC2046
		cpu[$p,meter,$r]=$(cpu_of env METER_QUIET=1 "$RUN" -b signal -o /dev/null -- "$PY" $(prog_args "$p"))
		# shellcheck disable=SC2046
		cpu[$p,cprofile,$r]=$(cpu_of $(tool_cmd cprofile $(prog_args "$p")))
		if [[ " $TOOLS " = *" yappi "* ]]; then
			# shellcheck disable=SC2046
			cpu[$p,yappi,$r]=$(cpu_of $(tool_cmd yappi $(prog_args "$p")))
		fi
	done
done

echo "== self shares (meter signal backend, cProfile, yappi)" >&2
for p in $PROGS; do
	# shellcheck disable=SC2046
	METER_QUIET=1 "$RUN" -b signal -F 10000 -f json -o "$OUT/$p.meter.json" -- "$PY" $(prog_args "$p") > /dev/null 2>&1 || true
	# shellcheck disable=SC2046
	METER_PYTHON_BUILTINS=1 METER_QUIET=1 "$RUN" -b signal -F 10000 -f json -o "$OUT/$p.meter-builtins.json" -- "$PY" $(prog_args "$p") > /dev/null 2>&1 || true
	# shellcheck disable=SC2046
	$(tool_cmd cprofile $(prog_args "$p")) > /dev/null 2>&1 && cp "$OUT/cprofile.prof" "$OUT/$p.cprofile.prof"
	if [[ " $TOOLS " = *" yappi "* ]]; then
		# shellcheck disable=SC2046
		$(tool_cmd yappi $(prog_args "$p")) > /dev/null 2>&1 && cp "$OUT/yappi.prof" "$OUT/$p.yappi.prof"
	fi
done

{
	for t in $TOOLS; do echo "per $t ${per[$t]}"; done
	for k in "${!whole[@]}"; do echo "whole ${k/,/ } ${whole[$k]}"; done
	for k in "${!cpu[@]}"; do echo "cpu ${k//,/ } ${cpu[$k]}"; done
} > "$OUT/figures"
"$PY" "$ROOT/bench/python_summary.py" "$OUT" "$PROGS"
