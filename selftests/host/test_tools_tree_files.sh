#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Process trees with the signal backend (each process writes its own file):
# meter-run --follow-fork finds the profiles of descendants exec'd through
# sh and across an exec, each linked to its nearest profiled ancestor; the
# processes survive a JSON round trip; pprof labels each sample with its
# program, and the text and HTML reports sum them by program; the reader
# refuses a malformed "processes".
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
STAT=$ROOT/build/tools/meter-stat
PRIMES=$ROOT/build/examples/primes
APPEL=$ROOT/build/selftests/tools_appel
export METER_QUIET=1

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_tree_files.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

echo "1..10"

py() { # file, python expression over p, calls(name), procs
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
calls = lambda n: sum(f["calls"] for f in p["functions"] if f["name"] == n)
procs = p.get("processes", [])
print(eval(sys.argv[2]))' "$1" "$2"
}

"$RUN" -b signal -f json -o one.json -- "$PRIMES" 300 > /dev/null 2>&1
one=$(py one.json 'calls("is_prime")')

"$RUN" -b signal --follow-fork -f json -o tree.json -- sh -c \
	"'$APPEL' 20 exec sh -c \"'$PRIMES' 300 > /dev/null; '$PRIMES' 300 > /dev/null\"" \
	> /dev/null 2> tree.err
check "signal backend, --follow-fork through sh and an exec: tools_appel and primes x 2" \
	test "$(py tree.json 'sorted(r["command"] for r in procs)')" = \
	"['primes', 'primes', 'tools_appel']" || diag tree.err
check "... primes linked to tools_appel (its nearest profiled ancestor), tools_appel to the run" \
	test "$(py tree.json '[r["parent_cookie"] for r in procs if r["command"] == "primes"] == 2 * [r["cookie"] for r in procs if r["command"] == "tools_appel"] and not any(r["cookie"] == q["parent_cookie"] for r in procs for q in procs if q["command"] == "tools_appel")')" = True
check "... calls exact across the exec: f 20 + 2, is_prime 40 + 2 x $one" \
	test "$(py tree.json '(calls("f"), calls("is_prime"))')" = "(22, $((40 + 2 * one)))"

ok_forms=
for form in execl execle execlp execv; do
	"$RUN" -b signal --follow-fork -f json -o "$form.json" -- "$APPEL" 20 \
		"$form" /bin/true > /dev/null 2>&1
	test "$(py "$form.json" '(len(procs) or 1, calls("f"), calls("main"))')" = \
		"(1, 20, 1)" && ok_forms="$ok_forms $form"
done
check "libmeter's execl, execle, execlp and execv end the profile first (f 20 each; ok:$ok_forms)" \
	test "$ok_forms" = " execl execle execlp execv"

"$STAT" -i tree.json -f json -o again.json
check "the processes survive meter-stat's JSON round trip" \
	test "$(py tree.json 'procs')" = "$(py again.json 'procs')"

"$STAT" -i tree.json -f flat > tree.txt
check "the text report names PROG (sh) and sums the processes by program (3 of 2 programs; primes 2, tools_appel 1)" \
	awk 'NR == 1 && /^meter profile of sh \(pid/ { h = 1 }
	     /^3 processes of 2 programs/ { a = 1 }
	     a && $1 == "primes" && $2 == 2 { b = 1 }
	     a && $1 == "tools_appel" && $2 == 1 { c = 1 }
	     END { exit !(h && a && b && c) }' tree.txt || diag tree.txt

"$STAT" -i tree.json -f html -o tree.html
check "the HTML report has a Programs table (primes 2 processes, tools_appel 1)" \
	bash -c "grep -q '<section id=\"programs\">' tree.html &&
		 grep -q '<tr><td>primes</td><td>2</td>' tree.html &&
		 grep -q '<tr><td>tools_appel</td><td>1</td>' tree.html"

# one thread id, two programs (an exec): each keeps its own samples
"$RUN" -b signal --follow-fork -f pprof -o exec.pb.gz -- "$APPEL" 300 exec \
	"$PRIMES" 3000 > /dev/null 2>&1
if command -v go > /dev/null; then
	go_pprof -tags exec.pb.gz > tags.txt 2>&1
	check "pprof: samples labelled with their program, apart across an exec (tools_appel and primes)" \
		awk '/^ *program:/ { on = 1; next } /^ *[a-z]+:/ { on = 0 }
		     on && $NF == "primes" { a = 1 } on && $NF == "tools_appel" { b = 1 }
		     END { exit !(a && b) }' tags.txt || diag tags.txt
else
	skip "pprof: each sample labelled with its program" "go is not installed"
fi

sed 's/"processes": \[/"processes": {"x": [/; s/^  \]$/  ]}/' tree.json > bad.json
"$STAT" -i bad.json > /dev/null 2> bad.err
rc=$?
check "a \"processes\" that is not an array: exit 1 and a message that says so" \
	bash -c "test $rc = 1 && grep -q 'processes' bad.err" || diag bad.err
sed 's/"pid": \([0-9]*\), "cookie"/"pid": "x", "cookie"/' tree.json > bad2.json
"$STAT" -i bad2.json > /dev/null 2> bad2.err
rc=$?
check "a process row whose pid is not a number: exit 1 and processes[N] named" \
	bash -c "test $rc = 1 && grep -q 'processes\[0\]' bad2.err" || diag bad2.err

exit $((fails > 0))
