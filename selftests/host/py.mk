# SPDX-License-Identifier: MIT
#
# The Python tests' native extension (selftests/host/data/py/native.c):
# built with meter's GCC plugin and linked with libmeter.so, the one the
# Python integration loads, so that its frames join the Python ones on
# the same shadow stack.  Found by the tests on PYTHONPATH.

ifndef METER_PY_HOST_MK
METER_PY_HOST_MK := 1

ifneq ($(PY_EXT),)
PY_NATIVE := $(BUILD)/selftests/py/meter_native$(PY_EXT_SUFFIX)

$(PY_NATIVE): selftests/host/data/py/native.c $(LIBMETER_SO) $(METER_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(PY_INCLUDE) $(PLUGIN_FLAGS) -fPIC -shared -o $@ $< \
		-L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../../lib' -lmeter $(LDFLAGS)

$(BUILD)/selftests/host/test_py_counts: $(PY_NATIVE) $(PY_EXT) $(PY_FILES)
$(BUILD)/selftests/vm/test_py_kernel: $(PY_NATIVE) $(PY_EXT) $(PY_FILES)
endif

endif
