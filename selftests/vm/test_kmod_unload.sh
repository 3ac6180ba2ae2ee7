#!/bin/bash
# SPDX-License-Identifier: MIT
#
# rmmod meter with finished sessions and a live registered process
# succeeds without a warning (vm-run fails the run on any kernel WARN),
# the process carries on, and the module loads again.
set -u
ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
. "$ROOT/selftests/tools_lib.sh" || exit 1
echo "TAP version 13"
echo "1..3"
# The module vm-run loaded (METER_MODULE), else the one make builds.
ko=${METER_MODULE:-$ROOT/build/kernel/${METER_KVER:-$(uname -r)}/kmod/meter.ko}
[ -f "$ko" ] || ko=$(modinfo -n meter 2>/dev/null || echo "")
# A live registered process: libmeter's workload spinning for two seconds of
# CPU on the kernel backend (it reads its profile at exit, from a module
# that is gone by then).
METER_BACKEND=kernel METER_OUTPUT=/dev/null \
	"$ROOT/build/selftests/host/lib_workload_manual" spin 1000 > /dev/null 2>&1 &
bg=$!
sleep 1
check "rmmod with live and finished sessions" rmmod meter
wait $bg
rc=$?
# The profiled process lost its module: it may fail to read its profile,
# but it must not crash.
check "the profiled process survived the unload (status $rc)" [ $rc -lt 128 ]
check "meter.ko loads again ($ko)" insmod "$ko"
exit $((fails > 0))
