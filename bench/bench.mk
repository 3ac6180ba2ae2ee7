# SPDX-License-Identifier: MIT
# Benchmarks (bench/): placeholder until the benchmarks land.  A benchmark
# adds its executables to ALL_TARGETS (or to a bench target of its own).
