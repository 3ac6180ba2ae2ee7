#!/bin/bash
# SPDX-License-Identifier: MIT
# The host's test_lib_small_pages, its runs on meter.ko (selftests/on-kernel).
exec "$(dirname "$(readlink -f "$0")")/../../../selftests/on-kernel" test_lib_small_pages
