#!/bin/bash
# SPDX-License-Identifier: MIT
#
# test_lua_counts on the kernel backend: Lua scripts sampled by meter.ko.
ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
METER_LUA_BACKEND=kernel exec "$ROOT/selftests/host/test_lua_counts.sh"
