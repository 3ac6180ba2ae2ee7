#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The user guide's recipes for CMake and Meson projects, run on a small one
# (selftests/host/data/twigs: a shared library, a program that calls it 300
# times, and a probe for threads): the plugin in CFLAGS and libmeter in the
# linker flags, given when the build is configured; the probe still finds
# threads and the program counts its library's calls.  From the build tree
# (build/meter-uninstalled.pc).
set -u

ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
. "$ROOT/selftests/tools_lib.sh" || exit 1

echo "1..4"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_docs_cmake_meson.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH=$ROOT/build
cflags="-O2 -g -fplugin=$(pkg-config --variable=gccplugin meter) $(pkg-config --cflags meter)"
libs=$(pkg-config --libs meter)

counts() { # build dir -> the program's flat profile, in build dir/flat
	METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$1/run.json" "$1/twigs" > /dev/null 2>&1
	"$ROOT/build/tools/meter-stat" -i "$1/run.json" -f flat > "$1/flat" 2>&1
}

if command -v cmake > /dev/null; then
	cmake -S "$ROOT/selftests/host/data/twigs" -B "$tmp/cmake" \
		-DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$libs" \
		-DCMAKE_SHARED_LINKER_FLAGS="$libs" > "$tmp/cmake.log" 2>&1
	check "cmake -DCMAKE_C_FLAGS=<the plugin> -DCMAKE_EXE_LINKER_FLAGS=<libmeter>: its probe finds threads" \
		grep -q 'Found Threads: TRUE' "$tmp/cmake.log" || diag "$tmp/cmake.log"
	cmake --build "$tmp/cmake" > "$tmp/cmake-build.log" 2>&1 && counts "$tmp/cmake"
	check "... the program it builds counts its library's calls (twig 300, main 1)" \
		bash -c "grep -qE ' 300 .* twig\$' '$tmp/cmake/flat' && grep -qE ' 1 .* main\$' '$tmp/cmake/flat'" ||
		diag "$tmp/cmake-build.log" "$tmp/cmake/flat"
else
	skip "the CMake recipe" "cmake is not installed"
	skip "the CMake recipe's program" "cmake is not installed"
fi

if command -v meson > /dev/null && command -v ninja > /dev/null; then
	CFLAGS="$cflags" LDFLAGS="$libs" meson setup "$tmp/meson" \
		"$ROOT/selftests/host/data/twigs" > "$tmp/meson.log" 2>&1
	check "CFLAGS=<the plugin> LDFLAGS=<libmeter> meson setup: its probe finds threads" \
		grep -q 'Run-time dependency threads found: YES' "$tmp/meson.log" || diag "$tmp/meson.log"
	ninja -C "$tmp/meson" > "$tmp/meson-build.log" 2>&1 && counts "$tmp/meson"
	check "... the program it builds counts its library's calls (twig 300, main 1)" \
		bash -c "grep -qE ' 300 .* twig\$' '$tmp/meson/flat' && grep -qE ' 1 .* main\$' '$tmp/meson/flat'" ||
		diag "$tmp/meson-build.log" "$tmp/meson/flat"
else
	skip "the Meson recipe" "meson or ninja is not installed"
	skip "the Meson recipe's program" "meson or ninja is not installed"
fi
exit $((fails > 0))
