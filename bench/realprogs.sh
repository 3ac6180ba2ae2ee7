#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Real programs from Debian's sources, built for meter's comparisons
# (sourced by bench/run.sh and selftests/host/test_realprog_counts.sh):
#
#   realprogs_build DIR [PROG...]  bzip2, lua5.4 and zstd (libzstd's source: the
#                           library and its CLI) from `apt-get source`
#                           (scripts/debian-source) into DIR/{bzip2,lua,
#                           zstd}/ (zstd: plain and plugin only):
#       plain       Debian's flags (dpkg-buildflags: -g -O2, inlining on,
#                   fortified, stack protector, PIE), no instrumentation:
#                   perf's subject, the truth
#       plugin      the same flags and meter's GCC plugin, linked with
#                   libmeter: the build a user makes
#       pg          -O2 -pg without inlining or cloning (gprof's exact
#                   counts for every function, recursive calls included)
#       pg-deb      Debian's flags and -pg: gprof on the build people
#                   make, for the whole-run overheads (bench/patch_overhead.sh)
#       plain-ni, plugin-ni   -O2 -g without inlining or clones, plain
#                   and with the plugin: the builds of meter's earlier
#                   figures, kept beside (labelled "without inlining")
#       plugin-pg   both at once: the plugin and -pg without inlining, so
#                   that gprof's and meter's counts come from one binary
#                   and one run (Lua's string cache is keyed by the
#                   address of C strings: two binaries do slightly
#                   different work)
#   realprogs_args PROG DIR SCALE   the arguments of one workload run
#   realprogs_scale PROG vm|host    make bench's scale of one program: about
#                           half a second of TCG in the VM, a second or
#                           two on the host (the signal backend's samples
#                           come at the scheduler tick)
#   realprogs_perf_binary DEST      perf's own binary copied to DEST, for a VM
#
# The Lua build fixes its hash seed and sort pivot (luai_makeseed,
# l_randomizePivot), and makes the C API's string cache one set
# (STRCACHE_N=1: its sets are chosen by the C strings' addresses, which
# ASLR moves, and a run that happened to evict one string more called
# luaS_newlstr once more than the run it was compared with), so that every
# run does the same work; the workloads are bench/realprogs/work.lua and
# bzip2 -9 over Lua's own sources.

REALPROGS_ROOT=${REALPROGS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# what -pg needs to see every call: no inlining, no clones, no split parts
REALPROGS_NOINLINE="-fno-inline -fno-ipa-cp -fno-ipa-sra -fno-partial-inlining -fno-ipa-icf -fno-optimize-sibling-calls"

# Debian's own flags for a package build (what `dpkg-buildflags` gives
# debian/rules): the same for every build directory
realprogs_debian_flags() {
	echo "$(dpkg-buildflags --get CFLAGS | sed 's/-ffile-prefix-map=[^ ]*//') $(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get LDFLAGS)"
}

realprogs_variant_flags() { # variant
	local r=$REALPROGS_ROOT
	case $1 in
	plain) realprogs_debian_flags ;;
	plugin) echo "$(realprogs_debian_flags) -fplugin=$r/build/plugin/meter.so" ;;
	pg) echo "-O2 -g -pg $REALPROGS_NOINLINE" ;;
	pg-deb) echo "$(realprogs_debian_flags) -pg" ;;
	plain-ni) echo "-O2 -g $REALPROGS_NOINLINE" ;;
	# every function counted, tiny ones too: gprof's counts are compared
	plugin-ni) echo "-O2 -g -fplugin=$r/build/plugin/meter.so -fplugin-arg-meter-tiny=0 $REALPROGS_NOINLINE" ;;
	plugin-pg) echo "-O2 -g -pg -fplugin=$r/build/plugin/meter.so -fplugin-arg-meter-tiny=0 $REALPROGS_NOINLINE" ;;
	esac
}

realprogs_variant_libs() { # variant
	case $1 in
	plugin*) echo "-L$REALPROGS_ROOT/build/lib -Wl,-rpath,$REALPROGS_ROOT/build/lib -lmeter" ;;
	esac
}

# a build is current when built with the flags of now (kept beside it in
# BINARY.flags) and newer than what it was built with: this recipe, the
# plugin, <meter.h> (its layout) and libmeter
realprogs_current() { # binary variant
	local r=$REALPROGS_ROOT
	[ -x "$1" ] && [ "$1" -nt "$r/bench/realprogs.sh" ] || return 1
	[ "$(cat "$1.flags" 2>/dev/null)" = "$(realprogs_variant_flags "$2")" ] || return 1
	case $2 in
	plugin*) [ "$1" -nt "$r/build/plugin/meter.so" ] && [ "$1" -nt "$r/include/meter.h" ] &&
		[ "$1" -nt "$r/build/lib/libmeter.so" ] ;;
	esac
}

# realprogs_compile PROG VARIANT SRCDIR OUT: one build of one program; the
# plugin's builds keep the names of the functions it left alone as tiny
# (OUT.tiny), which are the program's own functions all the same
realprogs_compile() {
	local prog=$1 v=$2 src=$3 out=$4 log
	local -a files defs
	case $prog in
	bzip2)	defs=(-D_FILE_OFFSET_BITS=64)
		files=($(for f in blocksort huffman crctable randtable compress decompress bzlib bzip2; do echo "$src/$f.c"; done)) ;;
	lua)	defs=(-std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -I"$(dirname "$(dirname "$out")")"
		      -D'luai_makeseed(L)=0u' -D'l_randomizePivot()=0u'
		      -DSTRCACHE_N=1 -DSTRCACHE_M=2)
		files=($(ls "$src"/src/*.c | grep -v '/luac\.c$')) ;;
	zstd)	# the CLI and the library in one binary, threads on, the
		# decoder's x86-64 assembly as Debian builds it
		defs=(-DZSTD_MULTITHREAD -DZSTD_LEGACY_SUPPORT=0 -pthread
		      -I"$src/lib" -I"$src/lib/common")
		files=($(ls "$src"/lib/common/*.c "$src"/lib/compress/*.c \
			"$src"/lib/decompress/*.c "$src"/lib/decompress/*.S \
			"$src"/lib/dictBuilder/*.c "$src"/programs/*.c)) ;;
	esac
	local -a extra=()
	case $v in plugin*) extra=(-fplugin-arg-meter-verbose) ;; esac
	# a log of its own: two builders of one tree must not share it
	log=$(mktemp "$out.notes.XXXXXX") || return 1
	# shellcheck disable=SC2046
	gcc $(realprogs_variant_flags "$v") "${extra[@]}" -w "${defs[@]}" \
		-o "$out" "${files[@]}" $(realprogs_variant_libs "$v") -lm -ldl \
		2> "$log" || { cat "$log" >&2; rm -f "$log"; return 1; }
	sed -n "s/.*meter: .\(.*\). tiny (.*/\1/p" "$log" | sort -u > "$out.tiny"
	rm -f "$log"
	# the default tiny rule leaves some of every real program alone; an
	# empty list is a lost log, and perf's truth would give their time
	# to their callers
	if [ "$v" = plugin ] && [ ! -s "$out.tiny" ]; then
		echo "realprogs: $prog: the plugin named no tiny function (log lost?)" >&2
		rm -f "$out" "$out.tiny"
		return 1
	fi
	realprogs_variant_flags "$v" > "$out.flags"
}

realprogs_build() { # dir [prog...]: all three by default
	local dir=$1 v bz lua zs progs=" ${*:2} "
	[ "$progs" != "  " ] || progs=" bzip2 lua zstd "
	mkdir -p "$dir/src"
	bz=$("$REALPROGS_ROOT/scripts/debian-source" bzip2 "$dir/src") || return 1
	lua=$("$REALPROGS_ROOT/scripts/debian-source" lua5.4 "$dir/src") || return 1
	# Debian's patched luaconf.h includes a header its rules generate
	[ -f "$dir/lua/lua5.4-deb-multiarch.h" ] ||
		{ mkdir -p "$dir/lua" && echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > "$dir/lua/lua5.4-deb-multiarch.h"; }
	for v in plain plugin pg plugin-pg plain-ni plugin-ni pg-deb; do
		mkdir -p "$dir/bzip2/$v" "$dir/lua/$v"
		[[ $progs != *" bzip2 "* ]] || realprogs_current "$dir/bzip2/$v/bzip2" $v ||
			realprogs_compile bzip2 $v "$bz" "$dir/bzip2/$v/bzip2" || return 1
		[[ $progs != *" lua "* ]] || realprogs_current "$dir/lua/$v/lua" $v ||
			realprogs_compile lua $v "$lua" "$dir/lua/$v/lua" || return 1
	done
	# zstd: Debian's flags only (its counts are not compared with gprof)
	if [[ $progs == *" zstd "* ]]; then
		zs=$("$REALPROGS_ROOT/scripts/debian-source" libzstd "$dir/src") || return 1
		for v in plain plugin; do
			mkdir -p "$dir/zstd/$v"
			realprogs_current "$dir/zstd/$v/zstd" $v ||
				realprogs_compile zstd $v "$zs" "$dir/zstd/$v/zstd" || return 1
		done
	fi
	# the input of bzip2 and zstd: Lua's sources, about 1 MB, the same on
	# every machine
	[ -s "$dir/bzip2/input" ] || cat "$lua"/src/*.c "$lua"/src/*.h > "$dir/bzip2/input"
}

realprogs_scale() { # prog vm|host
	if [ "$2" = host ]; then
		case $1 in bzip2) echo 20 ;; lua) echo 12 ;; zstd) echo 3 ;; esac
	else
		case $1 in bzip2) echo 2 ;; lua) echo 4 ;; zstd) echo 2 ;; esac
	fi
}

# perf inside a VM: Debian's /usr/bin/perf may be a wrapper script that
# execs perf_<version>; the real binary goes next to the workloads
# (vm-run copies the tree and the libraries its ELF files need)
realprogs_perf_binary() { # dest
	local realperf p
	realperf=$(command -v perf)
	if ! file -L "$realperf" 2>/dev/null | grep -q ELF; then
		for p in /usr/bin/perf_6.1 /usr/bin/perf_* /usr/lib/linux-tools*/perf; do
			[ -x "$p" ] && { realperf=$p; break; }
		done
	fi
	cp -L "$realperf" "$1"
}

realprogs_args() { # prog dir scale: one run's arguments, a word a line
	local i
	case $1 in
	bzip2)	# one process: compress the input scale times, to stdout
		printf '%s\n' -9 -c -k
		for ((i = 0; i < $3; i++)); do echo "$2/bzip2/input"; done ;;
	lua) printf '%s\n' "$REALPROGS_ROOT/bench/realprogs/work.lua" "$3" ;;
	zstd)	# two worker threads, level 19 (the optimal parser), the
		# same input as bzip2's, scale times, to stdout
		printf '%s\n' -q -T2 -19 -c -k
		for ((i = 0; i < $3; i++)); do echo "$2/bzip2/input"; done ;;
	esac
}
