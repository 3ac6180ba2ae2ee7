#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Python programs under meter (python/, Documentation/python.md), on the
# signal backend (selftests/vm/test_py_kernel runs it in the VM on the
# kernel backend): a program with known counts gives them exactly (recursion,
# generators counted once however often resumed, exceptions through four
# frames, deep recursion, two threads), its stacks stay balanced, records
# carry file and line, builtins get records of their own when asked; the
# program runs as a script, with -m and with -c, through meter-run and
# through python3 -m meter; sys.exit and an uncaught exception still give
# a profile; a program that takes the hook, deletes functions and raises
# from __del__ neither crashes nor loses what was counted; asyncio tasks
# interleaving keep their own stacks; an os.fork() child is followed; a C extension
# built with meter's plugin continues the stack into native frames and
# back into Python, in folded, pprof and HTML output.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
PY=/usr/bin/python3
DATA=$ROOT/selftests/host/data/py
Q="$PY $ROOT/selftests/host/py_profile.py"
BACKEND=${METER_PY_BACKEND:-signal}
NATIVE=$ROOT/build/selftests/py

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_py_counts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..26"

if [ ! -x "$PY" ] || ! ls "$ROOT"/build/python/meter/_meter*.so > /dev/null 2>&1; then
	for i in $(seq 26); do skip "python test $i" "no $PY or no build/python (python3-dev)"; done
	exit 0
fi

run() { run_json "$1" "$PY" "${@:2}"; } # out.json, then the Python command line

run "$tmp/k.json" "$DATA/known.py"
check "known counts: fib 1973, gen 2 (resumes are not calls), boom 20, catcher 5, deep 901, spin 2, worker 1" \
	want_calls "$tmp/k.json" __main__.fib=1973 __main__.gen=2 \
		__main__.boom=20 __main__.catcher=5 __main__.deep=901 \
		__main__.spin=2 __main__.worker=1 __main__.main=1
check "a __getitem__ reached by subscripts in warmed-up code: all 50 calls (CPython 3.11 inlines them past PEP 523)" \
	want_calls "$tmp/k.json" __main__.Grid.__getitem__=50

$Q tails "$tmp/k.json" __main__.spin 2 | awk '{ print $1 }' | sort -u > "$tmp/tails"
check "stacks balanced after exceptions and recursion: spin under main and worker only" \
	bash -c "[ \"\$(tr '\n' ' ' < '$tmp/tails')\" = '__main__.main;__main__.spin __main__.worker;__main__.spin ' ]" ||
	diag "$tmp/tails"

check "each thread's spin is sampled on its own thread" \
	$PY - "$tmp/k.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
names = {f['id']: f['name'] for f in p['functions']}
tids = {}
for s in p['stacks']:
    fr = [names[i] for i in s['frames']]
    if fr[-1] == '__main__.spin':
        tids.setdefault(fr[-2], set()).add(s['tid'])
assert set(tids) == {'__main__.main', '__main__.worker'}, tids
assert not tids['__main__.main'] & tids['__main__.worker'], tids
PY

check "records carry file and line: __main__.fib at known.py:9" \
	bash -c "[ \"\$($Q source '$tmp/k.json' __main__.fib)\" = '$DATA/known.py:9' ]"

check "Python records carry their calibrated call cost, above a C call's (the header's)" \
	$PY - "$tmp/k.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
fib = [f for f in p["functions"] if f["name"] == "__main__.fib"][0]
assert fib.get("cost_ps", 0) > p["call_cost_ps"] > 0, (fib, p["call_cost_ps"])
PY

check "builtins have no records by default (their time is their caller's)" \
	want_calls "$tmp/k.json" math.gcd=0

METER_PYTHON_BUILTINS=1 run "$tmp/b.json" "$DATA/known.py"
check "builtins on: math.gcd 7 calls, a list subclass's append is list.append, Python counts unchanged" \
	bash -c "$(declare -f want_calls); Q='$Q'; want_calls '$tmp/b.json' math.gcd=7 \
		__main__.fib=1973 __main__.gen=2 __main__.boom=20 __main__.deep=901 &&
		[ \$($Q calls '$tmp/b.json' list.append) -ge 1 ] &&
		[ \$($Q calls '$tmp/b.json' __main__.Bag.append) = 0 ]"

(cd "$DATA" && METER_QUIET=1 "$RUN" -b "$BACKEND" -f json -o "$tmp/m.json" -- "$PY" -m known 1000 \
	> /dev/null 2>&1)
check "python3 -m MODULE: the module runs as __main__ with its counts" \
	want_calls "$tmp/m.json" __main__.fib=1973 __main__.deep=901

run "$tmp/c.json" -c 'def f(): pass
for _ in range(10): f()'
check "python3 -c: __main__.f 10 calls" want_calls "$tmp/c.json" __main__.f=10

run "$tmp/x.json" -u -X dev "$DATA/known.py" 1000
check "interpreter options before the script stay the interpreter's" \
	want_calls "$tmp/x.json" __main__.fib=1973

run "$tmp/exit.json" -c 'import sys
def f(): sys.exit(3)
f()'
st=$?
check "sys.exit(3): status 3 and a profile with f's call" \
	bash -c "[ $st = 3 ] && $(declare -f want_calls); Q='$Q'; want_calls '$tmp/exit.json' __main__.f=1"

run "$tmp/raise.json" -c 'def f(): raise KeyError("uncaught")
f()'
st=$?
check "an uncaught exception: status 1, the traceback, and a profile" \
	bash -c "[ $st = 1 ] && grep -q 'KeyError' '$tmp/stderr' &&
		 $(declare -f want_calls); Q='$Q'; want_calls '$tmp/raise.json' __main__.f=1"

METER_QUIET=1 PYTHONPATH=$ROOT/build/python "$PY" -m meter -b "$BACKEND" -f flat \
	"$DATA/known.py" 1000 > "$tmp/front" 2> /dev/null
check "python3 -m meter prints meter-run's report: fib's 1973 calls" \
	bash -c "flat_rows() { $(declare -f flat_rows | tail -n +2); }
		 flat_rows '$tmp/front' | awk '\$NF == \"__main__.fib\" && \$4 == 1973 { h = 1 } END { exit !h }'" ||
	diag "$tmp/front"

METER_QUIET=1 PYTHONPATH=$ROOT/build/python METER_BACKEND=signal \
	METER_OUTPUT=$tmp/api.json "$PY" -c '
import meter
def f(): pass
f(); f()
with meter.profile():
    for _ in range(5): f()
f()
print(meter.start(), meter.stop(), meter.stop())' > "$tmp/api.out" 2>&1
check "import meter: only the calls inside meter.profile() count; start/stop say whether they changed anything" \
	bash -c "$(declare -f want_calls); Q='$Q'; want_calls '$tmp/api.json' __main__.f=5 &&
		 grep -qx 'True True False' '$tmp/api.out'" || diag "$tmp/api.out"

run "$tmp/hostile.json" "$DATA/hostile.py"
st=$?
check "hostile program: runs to its end (status 0), its counts intact; the function made at run time is victim:1" \
	bash -c "[ $st = 0 ] && grep -qx 'hostile: done' '$tmp/stdout' &&
		 $(declare -f want_calls); Q='$Q'; want_calls '$tmp/hostile.json' \
			__main__.before=3 __main__.victim=1 __main__.victim:1=1 \
			__main__.Noisy.__del__=1" ||
	{ diag "$tmp/stdout"; diag "$tmp/stderr"; }

METER_PYTHON_BUILTINS=1 run "$tmp/taken.json" -c '
import sys
def f(): pass
f()
sys.setprofile(None)
f()'
check "builtins mode: sys.setprofile taking the hook is reported on stderr" \
	grep -q "took meter's profile hook" "$tmp/stderr" || diag "$tmp/stderr"

run "$tmp/cprof.json" -c '
import cProfile
def f(): pass
pr = cProfile.Profile()
pr.enable()
for _ in range(4): f()
pr.disable()
print(pr.getstats()[0].callcount if False else "ran")'
check "cProfile inside a program profiled by meter: both count (4 calls of f)" \
	want_calls "$tmp/cprof.json" __main__.f=4

run "$tmp/aio.json" "$DATA/aio.py"
$Q tails "$tmp/aio.json" __main__.crunch 3 > "$tmp/aio.counted"
awk '{ print $1 }' "$tmp/aio.counted" | sort -u > "$tmp/aio.tails"
check "asyncio: two tasks interleaving on a thread, each coroutine one call, crunch only ever under the task that runs it" \
	bash -c "$(declare -f want_calls); Q='$Q'; want_calls '$tmp/aio.json' \
			__main__.crunch=60 __main__.task_a=1 __main__.task_b=1 &&
		 [ \"\$(cut -d';' -f2- '$tmp/aio.tails' | sort -u | tr '\n' ' ')\" = \
		   '__main__.task_a;__main__.crunch __main__.task_b;__main__.crunch ' ]" ||
	{ $Q calls "$tmp/aio.json" __main__.crunch __main__.task_a \
		__main__.task_b | diag; diag "$tmp/aio.counted" "$tmp/stderr"; }

METER_QUIET=1 "$RUN" -b "$BACKEND" --follow-fork -f json -o "$tmp/fork.json" -- \
	"$PY" "$DATA/forks.py" > /dev/null 2>&1
check "os.fork() under --follow-fork: the parent's 3 calls, 4 of a child that calls sys.exit, 5 of one that calls os._exit" \
	want_calls "$tmp/fork.json" __main__.f=12 __main__.child=2

# not under meter-run, which starts meter before any thread: the signal
# backend's file (what it shows is the Python side's, on any backend)
PYTHONPATH=$ROOT/build/python:$NATIVE METER_BACKEND=signal METER_QUIET=1 \
	METER_OUTPUT=$tmp/late.json "$PY" "$DATA/threads_late.py" > /dev/null 2>&1
check "threads meter did not start: one running before start(), one made by C (10 and 6 calls)" \
	want_calls "$tmp/late.json" __main__.early=10 __main__.from_c=6

MIXED="__main__.main;call_back;__main__.cb;__main__.spin"
NATIVE_LEAF="__main__.main;native_spin;spin_loop"
for f in folded pprof html; do
	PYTHONPATH=$NATIVE METER_QUIET=1 "$RUN" -b "$BACKEND" -f $f -o "$tmp/mixed.$f" \
		-- "$PY" "$DATA/mixed.py" > /dev/null 2>&1
done
check "mixed stacks, folded: Python, the plugin-built extension, Python again; and a native leaf" \
	bash -c "grep -q '$MIXED [0-9]*\$' '$tmp/mixed.folded' &&
		 grep -q '$NATIVE_LEAF [0-9]*\$' '$tmp/mixed.folded'" ||
	grep -E 'spin' "$tmp/mixed.folded" | sed 's/^/# /'
if command -v go > /dev/null 2>&1; then
	go_pprof -traces "$tmp/mixed.pprof" > "$tmp/traces" 2>&1
	check "mixed stacks, pprof: one trace runs spin, cb, call_back, main" \
		awk '/^-----/ { t = "" ; next }
		     { t = t " " $NF }
		     t ~ / __main__.spin __main__.cb call_back __main__.main/ { h = 1 }
		     END { exit !h }' "$tmp/traces" || diag "$tmp/traces"
else
	skip "mixed stacks, pprof" "no go (golang-go)"
fi
if command -v go > /dev/null 2>&1; then
	METER_QUIET=1 "$RUN" -b "$BACKEND" -f pprof -o "$tmp/k.pb.gz" -- \
		"$PY" "$DATA/known.py" > /dev/null 2>&1
	go_pprof -source_path=/ -list '__main__.spin' "$tmp/k.pb.gz" > "$tmp/list" 2>&1
	check "pprof -list finds the Python source: spin's lines from known.py" \
		grep -Eq '^ +[0-9.]+m?s +[0-9.]+m?s +35:def spin\(n\):' "$tmp/list" ||
		diag "$tmp/list"
else
	skip "pprof -list finds the Python source" "no go (golang-go)"
fi
for f in flat html; do
	METER_QUIET=1 "$RUN" -b "$BACKEND" -f $f -o "$tmp/src.$f" -- \
		"$PY" "$DATA/known.py" 1000 > /dev/null 2>&1
done
check "text and HTML say where a function is defined: fib at known.py:9" \
	bash -c "grep -qx '  __main__.fib  $DATA/known.py:9' '$tmp/src.flat' &&
		 grep -q 'defined in <code>$DATA/known.py:9</code>' '$tmp/src.html'"
check "mixed stacks, HTML: the page holds the native and the Python frames" \
	bash -c "grep -q '\"call_back\"' '$tmp/mixed.html' && grep -q '\"__main__.cb\"' '$tmp/mixed.html'"

exit $((fails > 0))
