#!/bin/bash
# SPDX-License-Identifier: MIT
#
# test_py_counts on the kernel backend: Python programs sampled by meter.ko
# (the names, files and lines of their functions through netlink).
ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
METER_PY_BACKEND=kernel exec "$ROOT/selftests/host/test_py_counts.sh"
