#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Process trees with the kernel backend: meter-run --follow-fork finds
# every instrumented descendant through processes that are not (sh -c,
# xargs) and across exec, each process with its own session linked to its
# nearest profiled ancestor; the report sums them by program; meter-stat
# lists a tree and shows it merged.  What profiling the tree costs is
# bench/tree.sh's figure, counted exactly in instructions (make bench),
# not timed here: three timed rounds of the 200 processes under TCG took
# two and a half minutes of make check for a figure that moved with the
# host's load.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
. "$ROOT/selftests/tools_lib.sh" || exit 1
RUN=$ROOT/build/tools/meter-run
STAT=$ROOT/build/tools/meter-stat
PRIMES=$ROOT/build/examples/primes
APPEL=$ROOT/build/selftests/tools_appel
export METER_QUIET=1
N=300

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_tree.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

echo "1..16"

if ! grep -q '^meter ' /proc/modules; then
	echo "# meter.ko is not loaded"
	exit 4
fi

# The VM has no python: the one-line rows of meter's own JSON writer.
procs() { # file -> "pid cookie parent_cookie command samples calls" rows
	sed -n 's/^ *{"pid": \(-\{0,1\}[0-9]*\), "cookie": "\([0-9]*\)", "parent_cookie": "\([0-9]*\)", "command": "\([^"]*\)", "samples": \([0-9]*\), "calls": \([0-9]*\)}.*/\1 \2 \3 \4 \5 \6/p' "$1"
}
calls() { # file, function -> its calls
	sed -n "s/^ *{\"id\": [0-9]*, \"name\": \"$2\", \"calls\": \([0-9]*\),.*/\1/p" "$1" |
		awk '{ s += $1 } END { print s + 0 }'
}
samples() { # file -> the profile's samples
	sed -n 's/^  "samples": \([0-9]*\),$/\1/p' "$1"
}

# --- 200 short runs below sh -c and xargs --------------------------------

"$RUN" -b kernel -f json -o one.json -- "$PRIMES" $N > /dev/null 2>&1
one=$(calls one.json is_prime)

script="i=0; while [ \$i -lt 100 ]; do '$PRIMES' $N > /dev/null; i=\$((i + 1)); done
	seq 100 | xargs -n 1 sh -c '\"$PRIMES\" $N > /dev/null' sh"
"$RUN" --follow-fork -b kernel -f json -o tree.json -- sh -c "$script" \
	> /dev/null 2> tree.err
procs tree.json > tree.rows
nproc=$(wc -l < tree.rows)
calls=$(calls tree.json is_prime)
check "--follow-fork through sh -c and xargs: 200 processes found ($nproc)" \
	test "$nproc" = 200 || diag tree.err
check "... is_prime's calls summed exactly: $calls = 200 x ${one:-?}" \
	test -n "$one" -a "$calls" = $((200 * ${one:-0}))
check "... main's calls 200, one per process" \
	test "$(calls tree.json main)" = 200
check "... every session linked to the run's token (no profiled ancestor)" \
	awk '{ c[$2] = 1; p[$3] = 1 } END { for (x in p) if (!(x in c)) n++; exit n != 1 }' tree.rows
check "... the processes' samples add up to the profile's ($(samples tree.json))" \
	test "$(awk '{ s += $5 } END { print s + 0 }' tree.rows)" = "$(samples tree.json)"

"$RUN" --follow-fork -b kernel -f flat -o tree.txt -- sh -c "$script" \
	> /dev/null 2>&1
check "... the text report sums them by program: 200 processes of primes" \
	awk '/^200 processes of 1 program/ { a = 1 }
	     a && $1 == "primes" && $2 == 200 { b = 1 }
	     END { exit !(a && b) }' tree.txt || diag tree.txt

small="for i in 1 2 3; do '$PRIMES' $N > /dev/null; done"
"$RUN" -b kernel -f json -o flat.json -- sh -c "$small" > /dev/null 2> flat.err
check "without --follow-fork: no profile of sh's descendants, and it says 3 were left" \
	bash -c "test ! -s flat.json && grep -q '3 sessions of forked children left' flat.err" ||
	diag flat.err
for c in $("$STAT" | awk '$3 == "primes" && $4 == "exited" { print $1 }'); do
	"$STAT" delete "$c" > /dev/null
done

# With no finished session kept, every one of the tree's is evicted unless
# harvested first: meter-run says how many went, and none is counted twice.
# The LIST before the run evicts what earlier tests left.
mf=$(cat /sys/module/meter/parameters/max_finished)
echo 0 > /sys/module/meter/parameters/max_finished
"$STAT" > /dev/null
"$RUN" --follow-fork -b kernel -f json -o evict.json -- sh -c \
	"for i in \$(seq 20); do '$PRIMES' $N > /dev/null; done" > /dev/null 2> evict.err
echo "$mf" > /sys/module/meter/parameters/max_finished
found=$(procs evict.json 2> /dev/null | wc -l)
gone=$(sed -n 's/^meter-run: meter.ko evicted \([0-9]*\) finished session.*/\1/p' evict.err)
check "max_finished=0: meter-run says how many sessions were evicted; found + evicted = 20 ($found + ${gone:-none})" \
	test -n "$gone" -a $((found + ${gone:-0})) = 20 || diag evict.err

# --- exec, and the nearest profiled ancestor ------------------------------

# tools_appel does its rounds, then becomes sh, which runs primes twice
"$RUN" --follow-fork -b kernel -f json -o exec.json -- \
	"$APPEL" 20 exec sh -c "'$PRIMES' $N > /dev/null; '$PRIMES' $N > /dev/null" \
	> /dev/null 2> exec.err
procs exec.json > exec.rows
check "an instrumented program that execs another: 3 processes (tools_appel, primes x 2)" \
	test "$(awk '{ print $4 }' exec.rows | sort | tr '\n' ' ')" = "primes primes tools_appel " ||
	{ diag exec.err; diag exec.rows; }
check "... primes linked to tools_appel, its nearest profiled ancestor through exec and sh" \
	awk '$4 == "tools_appel" { t = $2 } $4 == "primes" { p[++n] = $3 }
	     END { exit !(n == 2 && p[1] == t && p[2] == t) }' exec.rows
check "... calls exact: f 20 + 2 x 1, is_prime 40 + 2 x ${one:-?}" \
	test "$(calls exec.json f) $(calls exec.json is_prime)" = "$((20 + 2)) $((40 + 2 * ${one:-0}))" ||
	{ echo "# f $(calls exec.json f), is_prime $(calls exec.json is_prime)"; diag exec.rows; }

# --- a forking server ---------------------------------------------------

"$RUN" --follow-fork -b kernel -f json -o server.json -- "$APPEL" 20 server 30 \
	> /dev/null 2> server.err
procs server.json > server.rows
check "a forking server with 30 workers that exit after their job: 31 processes" \
	test "$(wc -l < server.rows)" = 31 || diag server.err
check "... each worker linked to the server; child_rounds 30 calls, f 20 + 30 x 20" \
	bash -c "awk 'NR == FNR && \$4 == \"tools_appel\" { c[\$2] = 1; next }
		 NR != FNR && (\$3 in c) { w++ } END { exit w != 30 }' server.rows server.rows &&
		 test \"$(calls server.json child_rounds) $(calls server.json f)\" = '30 620'"

# --- meter-stat: a tree left in the kernel --------------------------------

METER_BACKEND=kernel "$APPEL" 20 server 3 > /dev/null
root=$("$STAT" | awk '$3 == "tools_appel" && $4 == "exited" { print $1 }' | head -n 1)
# the root is the server: the session whose three children are listed
"$STAT" tree > tree.list
for c in $("$STAT" | awk '$3 == "tools_appel" && $4 == "exited" { print $1 }'); do
	if "$STAT" tree "$c" | awk 'NR > 1' | grep -c . | grep -qx 4; then
		root=$c
	fi
done
"$STAT" tree "$root" > root.list 2>&1
check "meter-stat tree ROOT: the server and its 3 workers indented below it" \
	awk -v r="$root" 'NR == 2 && $1 == r && index($0, "0x") == 20 { a = 1 }
	     NR > 2 && index($0, "0x") == 22 && $NF == "samples" { b++ }
	     END { exit !(a && b == 3 && NR == 5) }' root.list ||
	{ diag root.list; diag tree.list; }
"$STAT" show --tree "$root" -f json -o show.json 2> show.err
check "meter-stat show --tree ROOT: 4 processes merged, child_rounds 3 calls, f 80" \
	test "$(procs show.json | wc -l) $(calls show.json child_rounds) $(calls show.json f)" = "4 3 80" ||
	diag show.err
"$STAT" tree 0xdead > /dev/null 2> bad.err
rc=$?
check "meter-stat tree of no session: exit 1 and a message" \
	bash -c "test $rc = 1 && grep -q 'no session or tree' bad.err"
for c in $("$STAT" | awk '$3 == "tools_appel" && $4 == "exited" { print $1 }'); do
	"$STAT" delete "$c" > /dev/null
done

exit $((fails > 0))
