#!/bin/bash
# SPDX-License-Identifier: MIT
#
# In the VM on the deterministic clock (test_vm_icount): a program whose
# self time splits 50/30/20 between three functions by construction is
# profiled by meter-run at 10 kHz on the kernel backend, and each
# function's share of the three comes out within 1 point: a Python
# program or a Lua script (selftests/host/data/py/split.py,
# data/lua/split.lua), or bench/workloads.c's split built plainly, under
# meter-run --patch (build/selftests/patch_split).  TAP on stdout.
#
#   selftests/vm/split_shares.sh python|lua|patched
set -u
ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
how=()
case ${1:-} in
python) cmd=(/usr/bin/python3 "$ROOT/selftests/host/data/py/split.py"
	     "${PY_SPLIT_N:-100000}" "${PY_SPLIT_ROUNDS:-10}") ;;
lua) cmd=(/usr/bin/lua5.4 "$ROOT/selftests/host/data/lua/split.lua"
	  "${LUA_SPLIT_N:-300000}" "${LUA_SPLIT_ROUNDS:-10}") ;;
patched) cmd=("$ROOT/build/selftests/patch_split" split "${PATCH_SPLIT_SCALE:-20}")
	how=(-b kernel --patch) ;;
*) sed -n 's/^#   //p' "$0" >&2; exit 2 ;;
esac
out=$(mktemp /tmp/split_shares.XXXXXX)
trap 'rm -f "$out"' EXIT
echo "1..3"
if [ ! -x "${cmd[0]}" ] || [ ! -x /usr/bin/python3 ]; then
	for i in 1 2 3; do echo "ok $i - $1 split # SKIP no ${cmd[0]} or python3 in the VM"; done
	exit 0
fi
METER_QUIET=1 "$ROOT/build/tools/meter-run" "${how[@]}" -F 10000 -f json \
	-o "$out" -- "${cmd[@]}" > /dev/null 2>&1
# Python names a function module.name, Lua name@file:line, C name.
/usr/bin/python3 - "$out" "$1" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[1]))
    self = {f["name"].split("@")[0].removeprefix("__main__."): f.get("self_samples", 0)
            for f in p["functions"]}
except (OSError, ValueError, KeyError):
    self = {}
want = {"heavy": 50.0, "medium": 30.0, "light": 20.0}
total = sum(self.get(n, 0) for n in want)
for i, (n, w) in enumerate(want.items(), 1):
    got = 100.0 * self.get(n, 0) / total if total else 0.0
    print("%s %d - %s %s: %.2f %% of the three's %d samples, truth %.0f %% (within 1 point)"
          % ("ok" if abs(got - w) <= 1.0 else "not ok", i, sys.argv[2], n, got, total, w))
PY
