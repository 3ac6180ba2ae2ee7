# SPDX-License-Identifier: MIT
#
# python: meter's CPython integration (Documentation/python.md) for
# Debian's /usr/bin/python3 (3.11, python3-dev): the package meter/ and
# its C extension, built into build/python/ so that meter-run, which puts
# that directory on PYTHONPATH, runs Python programs from the build tree.
# The extension links libmeter.so (one runtime in the process, shared
# with any C extension built with meter's plugin), found through an
# $ORIGIN rpath in the build tree and through ld.so's cache when installed.

PYTHON3 ?= /usr/bin/python3
PY_INCLUDE := $(shell $(PYTHON3) -c 'import sysconfig; print(sysconfig.get_path("include"))' 2>/dev/null)
PY_EXT_SUFFIX := $(shell $(PYTHON3) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_VERSION := $(shell $(PYTHON3) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
# where Debian's python3 looks under PREFIX: /usr/lib/python3/dist-packages
# for /usr, /usr/local/lib/python3.11/dist-packages for /usr/local
ifeq ($(PREFIX),/usr)
PY_SITE ?= /usr/lib/python3/dist-packages
else
PY_SITE ?= $(PREFIX)/lib/python$(PY_VERSION)/dist-packages
endif

ifneq ($(wildcard $(PY_INCLUDE)/Python.h),)
PY_PKG := $(BUILD)/python/meter
PY_EXT := $(PY_PKG)/_meter$(PY_EXT_SUFFIX)
PY_SOURCES := $(wildcard python/meter/*.py)
PY_FILES := $(patsubst python/meter/%,$(PY_PKG)/%,$(PY_SOURCES))

PY_C_SRCS := python/_meter.c python/records.c python/calibrate.c

$(PY_EXT): $(PY_C_SRCS) python/meter_py.h include/meter.h $(LIBMETER_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(PY_INCLUDE) -Ipython -fPIC -shared -o $@ $(PY_C_SRCS) \
		-L$(BUILD)/lib $(call origin_rpath,/../../lib) -lmeter $(LDFLAGS)

$(PY_PKG)/%.py: python/meter/%.py
	@mkdir -p $(dir $@)
	cp $< $@

ALL_TARGETS += $(PY_EXT) $(PY_FILES)

.PHONY: install-python uninstall-python
install-python: $(PY_EXT) $(PY_FILES)
	$(INSTALL) -d $(DESTDIR)$(PY_SITE)/meter
	$(INSTALL) -m 644 $(PY_FILES) $(DESTDIR)$(PY_SITE)/meter/
	$(INSTALL) -m 755 $(PY_EXT) $(DESTDIR)$(PY_SITE)/meter/

uninstall-python:
	rm -rf $(DESTDIR)$(PY_SITE)/meter
else
.PHONY: install-python uninstall-python
install-python uninstall-python:
	@echo "python: no $(PYTHON3) headers (python3-dev): the Python integration is not built"
endif
