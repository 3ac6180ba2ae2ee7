#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter.ko installed where modprobe finds it (/lib/modules/<kver>/updates/,
# as `make install` and dkms put it, then depmod) loads by name and loads
# itself on demand: MODULE_ALIAS_GENL_FAMILY gives it the alias
# net-pf-16-proto-16-family-meter, and the kernel's generic netlink
# controller calls request_module() with it when a family lookup for
# "meter" fails.  So after `rmmod meter` the first meter-stat, the first
# meter-stat of an ordinary user, and the first registration of a profiled
# program each load the module again, with no modprobe by hand.
#
# The VM has busybox's modprobe and depmod (/sbin/modprobe is the kernel's
# modprobe_path).  The module is loaded again from METER_MODULE on exit
# whatever happens, for the tests that follow.
set -u

ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
. "$ROOT/selftests/tools_lib.sh" || exit 1
kver=$(uname -r)
ko=${METER_MODULE:-$ROOT/build/kernel/$kver/kmod/meter.ko}
moddir=/lib/modules/$kver
APPEL=$ROOT/build/selftests/tools_appel
export METER_QUIET=1

loaded() { grep -q '^meter ' /proc/modules; }
unload() { ! loaded || rmmod meter; ! loaded; }

tmp=$(mktemp -d /tmp/test_docs_autoload.XXXXXX)
placed=0
cleanup() {
	if [ $placed = 1 ]; then
		rm -f "$moddir/updates/meter.ko"
		depmod -a 2>/dev/null
	fi
	loaded || insmod "$ko" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "TAP version 13"
echo "1..7"
if [ "${METER_VM:-}" != 1 ] || [ "$(id -u)" != 0 ]; then
	for i in 1 2 3 4 5 6 7; do skip "autoload check $i" "needs the test VM as root"; done
	exit 0
fi

mkdir -p "$moddir/updates"
if [ -f "$ko" ] && cp "$ko" "$moddir/updates/meter.ko" && depmod -a &&
   grep -q '^alias net-pf-16-proto-16-family-meter meter$' "$moddir/modules.alias"; then
	placed=1
	ok "meter.ko in $moddir/updates/, depmod lists its alias net-pf-16-proto-16-family-meter"
else
	nok "meter.ko in $moddir/updates/ with its alias after depmod"
	cat "$moddir/modules.alias" 2>/dev/null | diag
fi

if unload && modprobe meter && loaded; then
	ok "modprobe meter loads it"
else
	nok "modprobe meter loads it"
fi

if unload && meter-stat > "$tmp/out" 2>&1 && loaded; then
	ok "after rmmod, meter-stat's family lookup loads the module ($(head -n 1 "$tmp/out"))"
else
	nok "after rmmod, meter-stat's family lookup loads the module"; diag "$tmp/out"
fi

if unload && su nobody -s /bin/sh -c "meter-stat" > "$tmp/out" 2>&1 && loaded; then
	ok "an ordinary user's meter-stat loads it too (no privilege needed)"
else
	nok "an ordinary user's meter-stat loads it too"; diag "$tmp/out"
fi

if unload && meter-run --backend kernel -f flat -- "$APPEL" 50 > "$tmp/out" 2>&1 &&
   grep -q 'backend kernel' "$tmp/out" && grep -q is_prime "$tmp/out" && loaded; then
	ok "a profiled program's first registration loads it and is profiled by the kernel"
else
	nok "a profiled program's first registration loads it"; diag "$tmp/out"
fi

if unload; then
	ok "rmmod meter after the autoloads"
else
	nok "rmmod meter after the autoloads"
fi
if insmod "$ko" && loaded; then
	ok "insmod METER_MODULE again for the tests that follow"
else
	nok "insmod METER_MODULE again"
fi
[ $fails = 0 ]
