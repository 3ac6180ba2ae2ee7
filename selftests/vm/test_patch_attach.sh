#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-run --pid with meter.ko: the host's test_patch_attach, its
# program sampled by the kernel backend.
ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
if ! grep -q '^meter ' /proc/modules; then
	echo "1..0 # SKIP meter.ko is not loaded"
	exit 4
fi
ATTACH_BACKEND=kernel exec "$ROOT/build/selftests/host/test_patch_attach"
