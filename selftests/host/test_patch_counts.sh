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
echo "1..4"

"$PROG" > "$tmp/plain.out"
"$RUN" --backend signal --patch --patch-list -f json -o "$tmp/m.json" \
	-- "$PROG" > "$tmp/patched.out" 2> "$tmp/patch.err"
check "the patched program prints what the plain one prints" \
	cmp "$tmp/plain.out" "$tmp/patched.out" || diag "$tmp/patch.err"

valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" \
	"$PROG" > /dev/null 2> "$tmp/cg.err" &
cg=$!
wait $cg
nm --defined-only "$PROG" | awk '$2 ~ /^[tT]$/ { print $3 }' > "$tmp/funcs"
check "every patched function's count is callgrind's" \
	python3 - "$tmp/cg.$cg" "$tmp/m.json" "$tmp/funcs" "$tmp/patch.err" <<'PY'
import json, re, sys

names, calls, cfn = {}, {}, None
for line in open(sys.argv[1]):
    m = re.match(r'c?fn=\((\d+)\)(?: (.*))?$', line.rstrip('\n'))
    if m:
        if m.group(2):
            # recursion levels are named rec'2, rec'3...: one function
            names[m.group(1)] = re.sub(r"'\d+$", '', m.group(2))
        if line.startswith('cfn='):
            cfn = names[m.group(1)]
        continue
    m = re.match(r'calls=(\d+) ', line)
    if m and cfn is not None:
        calls[cfn] = calls.get(cfn, 0) + int(m.group(1))
ours = {f['name']: f.get('calls', 0) for f in json.load(open(sys.argv[2]))['functions']}
mine = set(open(sys.argv[3]).read().split())
refused = {l.split()[2].rstrip(':') for l in open(sys.argv[4])
           if l.startswith('meter: refused ')}
bad = 0
for f in sorted(mine & set(calls)):
    if f in refused:
        print('# %s: refused, callgrind %d' % (f, calls[f]))
    elif ours.get(f) != calls[f]:
        bad += 1
        print('# %s: meter %s, callgrind %d' % (f, ours.get(f), calls[f]))
    else:
        print('# %s: %d calls, as callgrind' % (f, calls[f]))
missing = sorted((mine & set(calls)) - set(ours) - refused)
if missing:
    print('# called, neither patched nor refused:', missing)
sys.exit(1 if bad or missing or not ours else 0)
PY

check "the refused are listed with their reasons" \
	grep -q "^meter: refused handler: under 5 bytes" "$tmp/patch.err" ||
	diag "$tmp/patch.err"

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
