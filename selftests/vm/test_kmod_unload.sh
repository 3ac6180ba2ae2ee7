#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rmmod meter with finished sessions and a live registered process
# succeeds without a warning (vm-run fails the run on any kernel WARN),
# the process carries on, and the module loads again.
set -u
echo "TAP version 13"
echo "1..3"
# The module vm-run loaded (METER_MODULE), else the one make builds.
ko=${METER_MODULE:-${METER_ROOT:-/work/main}/build/kernel/${METER_KVER:-$(uname -r)}/kmod/meter.ko}
[ -f "$ko" ] || ko=$(modinfo -n meter 2>/dev/null || echo "")
dir=$(dirname "$0")
# A live registered process (the kill -9 test's child shape): the rate test
# burns for about two seconds.
"$dir/test_kmod_rate" > /dev/null 2>&1 &
bg=$!
sleep 1
if rmmod meter; then echo "ok 1 - rmmod with live and finished sessions"; else echo "not ok 1 - rmmod with live and finished sessions"; fi
wait $bg
rc=$?
# The profiled process lost its module: it may fail to read its profile,
# but it must not crash.
if [ $rc -lt 128 ]; then echo "ok 2 - the profiled process survived the unload (status $rc)"; else echo "not ok 2 - the profiled process was killed (status $rc)"; fi
if [ -n "$ko" ] && insmod "$ko"; then echo "ok 3 - meter.ko loads again"; else echo "not ok 3 - meter.ko loads again ($ko)"; fi
