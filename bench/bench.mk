# SPDX-License-Identifier: MIT
# Benchmarks (bench/): `make bench` (the target is in the top Makefile)
# installs what they need (bench/install-deps), builds the workloads below
# and runs bench/run.sh, which prints a table and, as its last line, one
# JSON object.  See Documentation/performance.md.
#
# bench/workloads.c is built five ways (the header of the file says why);
# bench/timeit.c times a command and its descendants.

BENCH_BIN := $(BUILD)/bench/bin
BENCH_CFLAGS := $(filter-out -O2 -g,$(CFLAGS)) -O2 -g -fno-omit-frame-pointer
BENCH_LIBMETER := -L$(BUILD)/lib -Wl,-rpath,$(ROOT)/$(BUILD)/lib -lmeter
BENCH_BINS := $(addprefix $(BENCH_BIN)/workloads-,plain manual auto plugin pg gperf) \
	$(BENCH_BIN)/timeit

$(BENCH_BIN)/workloads-plain: bench/workloads.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -lpthread

$(BENCH_BIN)/workloads-manual: bench/workloads.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -DMETER_MANUAL -o $@ $< $(BENCH_LIBMETER) -lpthread

$(BENCH_BIN)/workloads-auto: bench/workloads.c $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -finstrument-functions -o $@ $< $(BENCH_LIBMETER) -lpthread

$(BENCH_BIN)/workloads-plugin: bench/workloads.c $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(PLUGIN_FLAGS_ALL) -o $@ $< $(BENCH_LIBMETER) -lpthread

$(BENCH_BIN)/workloads-pg: bench/workloads.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -pg -o $@ $< -lpthread

# libprofiler linked in (so that vm-run copies it into the VM); it profiles
# only when CPUPROFILE is set.
$(BENCH_BIN)/workloads-gperf: bench/workloads.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -Wl,--no-as-needed -lprofiler -Wl,--as-needed -lpthread

$(BENCH_BIN)/timeit: bench/timeit.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# Many threads on one session's lock: the debug kernel's lock statistics
# (make check-debug builds it).  Not part of make bench.
.PHONY: bench-scaling
bench-scaling: userland $(BENCH_BIN)/workloads-manual
	@bench/scaling.sh

.PHONY: bench-build bench-run
bench-build: userland $(BENCH_BINS) icount

# What `make bench` runs once the packages are there.
# bench/html.sh first: run.sh's JSON stays the last line.
bench-run: all bench-build
	@bench/html.sh
	@bench/run.sh

HOST_TESTS += $(BUILD)/selftests/host/test_bench_summary \
	$(BUILD)/selftests/host/test_bench_byaddress
$(BUILD)/selftests/host/test_bench_%: bench/test_bench_%.sh
	@mkdir -p $(dir $@)
	cp $< $@
	chmod +x $@
