#!/bin/bash
# SPDX-License-Identifier: MIT
#
# `make install DESTDIR=... PREFIX=/usr` puts what the README says where it
# says: meter.h and linux/meter.h, libmeter.so with its soname links and
# only the exports of lib/libmeter.map, libmeter.a, meter.pc, the tools and
# the man pages in share/man/man{1,3,4}.  A program compiles and links
# against the installed copy through pkg-config (shared and static), runs,
# and the installed meter-stat reads its profile; a program built with the
# installed GCC plugin (pkg-config's gccplugin variable) runs; man finds
# the pages; Debian's python3 imports the installed Python integration
# (/usr/lib/python3/dist-packages/meter), which loads the installed
# libmeter and profiles a block, and lua5.4 requires the installed Lua
# module (/usr/lib/lua/5.4/meter.so).
# `make uninstall` with the same variables removes every file again.
set -u

ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
. "$ROOT/selftests/tools_lib.sh" || exit 1


tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_docs_install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
D=$tmp/dest
P=/usr
echo "TAP version 13"

if make -s -C "$ROOT" --no-print-directory install DESTDIR="$D" PREFIX="$P" > "$tmp/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=$P"
else
	nok "make install DESTDIR=... PREFIX=$P"; tail -n 20 "$tmp/install.log" | diag
fi

want=(bin/meter-run bin/meter-stat include/meter.h include/linux/meter.h
	lib/libmeter.so.1.0.0 lib/libmeter.so.1 lib/libmeter.so lib/libmeter.a
	lib/meter/libmeter-alloc.so
	lib/pkgconfig/meter.pc lib/meter/meter.so share/man/man1/meter-run.1
	share/man/man1/meter-stat.1 share/man/man3/libmeter.3
	share/man/man4/meter.4)
missing=""
for f in "${want[@]}"; do
	[ -e "$D$P/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
	ok "installed: ${#want[@]} files under \$DESTDIR$P"
else
	nok "installed files (missing:$missing)"
fi

lib=$D$P/lib
soname=$(readelf -d "$lib/libmeter.so.1.0.0" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = libmeter.so.1 ] && [ "$(readlink "$lib/libmeter.so.1")" = libmeter.so.1.0.0 ] &&
   [ "$(readlink "$lib/libmeter.so")" = libmeter.so.1 ]; then
	ok "soname libmeter.so.1; libmeter.so -> libmeter.so.1 -> libmeter.so.1.0.0"
else
	nok "soname and links (soname '$soname')"
fi

# Exports: exactly the global names of the version script.
map=$(sed -n '/global:/,/local:/p' "$ROOT/lib/libmeter.map" | grep -oE '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' \t;' | sort)
exported=$(nm -D --defined-only "$lib/libmeter.so.1.0.0" 2>/dev/null | awk '{ print $3 }' | sed 's/@.*//' | sort -u)
if [ -n "$exported" ] && [ "$exported" = "$map" ]; then
	ok "libmeter.so exports exactly lib/libmeter.map's $(echo $map | wc -w) symbols"
else
	nok "libmeter.so exports exactly lib/libmeter.map's symbols"
	diff <(echo "$map") <(echo "$exported") | diag
fi

export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
flags=$(pkg-config --cflags --libs meter 2>&1)
if [ "$(pkg-config --modversion meter 2>/dev/null)" = "$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")" ] &&
   [[ $flags == *"-I$D$P/include"* ]] && [[ $flags == *-lmeter* ]]; then
	ok "pkg-config meter: version $(pkg-config --modversion meter), $flags"
else
	nok "pkg-config meter ($flags)"
fi

# shellcheck disable=SC2046
if ${CC:-cc} -O2 -o "$tmp/split" "$ROOT/examples/split.c" $(pkg-config --cflags --libs meter) > "$tmp/cc.log" 2>&1; then
	ok "examples/split.c builds against the installed header and library"
else
	nok "examples/split.c builds against the installed header and library"; diag "$tmp/cc.log"
fi
if LD_LIBRARY_PATH=$lib METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/split.%p.json" \
	"$tmp/split" 200 > /dev/null 2>&1 &&
   LD_LIBRARY_PATH=$lib ldd "$tmp/split" | grep -q "$lib/libmeter.so.1" &&
   LD_LIBRARY_PATH=$lib "$D$P/bin/meter-stat" -i "$(ls "$tmp"/split.*.json | head -n 1)" -f flat > "$tmp/flat" 2>&1 &&
   grep -q heavy "$tmp/flat"; then
	ok "the program runs on the installed libmeter.so.1 and the installed meter-stat reads its profile"
else
	nok "the program runs on the installed libmeter and meter-stat reads its profile"; diag "$tmp/flat" 2>/dev/null
fi
# shellcheck disable=SC2046
if ${CC:-cc} -O2 -o "$tmp/split-static" "$ROOT/examples/split.c" $(pkg-config --cflags meter) \
	"$lib/libmeter.a" $(pkg-config --static --libs meter | sed 's/-lmeter//') > "$tmp/cc.log" 2>&1 &&
   ! ldd "$tmp/split-static" | grep -q libmeter &&
   METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/static.json" "$tmp/split-static" 200 > /dev/null 2>&1 &&
   [ -s "$tmp/static.json" ]; then
	ok "a static link with libmeter.a and pkg-config --static --libs runs and writes its profile"
else
	nok "a static link with libmeter.a and pkg-config --static --libs"; diag "$tmp/cc.log"
fi

# The GCC plugin, as the user guide builds with it (pkg-config puts the
# variable under the sysroot too).
plugin=$(pkg-config --variable=gccplugin meter 2>/dev/null)
cat > "$tmp/plug.c" <<'SRC'
static volatile int sink;
__attribute__((noinline)) static void twig(int i) { for (int k = 0; k < i; k++) sink += k; }
int main(void) { for (int i = 0; i < 300; i++) twig(i); return 0; }
SRC
# shellcheck disable=SC2046
if [ "$plugin" = "$D$P/lib/meter/meter.so" ] &&
   ${CC:-cc} -O2 -fplugin="$plugin" -o "$tmp/plug" "$tmp/plug.c" $(pkg-config --cflags --libs meter) > "$tmp/cc.log" 2>&1 &&
   LD_LIBRARY_PATH=$lib METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/plug.json" "$tmp/plug" &&
   LD_LIBRARY_PATH=$lib "$D$P/bin/meter-stat" -i "$tmp/plug.json" -f flat > "$tmp/plug.flat" 2>&1 &&
   grep -qE ' 300 .* twig$' "$tmp/plug.flat"; then
	ok "cc -fplugin=\$(pkg-config --variable=gccplugin meter) ($plugin): twig counted 300 times"
else
	nok "cc -fplugin=\$(pkg-config --variable=gccplugin meter) ('$plugin')"; diag "$tmp/cc.log" "$tmp/plug.flat" 2>/dev/null
fi

# pkg-config's flags before the objects, as in LDFLAGS, under --as-needed
# (the default of many distributions' builds): libmeter stays
# shellcheck disable=SC2046
if ${CC:-cc} -O2 -fplugin="$plugin" $(pkg-config --cflags meter) -Wl,--as-needed \
	$(pkg-config --libs meter) -o "$tmp/asneeded" "$tmp/plug.c" > "$tmp/cc.log" 2>&1 &&
   LD_LIBRARY_PATH=$lib ldd "$tmp/asneeded" | grep -q "libmeter.so.1"; then
	ok "-Wl,--as-needed \$(pkg-config --libs meter) before the objects still links libmeter"
else
	nok "-Wl,--as-needed with pkg-config's flags before the objects"; diag "$tmp/cc.log"
fi

# From the build tree, nothing installed: build/meter-uninstalled.pc
# shellcheck disable=SC2046
if [ "$(PKG_CONFIG_PATH=$ROOT/build PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=gccplugin meter)" = "$ROOT/build/plugin/meter.so" ] &&
   ${CC:-cc} -O2 -fplugin="$ROOT/build/plugin/meter.so" -o "$tmp/tree" "$tmp/plug.c" \
	$(PKG_CONFIG_PATH=$ROOT/build PKG_CONFIG_SYSROOT_DIR= pkg-config --cflags --libs meter) > "$tmp/cc.log" 2>&1 &&
   ldd "$tmp/tree" | grep -q "$ROOT/build/lib/libmeter.so.1" &&
   METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/tree.json" "$tmp/tree" &&
   "$ROOT/build/tools/meter-stat" -i "$tmp/tree.json" -f flat 2>&1 | grep -qE ' 300 .* twig$'; then
	ok "from the build tree: PKG_CONFIG_PATH=build pkg-config gives the tree's header, plugin and library (rpath): twig counted 300 times"
else
	nok "from the build tree: PKG_CONFIG_PATH=build pkg-config"; diag "$tmp/cc.log"
fi

if command -v man >/dev/null; then
	bad=""
	for page in "1 meter-run" "1 meter-stat" "3 libmeter" "4 meter"; do
		set -- $page
		found=$(MANPATH= man -M "$D$P/share/man" -w "$1" "$2" 2>/dev/null)
		[ "$found" = "$D$P/share/man/man$1/$2.$1" ] || bad="$bad $2($1)"
	done
	MANPATH= MANWIDTH=80 man -M "$D$P/share/man" 3 meter_enter 2>&1 | grep -q 'meter_record_register' || bad="$bad meter_enter(3)"
	if [ -z "$bad" ]; then
		ok "man -M \$DESTDIR$P/share/man finds meter-run(1), meter-stat(1), libmeter(3), meter(4), and meter_enter(3) shows libmeter(3)"
	else
		nok "man finds the installed pages (not found:$bad)"
	fi
else
	skip "man is not installed"
fi

pysite=$D$P/lib/python3/dist-packages
if [ -x /usr/bin/python3 ] && ls "$ROOT"/build/python/meter/_meter*.so > /dev/null 2>&1; then
	PYTHONPATH=$pysite LD_LIBRARY_PATH=$lib METER_BACKEND=signal METER_QUIET=1 \
		METER_OUTPUT=$tmp/py.json /usr/bin/python3 -c '
import meter, sys
def f(): pass
with meter.profile():
    for _ in range(3): f()
print(meter.__file__)
print([l for l in open("/proc/self/maps").read().split("\n") if "libmeter.so" in l][0].split()[-1])
' > "$tmp/py.out" 2>&1
	if grep -qx "$pysite/meter/__init__.py" "$tmp/py.out" &&
	   grep -qx "$lib/libmeter.so.1.0.0" "$tmp/py.out" &&
	   grep -q '"name": "__main__.f", "calls": 3' "$tmp/py.json"; then
		ok "python3 imports the installed meter from $P/lib/python3/dist-packages, with the installed libmeter; f: 3 calls"
	else
		nok "python3 imports the installed meter"; diag "$tmp/py.out"
	fi
else
	skip "python3 imports the installed meter" "no /usr/bin/python3 or no build/python (python3-dev)"
fi

if [ -x /usr/bin/lua5.4 ] && [ -f "$ROOT/build/lua/meter.so" ]; then
	LUA_CPATH_5_4="$D$P/lib/lua/5.4/?.so" LD_LIBRARY_PATH=$lib METER_BACKEND=signal \
		METER_QUIET=1 METER_OUTPUT=$tmp/lua.json /usr/bin/lua5.4 -e '
local meter = require "meter"
local function f() end
meter.start() for _ = 1, 3 do f() end meter.stop()' > "$tmp/lua.out" 2>&1
	if grep -q '"name": "f@(command_line):3", "calls": 3' "$tmp/lua.json"; then
		ok "lua5.4 requires the installed meter from $P/lib/lua/5.4; f: 3 calls"
	else
		nok "lua5.4 requires the installed meter"; diag "$tmp/lua.out"
	fi
else
	skip "lua5.4 requires the installed meter" "no lua5.4 or no build/lua (liblua5.4-dev)"
fi

if make -s -C "$ROOT" --no-print-directory uninstall DESTDIR="$D" PREFIX="$P" > "$tmp/uninstall.log" 2>&1; then
	ok "make uninstall DESTDIR=... PREFIX=$P"
else
	nok "make uninstall DESTDIR=... PREFIX=$P"; tail -n 20 "$tmp/uninstall.log" | diag
fi
left=$(find "$D" -type f -o -type l 2>/dev/null)
if [ -z "$left" ]; then
	ok "nothing is left after make uninstall"
else
	nok "nothing is left after make uninstall"; echo "$left" | diag
fi

echo "1..$n"
[ $fails = 0 ]
