#!/bin/bash
# SPDX-License-Identifier: MIT
#
# dkms.conf works with Debian's dkms: the sources that `make dkms-install`
# lays out (scripts/dkms-source) are added, built and installed for every
# test kernel (selftests/kernels: the 6.1 and 6.12 cloud kernels), the
# module lands in updates/dkms/ with that kernel's vermagic and the genetlink
# autoload alias, `dkms autoinstall` (what a new kernel's postinst hook
# runs) builds and installs it, and `dkms remove` takes it all away again.
#
# Everything happens in private trees (--dkmstree, --sourcetree,
# --installtree under a temporary directory, --no-depmod): the test never
# touches /usr/src or /lib/modules (dkms makes its module signing key in
# /var/lib/dkms on first use, as for any dkms module).  Skipped without dkms
# (scripts/install-deps installs it) or without kernel headers.
set -u

# The tree: from build/selftests/host/ or from selftests/host/.
ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
. "$ROOT/selftests/tools_lib.sh" || exit 1


echo "TAP version 13"
if ! command -v dkms >/dev/null; then
	echo "1..1"
	skip "dkms is not installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..1"
	skip "dkms needs root"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_docs_dkms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/dkms" "$tmp/src" "$tmp/inst"
trees=(--dkmstree "$tmp/dkms" --sourcetree "$tmp/src" --installtree "$tmp/inst")

version=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
kvers=$("$ROOT/selftests/kernels")
set -- $kvers
echo "1..$((6 + 4 * $#))"

# The version is kept in one place, the Makefile: dkms.conf's is the
# placeholder that scripts/dkms-source (and the package's dh_dkms -V) fill.
src=$tmp/src/meter-$version
"$ROOT/scripts/dkms-source" "$src" > "$tmp/source.log" 2>&1
conf_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf" 2>/dev/null)
if [ -n "$version" ] && [ "$version" = "$conf_version" ] &&
   grep -q '^PACKAGE_VERSION="#MODULE_VERSION#"$' "$ROOT/dkms.conf"; then
	ok "the laid-out dkms.conf's PACKAGE_VERSION is the Makefile's VERSION ($version)"
else
	nok "the laid-out dkms.conf's PACKAGE_VERSION ($conf_version) is the Makefile's VERSION ($version)"
fi
if [ -f "$src/dkms.conf" ] && [ -f "$src/Kbuild" ] && [ -f "$src/kmod/Kbuild" ] &&
   [ -f "$src/dkms.conf" ] && [ -f "$src/Kbuild" ] && [ -f "$src/kmod/Kbuild" ] &&
   [ -f "$src/include/uapi/linux/meter.h" ] &&
   [ -z "$(find "$src" -name '*.o' -o -name '*.ko' -o -name '*.mod.c')" ]; then
	ok "scripts/dkms-source lays out the module sources (no build outputs)"
else
	nok "scripts/dkms-source lays out the module sources (no build outputs)"
fi
if dkms add -m meter -v "$version" "${trees[@]}" > "$tmp/add.log" 2>&1; then
	ok "dkms add meter/$version"
else
	nok "dkms add meter/$version"; diag "$tmp/add.log"
fi

for k in "$@"; do
	if [ ! -d "/lib/modules/$k/build" ]; then
		skip "dkms build for $k: no headers"
		skip "meter.ko for $k has its vermagic"
		skip "dkms install for $k"
		skip "installed under updates/dkms for $k"
		continue
	fi
	if dkms build -m meter -v "$version" -k "$k" "${trees[@]}" > "$tmp/build.log" 2>&1; then
		ok "dkms build -k $k"
	else
		nok "dkms build -k $k"
		diag "$tmp/build.log"
		cat "$tmp/dkms/meter/$version/build/make.log" 2>/dev/null | tail -n 30 | sed 's/^/# /'
	fi
	# Built modules are kept (compressed as the kernel's config says).
	ko=$(find "$tmp/dkms/meter/$version/$k" -name 'meter.ko*' 2>/dev/null | head -n 1)
	vm=$( [ -n "$ko" ] && modinfo -F vermagic "$ko" 2>/dev/null)
	if [ -n "$ko" ] && [ "${vm%% *}" = "$k" ]; then
		ok "meter.ko built for $k has vermagic '$vm'"
	else
		nok "meter.ko built for $k has vermagic '$k ...' (found '${ko:-no module}': '$vm')"
	fi
	mkdir -p "$tmp/inst/$k"
	if dkms install --no-depmod -m meter -v "$version" -k "$k" "${trees[@]}" > "$tmp/install.log" 2>&1; then
		ok "dkms install -k $k"
	else
		nok "dkms install -k $k"; diag "$tmp/install.log"
	fi
	inst=$(ls "$tmp/inst/$k/updates/dkms/"meter.ko* 2>/dev/null | head -n 1)
	alias=$( [ -n "$inst" ] && modinfo -F alias "$inst" 2>/dev/null)
	if [ -n "$inst" ] && [ "$alias" = "net-pf-16-proto-16-family-meter" ]; then
		ok "$k: $(basename "$inst") in updates/dkms/ with alias $alias"
	else
		nok "$k: meter.ko in updates/dkms/ with alias net-pf-16-proto-16-family-meter (found '${inst:-nothing}', alias '$alias')"
	fi
done

dkms status -m meter "${trees[@]}" 2>&1 | diag
if dkms remove -m meter -v "$version" --all "${trees[@]}" > "$tmp/remove.log" 2>&1; then
	ok "dkms remove meter/$version --all"
else
	nok "dkms remove meter/$version --all"; diag "$tmp/remove.log"
fi
# AUTOINSTALL="yes": what the kernel's postinst hook runs for a new kernel.
k=${1:-}
if [ -n "$k" ] && [ -d "/lib/modules/$k/build" ] &&
   dkms add -m meter -v "$version" "${trees[@]}" > "$tmp/auto.log" 2>&1 &&
   dkms autoinstall --no-depmod -k "$k" "${trees[@]}" >> "$tmp/auto.log" 2>&1 &&
   ls "$tmp/inst/$k/updates/dkms/"meter.ko* > /dev/null 2>&1; then
	ok "dkms autoinstall -k $k builds and installs meter (AUTOINSTALL=yes)"
else
	nok "dkms autoinstall -k ${k:-(no kernel)} builds and installs meter"; diag "$tmp/auto.log"
fi
dkms remove -m meter -v "$version" --all "${trees[@]}" > /dev/null 2>&1

left=$(find "$tmp/inst" "$tmp/dkms" -name 'meter.ko*' 2>/dev/null)
if [ -z "$left" ]; then
	ok "nothing left behind after dkms remove"
else
	nok "nothing left behind after dkms remove"; echo "$left" | diag
fi
[ $fails = 0 ]
