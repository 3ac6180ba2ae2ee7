# SPDX-License-Identifier: MIT
#
# meter: top-level Makefile.  See Documentation/hacking.md.
#
#   make                 meter.ko (for KVER), libmeter, the tools, examples
#   make check           install what is missing, build, run the host tests,
#                        then every VM test in a VM per kernel (6.1, 6.12)
#   make check-rt        the same VM tests in the 6.12 PREEMPT_RT kernel
#   make check-debug     the VM tests on a 6.1 debug kernel built here (KASAN,
#                        lockdep, kmemleak, UBSAN; first build ~15 min)
#   make check-asan      the host tests with ASan, UBSan and LeakSanitizer,
#                        built in build-asan/ (no VM)
#   make demo            profile an example program in a VM
#   make bench           meter against gprof, perf, gperftools, uftrace
#                        (host and VM; Documentation/performance.md)
#   make module KVER=…   meter.ko for another installed kernel (or KDIR=…)
#   make install [DESTDIR=…] [PREFIX=/usr/local]     make uninstall
#   make deps            install missing Debian packages (scripts/install-deps)
#   make deb             Debian packages in build/deb/ (debian/; lintian)
#   make check-deb       install them in a fresh Debian 12 root, DKMS, a VM
#   make clean
#
# Userland goes to build/; meter.ko to build/kernel/<kver>/kmod/meter.ko,
# built from a copy of Kbuild, kmod/ and include/ in build/kernel/<kver>/
# so that one tree builds for several kernels.

.DEFAULT_GOAL := all
SHELL := /bin/bash
.DELETE_ON_ERROR:
.SUFFIXES:

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := build

VERSION := 0.1.0
LIBMETER_SOVERSION := 1

# --- userland ---------------------------------------------------------------

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
CXX ?= g++
AR ?= ar
# SANITIZE=address,undefined (what make check-asan passes, building in
# build-asan/): every C object is compiled with the sanitizers and
# every program and shared library linked with their runtimes; UB is
# fatal as an ASan error is.  Empty by default.
SANITIZE ?=
SAN_FLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined)
CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g \
	-Iinclude/uapi -Iinclude -Ilib -Icommon -Ianalysis $(SAN_FLAGS) \
	$(EXTRA_CFLAGS)
LDFLAGS ?=
override LDFLAGS += $(SAN_FLAGS)
LDLIBS ?=

NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)
NL_LIBS := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null)
# What the analysis library needs beyond libnl: json-c reads JSON profiles,
# libdw and libelf the programs' debug information.  libstdc++, which
# demangles the C++ names a program could not, is loaded at the first one
# (analysis/profile.c).
ANALYSIS_LIBS := $(NL_LIBS) -ljson-c -ldw -lelf

# The $ORIGIN rpath that lets the shared objects loaded from the build tree
# (the alloc preload, the Python and Lua modules) find build/lib/libmeter.so;
# a package build (NO_RPATH=1, debian/rules) leaves it out: installed, ld.so's
# cache finds the library.  $(call origin_rpath,/../lib)
NO_RPATH ?=
origin_rpath = $(if $(NO_RPATH),,-Wl,-rpath,'$$ORIGIN$(1)')

LIBMETER_A := $(BUILD)/lib/libmeter.a
LIBMETER_SO := $(BUILD)/lib/libmeter.so
LIBMETER_ANALYSIS_A := $(BUILD)/analysis/libmeter-analysis.a

# Fragments add to these.
ALL_TARGETS :=
HOST_TESTS :=
VM_TESTS :=
# Files the fragments want in a clean, beyond $(BUILD).
CLEAN_FILES :=

# --- kernel -----------------------------------------------------------------
#
# KVER: the running kernel when its headers are installed, else the newest
# installed Debian 6.1 cloud kernel.  KDIR=… builds against that tree (and
# takes KVER from it).

newest_kver = $(shell ls -d /lib/modules/$(1)/build 2>/dev/null | \
	sed 's,^/lib/modules/,,; s,/build$$,,' | sort -V | tail -n 1)
ifdef KDIR
KVER := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
else
ifeq ($(origin KVER),undefined)
RUNNING_KVER := $(shell uname -r)
KVER := $(if $(wildcard /lib/modules/$(RUNNING_KVER)/build),$(RUNNING_KVER),$(call newest_kver,6.1.*-cloud-amd64))
endif
endif
# A short KVER (6.1, 6.12) means the newest cloud kernel of that series.
ifneq ($(KVER),)
ifeq ($(findstring -,$(KVER)),)
override KVER := $(call newest_kver,$(KVER).*-cloud-amd64)
endif
endif
KDIR ?= /lib/modules/$(KVER)/build
kdir_for = $(if $(filter $(1),$(KVER)),$(KDIR),/lib/modules/$(1)/build)

KMOD_SRCS := $(wildcard Kbuild kmod/Kbuild kmod/Makefile kmod/*.c kmod/*.h) \
	$(wildcard include/uapi/linux/*.h)
HAVE_KMOD := $(wildcard kmod/Kbuild)
METER_KO = $(BUILD)/kernel/$(1)/kmod/meter.ko
WARN_KO = $(BUILD)/kernel/$(1)/selftests/warn_mod/warn_test.ko

# Copies the module sources into build/kernel/<kver>/ (keeping times, so
# kbuild rebuilds only what changed) and runs kbuild there.
$(BUILD)/kernel/%/kmod/meter.ko: $(KMOD_SRCS)
	@test -d "$(call kdir_for,$*)" || { echo "no kernel headers in $(call kdir_for,$*): run scripts/install-deps or pass KDIR=" >&2; exit 1; }
	@mkdir -p $(BUILD)/kernel/$*
	@for f in $(KMOD_SRCS); do \
		mkdir -p "$(BUILD)/kernel/$*/$$(dirname $$f)"; \
		cmp -s "$$f" "$(BUILD)/kernel/$*/$$f" || cp -p "$$f" "$(BUILD)/kernel/$*/$$f"; \
	done
	$(MAKE) -C "$(call kdir_for,$*)" M="$(ROOT)/$(BUILD)/kernel/$*" modules
	@touch $@

$(BUILD)/kernel/%/selftests/warn_mod/warn_test.ko: selftests/warn_mod/warn_test.c selftests/warn_mod/late_test.c selftests/warn_mod/Kbuild
	@test -d "$(call kdir_for,$*)" || { echo "no kernel headers in $(call kdir_for,$*)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	@cp -p $^ $(dir $@)
	$(MAKE) -C "$(call kdir_for,$*)" M="$(ROOT)/$(dir $@)" modules

.PHONY: module warn-module
ifneq ($(HAVE_KMOD),)
module: $(call METER_KO,$(KVER))
else
module:
	@echo "meter.ko: kmod/Kbuild not there yet, skipped"
endif
warn-module: $(call WARN_KO,$(KVER))

# --- fragments --------------------------------------------------------------

-include lib/lib.mk
-include analysis/analysis.mk
-include plugin/plugin.mk
-include tools/tools.mk
-include python/python.mk
-include lua/lua.mk
-include patch/patch.mk
-include fuzz/fuzz.mk
-include examples/examples.mk
-include selftests/selftests.mk
-include selftests/icount/icount.mk
-include bench/bench.mk

# --- top targets ------------------------------------------------------------

.PHONY: all userland deps check check-build demo install uninstall clean

all: userland module
userland: $(ALL_TARGETS) $(BUILD)/meter-uninstalled.pc

# Installs missing Debian packages; quick when everything is there.
# deps: what building and make demo need; check-deps: the tests' too.
deps:
	@scripts/install-deps

.PHONY: check-deps
check-deps:
	@scripts/install-deps --check

# VM tests that hold the guest's wall-clock time to a bound: make check
# runs them in each kernel's VM once the others are over, one VM at a time
# (selftests/run-check --vm-alone).
VM_TESTS_ALONE = $(BUILD)/selftests/vm/test_harden_budget

# The kernels make check tests in: those installed among 6.1 and 6.12 cloud.
CHECK_KVERS = $(shell selftests/kernels)

# Separate make runs so that what deps installs (pkg-config, libnl) is seen.
# The build keeps going past errors (-k): whatever did not build counts as
# failed, and the run still ends with its "N passed, N failed" line.  It
# builds on every CPU (CHECK_JOBS).
CHECK_JOBS ?= $(shell nproc)
check: check-deps
	@build=ok; $(MAKE) -k -j$(CHECK_JOBS) --no-print-directory check-build || build=failed; \
	selftests/run-check --build "$$build" --host "$(HOST_TESTS)" \
		--vm "$(filter-out $(VM_TESTS_ALONE),$(VM_TESTS))" \
		--vm-alone "$(VM_TESTS_ALONE)" --kernels "$(CHECK_KVERS)"

check-build: userland $(HOST_TESTS) $(VM_TESTS)
	@rc=0; for k in $(CHECK_KVERS); do \
		$(if $(HAVE_KMOD),$(MAKE) --no-print-directory $(call METER_KO,$$k) || rc=1;) \
		$(MAKE) --no-print-directory $(call WARN_KO,$$k) || rc=1; \
	done; exit $$rc

# A smoke run on the newest installed 6.12 PREEMPT_RT kernel: make check
# with METER_KVERS set to it (run-check reports 6.1 as skipped there).
.PHONY: check-rt
check-rt:
	@scripts/install-deps --rt
	@k=$$(ls -d /lib/modules/6.12.*-rt-amd64/build 2>/dev/null | \
		sed 's,^/lib/modules/,,; s,/build$$,,' | sort -V | tail -n 1); \
	if [ -z "$$k" ] || [ ! -e "/boot/vmlinuz-$$k" ]; then \
		echo "check-rt: no 6.12 PREEMPT_RT kernel with headers installed" >&2; \
		exit 1; \
	fi; \
	METER_KVERS="$$k" $(MAKE) --no-print-directory check

# The VM suite on Linux 6.1 built with KASAN, lockdep, kmemleak, UBSAN,
# object and atomic-sleep debugging and the IRQs-off tracer
# (scripts/debug-kernel; the first build takes about 15 minutes, then it
# is cached in build/debug-kernel/).  Not part of check: see hacking.md.
DEBUG_KDIR = $(ROOT)/$(BUILD)/debug-kernel/obj
.PHONY: check-debug
check-debug: deps
	@scripts/install-deps --debug
	@scripts/debug-kernel $(BUILD)/debug-kernel
	@$(MAKE) --no-print-directory userland $(VM_TESTS)
	@# the modules are rebuilt: the kernel may have been reconfigured
	@k=$$(cat $(DEBUG_KDIR)/include/config/kernel.release) && \
	rm -f $(call METER_KO,$$k) $(call WARN_KO,$$k) && \
	$(MAKE) --no-print-directory KDIR=$(DEBUG_KDIR) \
		$(call METER_KO,$$k) $(call WARN_KO,$$k)
	@METER_TEST_TIMEOUT=$${METER_TEST_TIMEOUT:-3600} \
	METER_VM_TIMEOUT=$${METER_VM_TIMEOUT:-10800} \
	selftests/run-check --series "" --logs $(BUILD)/check-debug \
		--vm "$(VM_TESTS)" --kernels "$(DEBUG_KDIR)"

# The host suite with AddressSanitizer, UBSan and LeakSanitizer, apart
# from build/: build-asan/root is a view of this tree (a link to each
# top-level entry) whose build/ is build-asan/ itself; in it, make builds
# with SANITIZE=address,undefined what make builds and the host tests
# (libmeter, the analysis library, the tools, the tests and what they
# profile), and selftests/run-check-asan runs the host tests there, so
# that the shell tests' $ROOT/build/... is the sanitized build (no VM;
# logs and the sanitizers' reports in build-asan/check/).  Ends with "N
# passed, N failed"; any sanitizer report fails it.  Not part of check.
ASAN_BUILD := build-asan
ASAN_VIEW := $(ASAN_BUILD)/root
# Host tests it does not run, each counted as skipped with its reason.
ASAN_SKIP := test_vm_run test_vm_icount test_docs_dkms test_patch_counts \
	test_realprog_patch
ASAN_SKIP_test_vm_run := boots VMs to test vm-run, where nothing of the sanitized build runs
ASAN_SKIP_test_vm_icount := boots a VM with QEMU's instruction counter, where nothing of the sanitized build runs
ASAN_SKIP_test_docs_dkms := builds meter.ko with dkms: kernel code, which make check-debug checks with KASAN and UBSAN
ASAN_SKIP_test_patch_counts := preloads the sanitized libmeter-patch.so into programs built without the sanitizers, which AddressSanitizer refuses to start (its runtime must come first); the ELF reader and the plan are fuzzed with it (fuzz_patch_elf)
ASAN_SKIP_test_realprog_patch := the same, on bzip2 and lua5.4
ASAN_HOST_TESTS = $(filter-out $(addprefix %/,$(ASAN_SKIP)),$(HOST_TESTS))
.PHONY: check-asan
check-asan: check-deps
	@rm -rf $(ASAN_VIEW) && mkdir -p $(ASAN_VIEW) && \
	for f in $(filter-out build $(ASAN_BUILD),$(wildcard * .[!.]*)); do \
		ln -s $(ROOT)/$$f $(ASAN_VIEW)/$$f || exit 1; \
	done && ln -s .. $(ASAN_VIEW)/build
	@build=ok; $(MAKE) -C $(ASAN_VIEW) -k --no-print-directory BUILD=build \
		SANITIZE=address,undefined userland $(ASAN_HOST_TESTS) || build=failed; \
	selftests/run-check-asan --build "$$build" --view $(ASAN_VIEW) \
		--host "$(ASAN_HOST_TESTS)" \
		$(foreach t,$(ASAN_SKIP),--skip "$(t): $(ASAN_SKIP_$(t))")

# Static programs (the VM's vm-perf-hold and vm-icount, icount's exact)
# are never sanitized: the sanitizers' runtimes do not link statically.
ifneq ($(SANITIZE),)
$(BUILD)/selftests/vm-perf-hold $(ICOUNT_GUEST) $(BUILD)/icount/exact: \
	CFLAGS := $(filter-out $(SAN_FLAGS),$(CFLAGS))
endif

# The benchmarks: the packages they need, then build and run (bench/bench.mk).
# Not part of check; fails only when a tool is broken, never on numbers.
.PHONY: bench
bench: check-deps
	@bench/install-deps
	@$(MAKE) --no-print-directory bench-run

DEMO_PROG ?= $(BUILD)/examples/split
demo: deps
	@$(MAKE) --no-print-directory demo-run

.PHONY: demo-run
demo-run: all
	@echo "== booting $(KVER) in QEMU (TCG), loading meter.ko, running: meter-run -- $(DEMO_PROG)"
	@selftests/vm-run --kernel $(KVER) -- meter-run -- $(ROOT)/$(DEMO_PROG)

# --- install ------------------------------------------------------------------

DESTDIR ?=
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# meter's own objects that nothing links: the GCC plugin (for the GCC it
# was built with) and meter-run's allocation preload
PKGLIBDIR ?= $(LIBDIR)/meter
PLUGINDIR ?= $(PKGLIBDIR)
MANDIR ?= $(PREFIX)/share/man
MANPAGES := $(wildcard man/*.[1-9])
MODDIR ?= /lib/modules/$(KVER)/updates
INSTALL ?= install
TOOLS := $(BUILD)/tools/meter-run $(BUILD)/tools/meter-stat
LIBMETER_REAL := libmeter.so.$(LIBMETER_SOVERSION).0.0

# A sanitized build's libmeter.a needs the sanitizers' runtimes: its
# static link (pkg-config --static) says so.
$(BUILD)/meter.pc: meter.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's,@PREFIX@,$(PREFIX),g' -e 's,@LIBDIR@,$(LIBDIR),g' \
	    -e 's,@INCLUDEDIR@,$(INCLUDEDIR),g' -e 's,@VERSION@,$(VERSION),g' \
	    -e 's,@PLUGINDIR@,$(PLUGINDIR),g' \
	    $(if $(SANITIZE),-e 's|^Libs.private:.*|& -fsanitize=$(SANITIZE)|') \
	    $< > $@

# The build tree's own: PKG_CONFIG_PATH=build pkg-config ... meter finds
# it (pkg-config prefers NAME-uninstalled.pc), the headers in the tree, the
# library and the plugin in build/, with an rpath to the library.
$(BUILD)/meter-uninstalled.pc: Makefile
	@mkdir -p $(dir $@)
	@printf '%s\n' 'builddir=$(ROOT)/$(BUILD)' \
	    'gccplugin=$${builddir}/plugin/meter.so' '' 'Name: meter' \
	    'Description: meter, uninstalled (the build tree at $(ROOT))' \
	    'Version: $(VERSION)' 'Requires.private: libnl-genl-3.0' \
	    'Libs: -L$${builddir}/lib -Wl,-rpath,$${builddir}/lib -Wl,--push-state,--no-as-needed -lmeter -Wl,--pop-state' \
	    'Libs.private: -lpthread -ldl' \
	    'Cflags: -I$(ROOT)/include -I$(ROOT)/include/uapi' > $@

install: userland $(BUILD)/meter.pc
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 644 include/meter.h $(DESTDIR)$(INCLUDEDIR)/meter.h
	$(INSTALL) -m 644 include/uapi/linux/meter.h $(DESTDIR)$(INCLUDEDIR)/linux/meter.h
	$(INSTALL) -m 755 $(LIBMETER_SO) $(DESTDIR)$(LIBDIR)/$(LIBMETER_REAL)
	ln -sf $(LIBMETER_REAL) $(DESTDIR)$(LIBDIR)/libmeter.so.$(LIBMETER_SOVERSION)
	ln -sf libmeter.so.$(LIBMETER_SOVERSION) $(DESTDIR)$(LIBDIR)/libmeter.so
	$(INSTALL) -m 644 $(LIBMETER_A) $(DESTDIR)$(LIBDIR)/libmeter.a
	$(INSTALL) -m 644 $(BUILD)/meter.pc $(DESTDIR)$(PKGCONFIGDIR)/meter.pc
	$(INSTALL) -d $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(PKGLIBDIR)
	$(INSTALL) -m 755 $(LIBMETER_ALLOC_SO) $(DESTDIR)$(PKGLIBDIR)/libmeter-alloc.so
	$(INSTALL) -m 755 $(LIBMETER_PATCH_SO) $(DESTDIR)$(PKGLIBDIR)/libmeter-patch.so
	$(INSTALL) -m 755 $(METER_PLUGIN) $(DESTDIR)$(PLUGINDIR)/meter.so
	$(INSTALL) -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	@$(MAKE) --no-print-directory install-python install-lua
	for m in $(MANPAGES); do \
		$(INSTALL) -d $(DESTDIR)$(MANDIR)/man$${m##*.} && \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/ || exit 1; \
	done
ifeq ($(DESTDIR),)
ifneq ($(HAVE_KMOD),)
	@$(MAKE) --no-print-directory module
	$(INSTALL) -d $(MODDIR)
	$(INSTALL) -m 644 $(call METER_KO,$(KVER)) $(MODDIR)/meter.ko
	-depmod -a $(KVER)
endif
	-ldconfig
endif

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/meter.h $(DESTDIR)$(INCLUDEDIR)/linux/meter.h \
	      $(DESTDIR)$(LIBDIR)/$(LIBMETER_REAL) \
	      $(DESTDIR)$(LIBDIR)/libmeter.so.$(LIBMETER_SOVERSION) \
	      $(DESTDIR)$(LIBDIR)/libmeter.so $(DESTDIR)$(LIBDIR)/libmeter.a \
	      $(DESTDIR)$(PKGLIBDIR)/libmeter-alloc.so \
	      $(DESTDIR)$(PKGLIBDIR)/libmeter-patch.so \
	      $(DESTDIR)$(PKGCONFIGDIR)/meter.pc \
	      $(DESTDIR)$(PLUGINDIR)/meter.so \
	      $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(TOOLS)))
	@$(MAKE) --no-print-directory uninstall-python uninstall-lua
	for m in $(notdir $(MANPAGES)); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; done
	-rmdir $(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(PKGLIBDIR) 2>/dev/null
ifeq ($(DESTDIR),)
	rm -f $(MODDIR)/meter.ko
	-rmdir $(MODDIR) 2>/dev/null
	-depmod -a $(KVER)
	-ldconfig
endif

# --- Debian packages (Documentation/packaging.md) ---------------------------
.PHONY: deb check-deb
deb:
	@scripts/install-deps --deb
	scripts/make-deb $(BUILD)/deb

check-deb: deb
	@scripts/install-deps --check
	selftests/deb/test_deb_install.sh $(BUILD)/deb

# dkms: the module's sources into /usr/src/meter-$(VERSION) and `dkms add`
# (then dkms builds and installs it for each kernel; see dkms.conf).
DKMS_SRC ?= /usr/src/meter-$(VERSION)
.PHONY: dkms-install dkms-uninstall
dkms-install:
	scripts/dkms-source $(DESTDIR)$(DKMS_SRC) $(VERSION)
ifeq ($(DESTDIR),)
	dkms add -m meter -v $(VERSION)
endif

dkms-uninstall:
ifeq ($(DESTDIR),)
	-dkms remove -m meter -v $(VERSION) --all
endif
	rm -rf $(DESTDIR)$(DKMS_SRC)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(CLEAN_FILES)
