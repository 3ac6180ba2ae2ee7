#!/bin/bash
# SPDX-License-Identifier: MIT
#
# In the VM on the deterministic clock (test_vm_icount): bench/workloads.c's
# split, built plainly (no meter flags: build/selftests/patch_split),
# whose self time splits 50/30/20 between heavy, medium and light by
# construction, profiled by meter-run --patch at 10 kHz on the kernel
# backend: each function's share of the three comes out within 1 point.
# TAP on stdout.
set -u
ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
out=$(mktemp /tmp/patch_split.XXXXXX)
trap 'rm -f "$out"' EXIT
echo "1..3"
if [ ! -x /usr/bin/python3 ]; then
	for i in 1 2 3; do echo "ok $i - patched split # SKIP no python3 in the VM"; done
	exit 0
fi
METER_QUIET=1 "$ROOT/build/tools/meter-run" -b kernel --patch -F 10000 \
	-f json -o "$out" -- "$ROOT/build/selftests/patch_split" split \
	"${PATCH_SPLIT_SCALE:-20}" > /dev/null 2>&1
/usr/bin/python3 - "$out" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[1]))
    self = {f["name"]: f.get("self_samples", 0) for f in p["functions"]}
except (OSError, ValueError, KeyError):
    self = {}
want = {"heavy": 50.0, "medium": 30.0, "light": 20.0}
total = sum(self.get(n, 0) for n in want)
for i, (n, w) in enumerate(want.items(), 1):
    got = 100.0 * self.get(n, 0) / total if total else 0.0
    print("%s %d - patched split %s: %.2f %% of the three's %d samples, truth %.0f %% (within 1 point)"
          % ("ok" if abs(got - w) <= 1.0 else "not ok", i, n, got, total, w))
PY
