#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Reloads meter.ko with a 16-entry stack table, overflows it (see
# test_kmod_stacks --lost), then reloads it with the defaults.
set -u
dir=$(dirname "$0")
ko=${METER_MODULE:-${METER_ROOT:-/work/main}/build/kernel/${METER_KVER:-$(uname -r)}/kmod/meter.ko}
if ! rmmod meter || ! insmod "$ko" stack_entries=16; then
	echo "1..1"
	echo "not ok 1 - reload meter.ko with stack_entries=16 ($ko)"
	insmod "$ko" 2>/dev/null
	exit 1
fi
"$dir/test_kmod_stacks" --lost
rc=$?
rmmod meter && insmod "$ko" || { echo "# could not reload meter.ko"; rc=1; }
exit $rc
