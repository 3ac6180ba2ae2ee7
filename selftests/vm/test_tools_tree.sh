#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-run --follow-fork finds every instrumented descendant through
# processes that are not (sh -c, xargs), with the kernel backend: 100 runs
# of primes from a shell loop and 100 from xargs, each exec'd below an
# uninstrumented sh, are 200 sessions merged, their call counts exactly
# 200 times one run's.  Without --follow-fork none of them is PROG's.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
. "$ROOT/selftests/tools_lib.sh" || exit 1
RUN=$ROOT/build/tools/meter-run
PRIMES=$ROOT/build/examples/primes
N=300

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_tree.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..4"

json() { # file, python expression over p (the profile) and calls(name)
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
calls = lambda n: sum(f["calls"] for f in p["functions"] if f["name"] == n)
print(eval(sys.argv[2]))' "$1" "$2"
}

"$RUN" -b kernel -f json -o "$tmp/one.json" -- "$PRIMES" $N > /dev/null 2>&1
one=$(json "$tmp/one.json" 'calls("is_prime")')

script="i=0; while [ \$i -lt 100 ]; do '$PRIMES' $N > /dev/null; i=\$((i + 1)); done
	seq 100 | xargs -n 1 sh -c '\"$PRIMES\" $N > /dev/null' sh"
"$RUN" --follow-fork -b kernel -f json -o "$tmp/tree.json" -- sh -c "$script" \
	> /dev/null 2> "$tmp/tree.err"
runs=$(json "$tmp/tree.json" 'p["runs"]')
calls=$(json "$tmp/tree.json" 'calls("is_prime")')
check "--follow-fork through sh -c and xargs: 200 sessions merged (runs $runs)" \
	test "${runs:-0}" = 200 || diag "$tmp/tree.err"
check "... is_prime's calls exactly 200 x one run's ($calls = 200 x ${one:-?})" \
	test -n "$one" -a "${calls:-0}" = $((200 * ${one:-0}))
check "... main's calls 200" \
	test "$(json "$tmp/tree.json" 'calls("main")')" = 200

"$RUN" -b kernel -f json -o "$tmp/flat.json" -- sh -c "$script" \
	> /dev/null 2> "$tmp/flat.err"
check "without --follow-fork: no profile of sh's descendants (status $?)" \
	test ! -s "$tmp/flat.json"

exit $((fails > 0))
