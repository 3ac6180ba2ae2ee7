#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-run --patch on a program built as users build (-O2 -g, no meter
# flags; selftests/host/patch_workload.c): every function it patched has
# the call count callgrind gives for the same binary (calls= lines summed
# per function, recursion, longjmp, a tail call, a signal handler and
# threads included), every function callgrind saw called is patched or
# listed as refused, the program's output is unchanged, and Debian's own
# stripped /usr/bin/bzip2, patched from .eh_frame, compresses exactly as
# without.  Signal backend (the kernel one is in the VM tests).
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
PROG=$ROOT/build/selftests/host/patch_workload

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_patch_counts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if ! command -v valgrind > /dev/null 2>&1; then
	echo "1..0 # SKIP valgrind is not installed"
	exit 4
fi
echo "1..5"

"$PROG" > "$tmp/plain.out"
"$RUN" --backend signal --patch --patch-list -f json -o "$tmp/m.json" \
	-- "$PROG" > "$tmp/patched.out" 2> "$tmp/patch.err"
check "the patched program prints what the plain one prints" \
	cmp "$tmp/plain.out" "$tmp/patched.out" || diag "$tmp/patch.err"

valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" \
	"$PROG" > /dev/null 2> "$tmp/cg.err" &
cg=$!
wait $cg
check "every patched function's count is callgrind's" \
	python3 "$ROOT/selftests/host/callgrind_calls.py" "$tmp/cg.$cg" "$PROG" \
		"$tmp/m.json" "$tmp/patch.err" 100

check "the refused are listed with their reasons" \
	grep -q "^meter: refused handler: under 5 bytes" "$tmp/patch.err" ||
	diag "$tmp/patch.err"
"$ROOT/build/tools/meter-stat" -i "$tmp/m.json" > "$tmp/report"
check "the profile names the refused, never a silent zero: JSON and report" \
	bash -c "python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
r = {f[\"name\"]: f.get(\"refused\") for f in p[\"functions\"]}
sys.exit(0 if r.get(\"handler\", \"\").startswith(\"under 5 bytes\") else 1)' '$tmp/m.json' &&
		 grep -q 'left unpatched by --patch, not counted: handler (under 5 bytes' '$tmp/report'" ||
	diag "$tmp/report"

head -c 400000 /usr/bin/ld > "$tmp/in"
if [ -x /usr/bin/bzip2 ]; then
	"$RUN" --backend signal --patch -f json -o "$tmp/bz.json" -- \
		/usr/bin/bzip2 -c "$tmp/in" > "$tmp/in.bz2" 2> "$tmp/bz.err"
	check "Debian's stripped bzip2, patched from .eh_frame, compresses as without" \
		bash -c "bzip2 -dc '$tmp/in.bz2' | cmp - '$tmp/in' &&
			 grep -q 'patched [1-9][0-9]* functions of /usr/bin/bzip2' '$tmp/bz.err'" ||
		diag "$tmp/bz.err"
else
	skip "Debian's stripped bzip2" "/usr/bin/bzip2 is not installed"
fi
[ $fails = 0 ]
