#!/bin/bash
# SPDX-License-Identifier: MIT
# The host's test_lib_plugin_leaves, its runs on meter.ko (selftests/on-kernel).
exec "$(dirname "$(readlink -f "$0")")/../../../selftests/on-kernel" test_lib_plugin_leaves
