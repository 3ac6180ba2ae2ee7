#!/bin/bash
# SPDX-License-Identifier: MIT
#
# test_deb_install: the packages of `make deb` installed as a user would,
# on a fresh Debian 12 root this test makes (debootstrap, minbase, into
# build/deb-test/; the base is cached as build/deb-test/base.tar and
# unpacked afresh each run).  In the root, as root through chroot:
#
#  - the kernel headers of the kernels make check tests in, gcc, make and
#    pkg-config are installed first (what a user has before meter);
#  - the packages' dependencies resolve from Debian (apt-get satisfy),
#    then `apt-get install ./*.deb` installs them;
#  - DKMS (meter-dkms' postinst) built meter.ko for each of those kernels,
#    with its vermagic and the netlink family's alias (autoload), and
#    builds it again from the kernel headers' postinst hook (a kernel
#    that apt installs later);
#  - a program built with `pkg-config --cflags --libs meter` and the
#    packaged GCC plugin (`pkg-config --variable=gccplugin meter`) links
#    the packaged libmeter.so.1 and is profiled by the packaged meter-run
#    on the signal backend, exact call counts;
#  - the test VM boots each kernel with the DKMS-built meter.ko, and the
#    packaged meter-run profiles the same program on the kernel backend;
#  - python3 imports the packaged meter and lua5.4 requires it;
#  - `apt-get purge` of the packages leaves no file behind: every file
#    `dpkg -L` listed is gone, and a scan of the root finds exactly the
#    paths it found before they were installed.
#
#   selftests/deb/test_deb_install.sh DEBDIR     (make check-deb)
#
# Needs root, debootstrap and the network (deb.debian.org and the host's
# apt sources).  Takes about 5 minutes on 2 cores, most of it apt (one
# more the first time, for debootstrap).
set -u

ROOT=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
. "$ROOT/selftests/tools_lib.sh" || exit 1
[ $# = 1 ] || { sed -n 's/^#   //p' "$0" >&2; exit 2; }
debs=$(cd "$1" && pwd)
[ "$(id -u)" = 0 ] || { echo "test_deb_install: needs root (chroot, apt)" >&2; exit 1; }

work=$ROOT/build/deb-test
R=$work/root
base=$work/base.tar
log=$work/log
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_deb_install.XXXXXX")
unmount() { umount -l "$R/proc" 2>/dev/null; umount -l "$R/sys" 2>/dev/null; true; }
trap 'unmount; rm -rf "$tmp"' EXIT
# In the root, with a clean environment: as a user's shell there would.
in_root() {
	chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
apt_get() {
	in_root apt-get -y -q -o Dpkg::Options::=--force-confold \
		--no-install-recommends "$@"
}
# Every path of the root but the kernel's file systems, apt's and dpkg's
# own state, logs and caches (whose contents apt rewrites on any run),
# and home directories: what running meter wrote there (libmeter's
# calibration cache, ~/.cache/meter) is the user's, which no package's
# purge removes.
scan() {
	in_root find / -xdev \( -path /proc -o -path /sys -o -path /dev -o \
		-path /tmp -o -path /var/cache -o -path /var/lib/apt -o \
		-path /var/lib/dpkg -o -path /var/log -o -path /root -o \
		-path /home \) -prune -o -print | sort
}

echo "TAP version 13"
kvers=$("$ROOT/selftests/kernels")
# shellcheck disable=SC2086
set -- $kvers
ndebs=$(ls "$debs"/*.deb 2>/dev/null | grep -vc -- -dbgsym_)
echo "1..$((11 + 2 * $#))"

mkdir -p "$work"
unmount
rm -rf --one-file-system "$R" "$log"
mkdir -p "$log"
if [ ! -s "$base" ]; then
	rm -rf --one-file-system "$work/base"
	if debootstrap --variant=minbase bookworm "$work/base" http://deb.debian.org/debian \
		> "$log/debootstrap.log" 2>&1; then
		tar -C "$work/base" -cf "$base.part" . && mv "$base.part" "$base"
	fi
	rm -rf --one-file-system "$work/base"
fi
mkdir -p "$R"
if [ -s "$base" ] && tar -C "$R" -xf "$base"; then
	ok "a fresh Debian 12 root (debootstrap --variant=minbase bookworm)"
else
	nok "a fresh Debian 12 root (debootstrap)"; tail -n 20 "$log/debootstrap.log" | diag
	exit 1
fi
# The host's sources (the security archive has the kernels' headers).
rm -f "$R/etc/apt/sources.list"
cp /etc/apt/sources.list.d/* "$R/etc/apt/sources.list.d/" 2>/dev/null
[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$R/etc/apt/"
cp /etc/resolv.conf "$R/etc/resolv.conf"
mount -t proc proc "$R/proc" && mount -t sysfs sys "$R/sys"

headers=()
for k in "$@"; do headers+=("linux-headers-$k"); done
if apt_get update > "$log/update.log" 2>&1 &&
   apt_get install gcc libc6-dev make pkg-config "${headers[@]}" > "$log/before.log" 2>&1; then
	ok "before meter: gcc, libc6-dev, make, pkg-config and the headers of $*"
else
	nok "before meter: gcc, make, pkg-config and headers"; tail -n 20 "$log/before.log" | diag
	exit 1
fi

mkdir -p "$R/tmp/debs"
cp $(ls "$debs"/*.deb | grep -v -- -dbgsym_) "$R/tmp/debs/"
pkgs=$(for d in "$R"/tmp/debs/*.deb; do dpkg-deb -f "$d" Package; done | sort | tr '\n' ' ')
# Their dependencies from Debian first, so that what purge must take away
# is meter's alone: the scan before is taken with them installed.
deps=$(for d in "$R"/tmp/debs/*.deb; do dpkg-deb -f "$d" Depends; done | tr ',' '\n' |
	sed 's/^ *//; /^$/d' | grep -vE '^(libmeter1|libmeter-dev|meter-[a-z-]+|python3-meter|lua-meter)( |$)' |
	sort -u | paste -sd, | sed 's/,/, /g')
if apt_get satisfy "$deps" > "$log/deps.log" 2>&1; then
	ok "the packages' dependencies resolve from Debian (apt-get satisfy '$deps')"
else
	nok "the packages' dependencies resolve from Debian ($deps)"; tail -n 20 "$log/deps.log" | diag
fi
# The module index of each kernel, as its image's postinst makes it (the
# root has the kernels' headers, not their images): DKMS's depmod
# rewrites these files, and they are the kernel's, not meter's.
for k in "$@"; do in_root depmod -a "$k"; done > "$log/depmod.log" 2>&1
scan > "$tmp/before.paths"
# shellcheck disable=SC2046
if apt_get install $(cd "$R" && ls tmp/debs/*.deb | sed 's|^|/|') > "$log/install.log" 2>&1 &&
   [ "$(in_root dpkg-query -W -f '${db:Status-Abbrev}\n' $pkgs | grep -c '^ii')" = "$ndebs" ]; then
	ok "apt-get install ./*.deb: $ndebs packages ($pkgs)"
else
	nok "apt-get install ./*.deb ($pkgs)"; tail -n 30 "$log/install.log" | diag
fi
# The packages' files (not the directories they share with others).
in_root dpkg -L $pkgs 2>/dev/null | sort -u | while read -r f; do
	[ -d "$R$f" ] && [ ! -L "$R$f" ] || echo "$f"
done > "$tmp/listed"

for k in "$@"; do
	ko=$(ls "$R/lib/modules/$k/updates/dkms/"meter.ko* 2>/dev/null | head -n 1)
	vm=$( [ -n "$ko" ] && modinfo -F vermagic "$ko" 2>/dev/null)
	alias=$( [ -n "$ko" ] && modinfo -F alias "$ko" 2>/dev/null)
	if [ -n "$ko" ] && [ "${vm%% *}" = "$k" ] && [ "$alias" = net-pf-16-proto-16-family-meter ]; then
		ok "DKMS built ${ko#"$R"} (vermagic $k, alias $alias)"
	else
		nok "DKMS built meter.ko for $k (found '${ko:-nothing}', vermagic '$vm', alias '$alias')"
		grep -i -A3 "error\|building" "$log/install.log" | tail -n 20 | diag
	fi
done

# A kernel apt installs later: its headers' postinst hook (dkms's
# header_postinst.d) builds the module, as AUTOINSTALL asks.  Tried on
# the newest kernel, its module removed first.
k=${*: -1}
ver=$(dpkg-deb -f "$R"/tmp/debs/meter-dkms_*.deb Version)
in_root dkms remove "meter/$ver" -k "$k" > "$log/hook.log" 2>&1
gone=$(ls "$R/lib/modules/$k/updates/dkms/"meter.ko* 2>/dev/null)
in_root /etc/kernel/header_postinst.d/dkms "$k" >> "$log/hook.log" 2>&1
ko=$(ls "$R/lib/modules/$k/updates/dkms/"meter.ko* 2>/dev/null | head -n 1)
if [ -z "$gone" ] && [ -n "$ko" ] && [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$k" ]; then
	ok "a kernel installed later: the headers' hook has DKMS build meter.ko for $k again"
else
	nok "a kernel installed later: the headers' hook builds meter.ko for $k (removed: '${gone:-yes}', rebuilt: '${ko:-no}')"
	tail -n 20 "$log/hook.log" | diag
fi

# A program as a user writes it: no meter in its source.
cat > "$R/tmp/prog.c" <<'EOC'
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void churn(int n)
{
	for (int i = 0; i < n; i++)
		sink = sink * 2862933555777941757UL + i;
}

__attribute__((noinline)) static void heavy(void)
{
	for (int i = 0; i < 3; i++)
		churn(400000);
}

__attribute__((noinline)) static void light(void)
{
	for (int i = 0; i < 2; i++)
		churn(200000);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 60;

	for (int r = 0; r < rounds; r++) {
		heavy();
		if (r % 2)
			light();
	}
	printf("%lu\n", sink);
	return 0;
}
EOC
if in_root sh -c 'gcc -O2 -fplugin=$(pkg-config --variable=gccplugin meter) -o /tmp/prog /tmp/prog.c $(pkg-config --cflags --libs meter)' > "$log/cc.log" 2>&1 &&
   in_root ldd /tmp/prog | grep -q 'libmeter.so.1 => /lib/x86_64-linux-gnu/libmeter.so.1\|libmeter.so.1 => /usr/lib/x86_64-linux-gnu/libmeter.so.1'; then
	ok "a program builds with pkg-config --cflags --libs meter and the packaged plugin, and links the packaged libmeter.so.1"
else
	nok "a program builds with pkg-config and the packaged plugin"; diag "$log/cc.log"
	in_root ldd /tmp/prog 2>&1 | diag
fi

# The calls every run makes, whatever the backend: 60 rounds.
counts_ok() { # report
	awk '$NF == "heavy" && $4 == 60 { h = 1 } $NF == "light" && $4 == 30 { l = 1 }
	     $NF == "churn" && $4 == 240 { c = 1 } END { exit !(h && l && c) }' \
		<(flat_rows "$1")
}
in_root meter-run -b signal -- /tmp/prog > "$log/signal.txt" 2>&1
if counts_ok "$log/signal.txt"; then
	ok "the packaged meter-run profiles it on the host (signal backend): heavy 60, light 30, churn 240 calls"
else
	nok "the packaged meter-run profiles it on the host (signal backend)"; diag "$log/signal.txt"
fi

for k in "$@"; do
	ko=$(ls "$R/lib/modules/$k/updates/dkms/"meter.ko* 2>/dev/null | head -n 1)
	case $ko in
	*.xz) xz -dc "$ko" > "$tmp/meter-$k.ko" ;;
	*.zst) zstd -qdc "$ko" > "$tmp/meter-$k.ko" ;;
	*) cp "$ko" "$tmp/meter-$k.ko" 2>/dev/null ;;
	esac
	lib=$R/usr/lib/x86_64-linux-gnu
	"$ROOT/selftests/vm-run" --kernel "$k" --module "$tmp/meter-$k.ko" \
		--add "$R/tmp/prog" --add "$R/usr/bin/meter-run" \
		--add "$lib/libmeter.so.1" --add "$(readlink -f "$lib/libmeter.so.1")" \
		--env "LD_LIBRARY_PATH=$lib" --timeout 900 -- \
		"$R/usr/bin/meter-run" -b kernel -- "$R/tmp/prog" 20 > "$log/vm-$k.txt" 2>&1
	if awk '$NF == "heavy" && $4 == 20 { h = 1 } $NF == "light" && $4 == 10 { l = 1 }
		END { exit !(h && l) }' <(flat_rows "$log/vm-$k.txt") &&
	   grep -q "^meter profile of prog (pid [0-9]*): backend kernel$" "$log/vm-$k.txt"; then
		ok "$k: the VM loads the DKMS-built meter.ko; the packaged meter-run profiles the program on the kernel backend (heavy 20, light 10 calls)"
	else
		nok "$k: the packaged meter-run in the VM on the DKMS-built meter.ko"; tail -n 30 "$log/vm-$k.txt" | diag
	fi
done

if in_root python3 -c 'import meter, meter._meter; print(meter.__file__)' > "$log/py.txt" 2>&1 &&
   in_root lua5.4 -e 'local m = require "meter"; print(type(m))' > "$log/lua.txt" 2>&1; then
	ok "python3 imports the packaged meter ($(cat "$log/py.txt")); lua5.4 requires the packaged meter"
else
	nok "python3 imports meter, lua5.4 requires meter"; diag "$log/py.txt" "$log/lua.txt"
fi

# shellcheck disable=SC2086
if apt_get purge $pkgs > "$log/purge.log" 2>&1; then
	ok "apt-get purge $pkgs"
else
	nok "apt-get purge"; tail -n 20 "$log/purge.log" | diag
fi
left=$(while read -r f; do [ -f "$R$f" ] || [ -L "$R$f" ] && echo "$f"; done < "$tmp/listed")
if [ -z "$left" ] && [ "$(wc -l < "$tmp/listed")" -gt "$ndebs" ]; then
	ok "every file dpkg -L listed ($(wc -l < "$tmp/listed")) is gone"
else
	nok "files dpkg -L listed are gone"; echo "$left" | head -n 20 | diag
fi
scan > "$tmp/after.paths"
if diff "$tmp/before.paths" "$tmp/after.paths" > "$tmp/scan.diff"; then
	ok "a scan of the root finds the $(wc -l < "$tmp/before.paths") paths it found before the install, and no other"
else
	nok "a scan of the root finds what it found before the install"; head -n 30 "$tmp/scan.diff" | diag
fi
unmount
[ $fails = 0 ]
