#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-run --patch with meter.ko: the kernel backend samples a patched
# program as it samples an instrumented one.  The program built without
# meter's flags (selftests/host/patch_workload.c) gets the same call count
# for every function as with the signal backend (which test_patch_counts
# holds to callgrind's on the host), and its samples go to the function
# that burns the CPU time.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
PROG=$ROOT/build/selftests/host/patch_workload
export METER_QUIET=1

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_patch_kernel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if ! grep -q '^meter ' /proc/modules; then
	echo "1..0 # SKIP meter.ko is not loaded"
	exit 4
fi
echo "1..3"

# burn's loop long enough to be most of the run: the rest of the workload
# (17309 calls recursing past the stack's capacity, each through the slow
# path; threads, a fork, signals) takes 15 to 22 % of the samples of a
# 200000000 loop under TCG, with ec8e957 as since (six runs side by side
# in one VM, 78 to 85 % to burn), which left the 80 % below a matter of
# the host's speed
"$RUN" --backend kernel --patch -f json -o "$tmp/k.json" -- "$PROG" 500000000 \
	> "$tmp/k.out" 2> "$tmp/k.err"
check "meter-run --backend kernel --patch: the program runs to its end" \
	grep -qx done "$tmp/k.out" || diag "$tmp/k.err"
"$RUN" --backend signal --patch -f json -o "$tmp/s.json" -- "$PROG" 200000000 \
	> /dev/null 2> "$tmp/s.err"
check "the kernel backend's call counts are the signal backend's, function by function" \
	python3 - "$tmp/k.json" "$tmp/s.json" <<'PY'
import json, sys
k, s = ({f['name']: f.get('calls', 0) for f in json.load(open(a))['functions']}
        for a in sys.argv[1:3])
for name in sorted(set(k) | set(s)):
    print('# %s: kernel %s, signal %s' % (name, k.get(name), s.get(name)))
sys.exit(0 if k == s and k.get('rec') else 1)
PY
check "the kernel backend's samples go to burn, which burns the CPU time" \
	python3 - "$tmp/k.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
self = {f['name']: f.get('self_samples', 0) for f in p['functions']}
total = sum(self.values())
print('# %d samples in functions, burn %d' % (total, self.get('burn', 0)))
sys.exit(0 if total and self.get('burn', 0) > 0.8 * total else 1)
PY
[ $fails = 0 ]
