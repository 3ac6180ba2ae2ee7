# SPDX-License-Identifier: MIT
#
# libmeter's host tests (selftests/host/test_lib_*.c) and the programs they
# profile.  The tests themselves are built by selftests/selftests.mk's
# pattern rule; this adds the workloads they run and makes the tests
# depend on them.

ifndef METER_LIB_HOST_MK
METER_LIB_HOST_MK := 1

LIBTEST_HOST := $(BUILD)/selftests/host
# Workloads link libmeter.so and find it next to the build tree.
LIBTEST_LINK := -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../../lib' -lmeter -lpthread
LIBTEST_CFLAGS := $(CFLAGS)

LIBTEST_WORKLOADS := $(addprefix $(LIBTEST_HOST)/lib_workload_,manual auto api flat plugin)

$(LIBTEST_HOST)/lib_workload_manual: selftests/host/lib_workload.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LIBTEST_CFLAGS) -DMODE_MANUAL -o $@ $< $(LIBTEST_LINK)

# every METER_FUNCTION() flat (-DMETER_FLAT)
$(LIBTEST_HOST)/lib_workload_flat: selftests/host/lib_workload.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LIBTEST_CFLAGS) -DMODE_MANUAL -DMETER_FLAT -o $@ $< $(LIBTEST_LINK)

$(LIBTEST_HOST)/lib_workload_auto: selftests/host/lib_workload.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LIBTEST_CFLAGS) -finstrument-functions -o $@ $< $(LIBTEST_LINK)

# every function instrumented by the GCC plugin (plugin/)
$(LIBTEST_HOST)/lib_workload_plugin: selftests/host/lib_workload.c include/meter.h $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(LIBTEST_CFLAGS) $(PLUGIN_FLAGS_ALL) -o $@ $< $(LIBTEST_LINK)

$(LIBTEST_HOST)/lib_workload_api: selftests/host/lib_workload.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LIBTEST_CFLAGS) -DMODE_API -o $@ $< $(LIBTEST_LINK)

LIBTEST_CXXFLAGS := -std=c++17 $(filter-out -std=c11,$(CFLAGS))

$(LIBTEST_HOST)/lib_cxx_manual: selftests/host/lib_cxx_workload.cc include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LIBTEST_CXXFLAGS) -DMODE_MANUAL -o $@ $< $(LIBTEST_LINK)

$(LIBTEST_HOST)/lib_cxx_auto: selftests/host/lib_cxx_workload.cc include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CXX) $(LIBTEST_CXXFLAGS) -finstrument-functions -o $@ $< $(LIBTEST_LINK)

$(LIBTEST_HOST)/lib_cxx_plugin: selftests/host/lib_cxx_workload.cc include/meter.h $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CXX) $(LIBTEST_CXXFLAGS) $(PLUGIN_FLAGS_ALL) -o $@ $< $(LIBTEST_LINK)

# 1000 C++ functions with 300-character names (test_lib_names,
# test_lib_kernel_session)
$(LIBTEST_HOST)/lib_cxx_names: selftests/host/lib_cxx_names.cc include/meter.h $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CXX) $(LIBTEST_CXXFLAGS) $(PLUGIN_FLAGS) -o $@ $< $(LIBTEST_LINK)

LIBTEST_WORKLOADS += $(LIBTEST_HOST)/lib_cxx_manual $(LIBTEST_HOST)/lib_cxx_auto \
	$(LIBTEST_HOST)/lib_cxx_plugin \
	$(LIBTEST_HOST)/lib_cxx_names

# Naming: a program and two instrumented shared libraries, one stripped.
$(LIBTEST_HOST)/liblibtest_dso.so: selftests/host/lib_names_dso.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -finstrument-functions -o $@ $<

$(LIBTEST_HOST)/liblibtest_stripped.so: selftests/host/lib_names_dso.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -finstrument-functions -DPREFIX=stripped_ -o $@ $<
	strip --strip-all $@

$(LIBTEST_HOST)/lib_names: selftests/host/lib_names_main.c $(LIBTEST_HOST)/liblibtest_dso.so $(LIBTEST_HOST)/liblibtest_stripped.so $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -finstrument-functions -o $@ $< \
		-L$(LIBTEST_HOST) -Wl,-rpath,'$$ORIGIN' -llibtest_dso -llibtest_stripped \
		$(LIBTEST_LINK)

LIBTEST_WORKLOADS += $(LIBTEST_HOST)/lib_names

# Modules: METER_FUNCTION() in the executable, a linked and an opened DSO.
$(LIBTEST_HOST)/liblibtest_linked.so: selftests/host/lib_modules_dso.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -DMODNAME=linked -o $@ $< $(LIBTEST_LINK)

$(LIBTEST_HOST)/liblibtest_opened.so: selftests/host/lib_modules_dso.c include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -DMODNAME=opened -o $@ $< $(LIBTEST_LINK)

$(LIBTEST_HOST)/lib_modules: selftests/host/lib_modules_main.c $(LIBTEST_HOST)/liblibtest_linked.so $(LIBTEST_HOST)/liblibtest_opened.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(LIBTEST_HOST) -Wl,-rpath,'$$ORIGIN' \
		-llibtest_linked $(LIBTEST_LINK) -ldl

LIBTEST_WORKLOADS += $(LIBTEST_HOST)/lib_modules

# The plugin's corner cases: an executable and a shared library built with
# it, one function left out by a plugin argument.
$(LIBTEST_HOST)/liblibtest_plugin.so: selftests/host/lib_plugin_dso.c $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLUGIN_FLAGS_ALL) -fPIC -shared -o $@ $<

$(LIBTEST_HOST)/lib_plugin_corners: selftests/host/lib_plugin_corners.c $(LIBTEST_HOST)/liblibtest_plugin.so $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLUGIN_FLAGS_ALL) \
		-fplugin-arg-meter-exclude-function=skipped_by_arg -o $@ $< \
		-L$(LIBTEST_HOST) -Wl,-rpath,'$$ORIGIN' -llibtest_plugin \
		$(LIBTEST_LINK)

LIBTEST_WORKLOADS += $(LIBTEST_HOST)/lib_plugin_corners

# as people build: -O2 and the plugin's default rules (tiny functions left
# alone), so that bodies become leaves once inlining is done
$(LIBTEST_HOST)/lib_plugin_leaves: selftests/host/lib_plugin_leaves.c $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLUGIN_FLAGS) -o $@ $< $(LIBTEST_LINK)

# the same without debug records: inlined copies keep their current store
$(LIBTEST_HOST)/lib_plugin_leaves_nog: selftests/host/lib_plugin_leaves.c $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -g0 $(PLUGIN_FLAGS) -o $@ $< $(LIBTEST_LINK)

LIBTEST_WORKLOADS += $(LIBTEST_HOST)/lib_plugin_leaves \
	$(LIBTEST_HOST)/lib_plugin_leaves_nog

$(LIBTEST_HOST)/lib_jump_lookup: selftests/host/lib_jump_lookup.c $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(LIBTEST_CFLAGS) -o $@ $< $(LIBTEST_LINK)

LIBTEST_WORKLOADS += $(LIBTEST_HOST)/lib_jump_lookup

LIBTEST_HOST_TESTS := $(patsubst selftests/host/%.c,$(LIBTEST_HOST)/%,$(wildcard selftests/host/test_lib_*.c))
$(LIBTEST_HOST_TESTS): $(LIBTEST_WORKLOADS) selftests/host/lib_run.h

endif
