# SPDX-License-Identifier: MIT
#
# meter's GCC plugin (plugin/meter_plugin.cc, plugin/body_shape.cc,
# plugin/sequences.cc, plugin/entry_forms.cc) into build/plugin/meter.so,
# built with $(CXX) against the plugin headers of the GCC that builds the
# rest ($(CC) -print-file-name=plugin; Debian's gcc-12-plugin-dev).  Use:
#
#	$(CC) -fplugin=build/plugin/meter.so ...	in the build tree
#	$(CC) -fplugin=$$(pkg-config --variable=gccplugin meter) ...  installed

ifndef METER_PLUGIN_MK
METER_PLUGIN_MK := 1

GCC_PLUGIN_DIR := $(shell $(CC) -print-file-name=plugin 2>/dev/null)
METER_PLUGIN := $(BUILD)/plugin/meter.so
# gcc's own headers do not pass -Wextra's unused-parameter
PLUGIN_CXXFLAGS := -std=gnu++17 -fPIC -fno-rtti -O2 -g -Wall -Wextra \
	-Werror -Wno-unused-parameter -I$(GCC_PLUGIN_DIR)/include -Iinclude \
	-Iinclude/uapi $(EXTRA_CXXFLAGS)

# not LDFLAGS: a sanitized build's would link the sanitizers' runtime into
# cc1 (debian/rules passes Debian's link flags here)
PLUGIN_LDFLAGS ?=

PLUGIN_SRCS := plugin/meter_plugin.cc plugin/body_shape.cc plugin/sequences.cc \
	plugin/entry_forms.cc

$(METER_PLUGIN): $(PLUGIN_SRCS) plugin/body_shape.h plugin/sequences.h \
		plugin/entry_forms.h include/meter.h
	@test -f "$(GCC_PLUGIN_DIR)/include/gcc-plugin.h" || { \
		echo "no GCC plugin headers for $(CC) in $(GCC_PLUGIN_DIR): install gcc-12-plugin-dev (scripts/install-deps)" >&2; \
		exit 1; }
	@mkdir -p $(dir $@)
	$(CXX) $(PLUGIN_CXXFLAGS) -shared -o $@ $(PLUGIN_SRCS) $(PLUGIN_LDFLAGS)

ALL_TARGETS += $(METER_PLUGIN)

# What a program built with the plugin passes to the compiler.
PLUGIN_FLAGS = -fplugin=$(METER_PLUGIN)
# The same with tiny functions instrumented too: what the tests of the
# mechanism and the per-call benchmarks compare with the macro and
# -finstrument-functions, which count every function.
PLUGIN_FLAGS_ALL = $(PLUGIN_FLAGS) -fplugin-arg-meter-tiny=0

endif
