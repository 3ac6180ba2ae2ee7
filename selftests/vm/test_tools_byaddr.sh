#!/bin/bash
# SPDX-License-Identifier: MIT
# The host's test_tools_byaddr, its runs on meter.ko (selftests/on-kernel).
exec "$(dirname "$(readlink -f "$0")")/../../../selftests/on-kernel" test_tools_byaddr
