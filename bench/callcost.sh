#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/callcost.sh [N]: instructions and time per instrumented call, meter
# against gprof and uftrace, on one call-heavy loop (bench/callcost.c).
# "meter --patch" is the uninstrumented build with its entries patched at
# load time (libmeter-patch.so, Documentation/patching.md).
# Reference rows: Appel's increment-and-store written by hand (the cost
# the manual modes aim at) and -finstrument-functions with empty hooks
# (bench/callcost_hooks.c: the floor under the automatic mode).  The GCC
# plugin (plugin/) builds the same source unedited, flat and stacked.
#
# Instructions come from callgrind (valgrind): the program is run with N and
# 2N calls and the difference divided by N, so start-up work (libmeter's
# calibration, measured in both runs, uftrace's set-up) cancels out.  "overhead" subtracts the
# uninstrumented loop.  Host ns/call is the loop's own timing with 10M calls
# (median of 5 runs).  meter runs with METER_BACKEND=off: sampling does not
# change the per-call path.  Needs the libmeter build (make).
set -eu
cd "$(dirname "$0")/.."
N=${1:-100000}
B=build/bench/callcost
mkdir -p "$B"
CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Iinclude/uapi -Iinclude -Ilib"
LM="-Lbuild/lib -Wl,-rpath,$PWD/build/lib -lmeter"
[ -f build/lib/libmeter.so ] || make -s build/lib/libmeter.so

gcc $CFLAGS -o $B/baseline bench/callcost.c
gcc $CFLAGS -DAPPEL_REF -o $B/appel bench/callcost.c
gcc $CFLAGS -DMETER_MANUAL -o $B/manual bench/callcost.c $LM
gcc $CFLAGS -DMETER_MANUAL -DMETER_FLAT -o $B/flat bench/callcost.c $LM
gcc $CFLAGS -finstrument-functions -o $B/auto bench/callcost.c $LM
# the GCC plugin: callee is a leaf, so flat by the leaf rule; flat=none
# makes it stacked (what a function that calls others pays)
[ -f build/plugin/meter.so ] || make -s build/plugin/meter.so
gcc $CFLAGS -fplugin=build/plugin/meter.so -fplugin-arg-meter-tiny=0 -o $B/plugin_flat bench/callcost.c $LM
gcc $CFLAGS -fplugin=build/plugin/meter.so -fplugin-arg-meter-tiny=0 -fplugin-arg-meter-flat=none \
	-o $B/plugin bench/callcost.c $LM
# the hooks called through the GOT rather than the PLT
gcc $CFLAGS -finstrument-functions -fno-plt -o $B/auto_noplt bench/callcost.c $LM
# the hooks linked into the executable: direct calls, no PLT
gcc $CFLAGS -finstrument-functions -o $B/auto_static bench/callcost.c \
	build/lib/libmeter.a $(pkg-config --libs libnl-genl-3.0) -lpthread
# the floor: empty hooks linked into the executable
gcc $CFLAGS -finstrument-functions -o $B/auto_empty bench/callcost.c \
	bench/callcost_hooks.c
gcc $CFLAGS -pg -o $B/gprof bench/callcost.c

have_uftrace=0
command -v uftrace >/dev/null && have_uftrace=1

# A variant's binary: its build, or for "patched" the plain one, run
# with patch_env (libmeter-patch.so preloaded; valgrind passes it on).
bin_of() {
	if [ "$1" = patched ]; then echo $B/baseline; else echo $B/$1; fi
}
patch_env() {
	if [ "$1" = patched ]; then
		echo LD_PRELOAD=$PWD/build/lib/libmeter-patch.so METER_PATCH=exe
	fi
}

# instructions executed by the program (callgrind, Ir); for uftrace, the
# traced program's process only (uftrace itself is another process).
ir() {
	local out=$PWD/$B/cg.$$ prog=$1; shift
	rm -f $out.*
	if [ "$prog" = uftrace ] || [ "$prog" = uftrace_dyn ]; then
		local bin=gprof f
		local -a how=()
		# dynamic: uftrace patches the plain binary's entries itself
		[ "$prog" = uftrace_dyn ] && { bin=baseline; how=(-P .); }
		( cd $B && valgrind --tool=callgrind --trace-children=yes \
			--callgrind-out-file=$out.%p uftrace record "${how[@]}" \
			-d uftrace.data.$$ ./$bin "$@" >/dev/null 2>&1 ) || true
		rm -rf $B/uftrace.data.$$
		# the traced program's file: the one whose command is ./$bin
		f=$(grep -l "^cmd: *\./$bin" $out.* 2>/dev/null | head -n 1)
		[ -n "$f" ] || { echo NA; return; }
		awk '/^summary:/ { print $2 }' "$f"
	else
		# calibration measured in every run (its instructions are
		# fixed), never kept: both runs start the same way
		env $(patch_env $prog) METER_BACKEND=off METER_QUIET=1 \
		METER_OUTPUT=/dev/null METER_CACHE_DIR=off \
			valgrind --tool=callgrind --callgrind-out-file=$out.1 \
			$(bin_of $prog) "$@" >/dev/null 2>&1
		awk '/^summary:/ { print $2 }' $out.1
	fi
	rm -f $out.* gmon.out $B/gmon.out
}

per_call() {
	local a b
	a=$(ir "$1" "$N"); b=$(ir "$1" $((2 * N)))
	if [ "$a" = NA ] || [ -z "$a" ] || [ -z "$b" ]; then echo NA; return; fi
	# four decimals, rounded to one when printed: bc's scale truncates,
	# and a truncated 18.0 - 50 / N read 17.9 in one run, 18.0 in the next
	echo "scale=4; ($b - $a) / $N" | bc
}

one() {
	case $1 in NA) echo NA ;; *) printf '%.1f' "$1" ;; esac
}

ns_call() {
	local prog=$1 runs=() i
	for i in 1 2 3 4 5; do
		if [ "$prog" = uftrace ]; then
			runs+=("$(cd $B && uftrace record -d uftrace.data.$$ ./gprof 10000000 2>/dev/null | awk '{print $1}')")
			rm -rf $B/uftrace.data.$$
		elif [ "$prog" = uftrace_dyn ]; then
			runs+=("$(cd $B && uftrace record -P . -d uftrace.data.$$ ./baseline 10000000 2>/dev/null | awk '{print $1}')")
			rm -rf $B/uftrace.data.$$
		else
			runs+=("$(env $(patch_env $prog) METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null $(bin_of $prog) 10000000 | awk '{print $1}')")
		fi
	done
	rm -f gmon.out $B/gmon.out
	printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p
}

printf '%-42s %10s %10s %10s\n' "variant" "instr/call" "overhead" "ns/call"
base=$(per_call baseline)
[ -f build/lib/libmeter-patch.so ] || make -s build/lib/libmeter-patch.so
for v in baseline appel flat manual plugin_flat plugin patched auto auto_noplt auto_static auto_empty gprof uftrace uftrace_dyn; do
	label=$v
	case $v in
	appel) label="Appel increment-and-store (by hand)" ;;
	flat) label="meter flat (METER_FUNCTION_FLAT)" ;;
	manual) label="meter manual (METER_FUNCTION)" ;;
	plugin_flat) label="meter GCC plugin, flat (a leaf)" ;;
	plugin) label="meter GCC plugin, stacked (flat=none)" ;;
	patched) label="meter --patch (plain build, patched)" ;;
	auto) label="meter automatic (-finstrument-functions)" ;;
	auto_noplt) label="meter automatic, -fno-plt" ;;
	auto_static) label="meter automatic, libmeter.a" ;;
	auto_empty) label="-finstrument-functions, empty hooks" ;;
	gprof) label="gprof (gcc -pg, mcount)" ;;
	uftrace) label="uftrace record (gcc -pg)"
		[ $have_uftrace = 1 ] || { printf '%-42s %10s\n' "$label" "not installed"; continue; } ;;
	uftrace_dyn) label="uftrace record -P . (plain build)"
		[ $have_uftrace = 1 ] || { printf '%-42s %10s\n' "$label" "not installed"; continue; } ;;
	esac
	if [ $v = baseline ]; then pc=$base; else pc=$(per_call $v); fi
	if [ "$pc" = NA ]; then ov=NA; else ov=$(echo "scale=4; $pc - $base" | bc); fi
	printf '%-42s %10s %10s %10s\n' "$label" "$(one "$pc")" "$(one "$ov")" "$(ns_call $v)"
done

# Start-up: the instructions of an empty main built with
# -finstrument-functions and libmeter (callgrind), the first run on this
# machine (which measures the calibration and keeps it) and the next (which
# finds it), beside the same main without meter.
printf 'int main(void) { return 0; }\n' > $B/empty.c
gcc $CFLAGS -finstrument-functions -o $B/empty_meter $B/empty.c $LM
gcc $CFLAGS -o $B/empty_plain $B/empty.c
startup_ir() {
	local out=$B/startup.cg
	METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null \
	METER_CACHE_DIR=$B/startup.cache \
		valgrind --tool=callgrind --callgrind-out-file=$out $B/$1 \
		>/dev/null 2>&1
	awk '/^summary:/ { print $2 }' $out
	rm -f $out
}
rm -rf $B/startup.cache
cold=$(startup_ir empty_meter)
warm=$(startup_ir empty_meter)
plain=$(startup_ir empty_plain)
echo
printf 'startup: empty main, instructions: meter first run %s, meter later runs %s, without meter %s\n' \
	"$cold" "$warm" "$plain"
