#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The user guide's recipes for an autotools and libtool project, run on a
# small one (selftests/host/data/twigs: a libtool library and a
# program that calls it 300 times, and a probe for threads): configure as
# usual, then give the plugin and libmeter at make time; the program, run
# through libtool's wrapper script, counts its library's calls, by itself
# and under meter-run.  Or both given to configure, whose probes then
# still find threads (the plugin in CFLAGS without libmeter in LIBS: "C
# compiler cannot create executables").  From the build tree
# (build/meter-uninstalled.pc).
set -u

ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
. "$ROOT/selftests/tools_lib.sh" || exit 1

echo "1..6"
if ! command -v autoreconf > /dev/null || ! command -v libtoolize > /dev/null; then
	for i in 1 2 3 4 5 6; do skip "the autotools recipe" "autoconf, automake or libtool is not installed"; done
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_docs_autotools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -r "$ROOT/selftests/host/data/twigs/." "$tmp/"
cd "$tmp" || exit 1
export PKG_CONFIG_PATH=$ROOT/build

# the recipe, as the user guide gives it
( autoreconf -fi && ./configure ) > configure.log 2>&1
check "autoreconf and ./configure, without meter's flags: its probe finds threads" \
	bash -c "[ $? -eq 0 ] && grep -q 'threads: yes' configure.log" || diag configure.log
make CFLAGS="-O2 -g -fplugin=$(pkg-config --variable=gccplugin meter) $(pkg-config --cflags meter)" \
	LIBS="$(pkg-config --libs meter)" > make.log 2>&1
check "make with the plugin and libmeter given at make time builds the library and the program" \
	bash -c "[ -x twigs ] && [ -f .libs/libtwig.so ] && head -1 twigs | grep -q '^#! */bin/'" || diag make.log

METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/run.json" ./twigs > run.log 2>&1
"$ROOT/build/tools/meter-stat" -i "$tmp/run.json" -f flat > flat 2>&1
check "the program, through libtool's wrapper, counts its library's calls (twig 300, main 1)" \
	bash -c "grep -qE ' 300 .* twig\$' flat && grep -qE ' 1 .* main\$' flat" || diag run.log flat

"$ROOT/build/tools/meter-run" -b signal -f flat -- ./twigs > mr.out 2> mr.err
check "meter-run -- ./twigs (the wrapper script execs the program): twig 300" \
	grep -qE ' 300 .* twig$' mr.out || diag mr.out mr.err

# the other recipe: the plugin and libmeter both given to configure
plugin_cflags="-O2 -g -fplugin=$(pkg-config --variable=gccplugin meter) $(pkg-config --cflags meter)"
make distclean > /dev/null 2>&1
./configure CFLAGS="$plugin_cflags" LIBS="$(pkg-config --libs meter)" > configure2.log 2>&1
check "./configure CFLAGS=<the plugin> LIBS=<libmeter>: its probe still finds threads" \
	bash -c "[ $? -eq 0 ] && grep -q 'threads: yes' configure2.log" || diag configure2.log
make > make2.log 2>&1 &&
	METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/run2.json" ./twigs > run2.log 2>&1
"$ROOT/build/tools/meter-stat" -i "$tmp/run2.json" -f flat > flat2 2>&1
check "... and the program it builds counts its library's calls (twig 300)" \
	grep -qE ' 300 .* twig$' flat2 || diag make2.log flat2
exit $((fails > 0))
