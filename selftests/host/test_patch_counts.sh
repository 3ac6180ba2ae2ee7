#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-run --patch on a program built as users build (-O2 -g, no meter
# flags; selftests/host/patch_workload.c): every function it patched has
# the call count callgrind gives for the same binary (calls= lines summed
# per function, recursion, longjmp, a tail call, a signal handler and
# threads included), every function callgrind saw called is patched or
# listed as refused, the program's output is unchanged, counts stay exact
# under a storm of signals whose handler calls patched functions
# (selftests/host/patch_signals.c), coroutines and an alternate signal
# stack below and above the thread's never lose a return and keep the
# counts (patch_contexts.c), --patch=OBJ patches shared libraries, one
# loaded with dlopen included, and --patch=all the C library too
# (patch_libs.c), exec after vfork and after fork patches each
# new image under --follow-fork (patch_exec.c), C++ exceptions thrown through
# patched frames unwind as without and leave the counts exact
# (selftests/host/patch_exceptions.cc, and its stripped copy, whose .cold
# parts .eh_frame shows as entered by a jump), and Debian's own
# stripped /usr/bin/bzip2, patched from .eh_frame, compresses exactly as
# without.  Signal backend (the kernel one is in the VM tests).
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
PROG=$ROOT/build/selftests/host/patch_workload

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_patch_counts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# callgrind's output for a command (NAME: the file's stem), its path on
# stdout; the command's pid names the file, so callgrind's own children
# cannot be taken for it
callgrind_of() { # name command...
	local name=$1 cg
	shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/$name.%p" \
		"$@" > /dev/null 2> "$tmp/$name.err" &
	cg=$!
	wait $cg
	echo "$tmp/$name.$cg"
}

if ! command -v valgrind > /dev/null 2>&1; then
	echo "1..0 # SKIP valgrind is not installed"
	exit 4
fi
echo "1..17"

"$PROG" > "$tmp/plain.out"
"$RUN" --backend signal --patch --patch-list -f json -o "$tmp/m.json" \
	-- "$PROG" > "$tmp/patched.out" 2> "$tmp/patch.err"
check "the patched program prints what the plain one prints" \
	cmp "$tmp/plain.out" "$tmp/patched.out" || diag "$tmp/patch.err"

cgw=$(callgrind_of cg "$PROG")
check "every patched function's count is callgrind's" \
	python3 "$ROOT/selftests/host/callgrind_calls.py" "$cgw" "$PROG" \
		"$tmp/m.json" "$tmp/patch.err" 100

check "a patched call's cost is measured: above libmeter's own call, for the reports' estimate" \
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
c = [f.get("cost_ps", 0) for f in p["functions"] if f.get("calls")]
print("# libmeter call %d ps, patched call %s ps" % (p["call_cost_ps"], sorted(set(c))))
sys.exit(0 if c and min(c) > p["call_cost_ps"] > 0 else 1)' "$tmp/m.json"

# the same program with every object patched, the C library included:
# its threads end inside patched frames of the C library
"$RUN" --backend signal --patch=all --patch-list -f json -o "$tmp/wall.json" \
	-- "$PROG" > "$tmp/wall.out" 2> "$tmp/wall.err"
check "--patch=all: the same program runs as without, its counts still callgrind's" \
	bash -c "cmp -s '$tmp/plain.out' '$tmp/wall.out' &&
		 python3 '$ROOT/selftests/host/callgrind_calls.py' '$cgw' '$PROG' \
			'$tmp/wall.json' '$tmp/wall.err' 100" || diag "$tmp/wall.err"

check "the refused are listed with their reasons" \
	grep -q "^meter: refused handler: under 5 bytes" "$tmp/patch.err" ||
	diag "$tmp/patch.err"
"$ROOT/build/tools/meter-stat" -i "$tmp/m.json" > "$tmp/report"
check "the profile names the refused, never a silent zero: JSON and report" \
	bash -c "python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
r = {f[\"name\"]: f.get(\"refused\") for f in p[\"functions\"]}
sys.exit(0 if r.get(\"handler\", \"\").startswith(\"under 5 bytes\") else 1)' '$tmp/m.json' &&
		 grep -q 'left unpatched by --patch, not counted: handler (under 5 bytes' '$tmp/report'" ||
	diag "$tmp/report"

# handlers between every two instructions of the entries and returns
"$RUN" --backend off --patch -f json -o "$tmp/sig.json" \
	-- "$ROOT/build/selftests/host/patch_signals" 1000000 \
	> "$tmp/sig.out" 2> "$tmp/sig.err"
check "under a signal storm, every call of main and of the handlers is counted" \
	python3 -c 'import json, sys
n, hits = map(int, open(sys.argv[2]).read().split())
c = {f["name"]: f.get("calls") for f in json.load(open(sys.argv[1]))["functions"]}
print("# %d loops, %d handlers, counts %s" % (n, hits, c))
sys.exit(0 if hits > 1000 and c.get("rec") == 6 * n + 4 * hits and
	 c.get("in_handler") == hits else 1)' "$tmp/sig.json" "$tmp/sig.out" ||
	diag "$tmp/sig.err"

# each function of patch_contexts prints how often it ran
"$RUN" --backend signal --patch -f json -o "$tmp/ctx.json" \
	-- "$ROOT/build/selftests/host/patch_contexts" \
	> "$tmp/ctx.out" 2> "$tmp/ctx.err"
check "coroutines and an alternate signal stack, below and above the thread's: each function's count is its own" \
	python3 -c 'import json, sys
c = {f["name"]: f.get("calls") for f in json.load(open(sys.argv[1]))["functions"]}
own = dict((w[0], int(w[1])) for w in (l.split() for l in open(sys.argv[2])))
print("# counted by the program: %s" % own)
sys.exit(0 if own and own["leaf"] > 1000 and
	 all(c.get(k) == v for k, v in own.items()) else 1)' \
		"$tmp/ctx.json" "$tmp/ctx.out" || diag "$tmp/ctx.err"

"$RUN" --backend signal --patch --follow-fork -f json -o "$tmp/exec.json" \
	-- "$ROOT/build/selftests/host/patch_exec" > "$tmp/exec.out" 2> "$tmp/exec.err"
check "exec after vfork and after fork: each image patched, the merged counts whole" \
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
c = {f["name"]: f.get("calls") for f in p["functions"]}
print("# %d processes, counts %s" % (len(p["processes"]), c))
sys.exit(0 if len(p["processes"]) == 7 and c.get("work") == 31 and
	 c.get("main") == 7 and c.get("spawn") == 6 else 1)' "$tmp/exec.json" ||
	diag "$tmp/exec.err"

LIBS=$ROOT/build/selftests/host/patch_libs
PLUG=$ROOT/build/selftests/host/patch_plugin.so
"$LIBS" "$PLUG" > "$tmp/libs.plain"
"$RUN" --backend signal --patch=libpatchdemo.so.1,patch_plugin.so \
	--patch-list -f json -o "$tmp/libs.json" -- "$LIBS" "$PLUG" \
	> "$tmp/libs.out" 2> "$tmp/libs.err"
cgl=$(callgrind_of cgl "$LIBS" "$PLUG")
check "--patch=LIB,PLUGIN: a library's and a dlopened plugin's counts are callgrind's" \
	bash -c "cmp '$tmp/libs.plain' '$tmp/libs.out' &&
		 python3 '$ROOT/selftests/host/callgrind_calls.py' '$cgl' \
			'$(dirname "$LIBS")/libpatchdemo.so.1' '$tmp/libs.json' \
			'$tmp/libs.err' 0 &&
		 python3 '$ROOT/selftests/host/callgrind_calls.py' '$cgl' \
			'$PLUG' '$tmp/libs.json' '$tmp/libs.err' 0" ||
	diag "$tmp/libs.err"
check "--patch=LIB,PLUGIN: the executable is left alone" \
	python3 -c 'import json, sys
c = {f["name"]: f.get("calls") for f in json.load(open(sys.argv[1]))["functions"]}
sys.exit(0 if "main" not in c else 1)' "$tmp/libs.json"
"$RUN" --backend signal --patch=all -f json -o "$tmp/all.json" \
	-- "$LIBS" "$PLUG" > "$tmp/all.out" 2> "$tmp/all.err"
check "--patch=all: runs as without, the C library's lrand48 counted as called" \
	python3 -c 'import json, sys
c = {f["name"]: f.get("calls") for f in json.load(open(sys.argv[1]))["functions"]}
want = int(open(sys.argv[2]).read().split()[1])
print("# lrand48 %s of %d, lib_leaf %s, plug_leaf %s, main %s" % (c.get("lrand48"),
      want, c.get("lib_leaf"), c.get("plug_leaf"), c.get("main")))
sys.exit(0 if open(sys.argv[2]).read() == open(sys.argv[3]).read() and
	 c.get("lrand48") == want and c.get("lib_leaf") == 1000 and
	 c.get("plug_leaf") == 500 and c.get("main") == 1 else 1)' \
		"$tmp/all.json" "$tmp/libs.plain" "$tmp/all.out" || diag "$tmp/all.err"

EXC=$ROOT/build/selftests/host/patch_exceptions
"$EXC" > "$tmp/exc.plain"
"$RUN" --backend signal --patch --patch-list -f json -o "$tmp/exc.json" \
	-- "$EXC" > "$tmp/exc.out" 2> "$tmp/exc.err"
check "C++: exceptions through patched frames unwind as without" \
	cmp "$tmp/exc.plain" "$tmp/exc.out" || diag "$tmp/exc.err"
cgx=$(callgrind_of cgx "$EXC")
check "C++: every patched function's count is callgrind's, none refused" \
	python3 "$ROOT/selftests/host/callgrind_calls.py" "$cgx" "$EXC" \
		"$tmp/exc.json" "$tmp/exc.err" 0
"$RUN" --backend signal --patch --patch-list -f json -o "$tmp/exs.json" \
	-- "$EXC.stripped" \
	> "$tmp/exs.out" 2> "$tmp/exs.err"
check "C++ stripped: the .cold parts are no functions, and it runs as without" \
	bash -c "cmp '$tmp/exc.plain' '$tmp/exs.out' &&
		 [ \$(grep -c '^meter: patched ' '$tmp/exs.err') = \
		   \$(grep -c '^meter: patched ' '$tmp/exc.err') ]" ||
	diag "$tmp/exs.err"

head -c 400000 /usr/bin/ld > "$tmp/in"
BZLIB=$(readlink -f /lib/x86_64-linux-gnu/libbz2.so.1.0 2> /dev/null)
if [ -x /usr/bin/bzip2 ] && [ -f "$BZLIB" ]; then
	"$RUN" --backend signal --patch=exe,libbz2.so.1.0 --patch-list \
		-f json -o "$tmp/bz.json" -- /usr/bin/bzip2 -c "$tmp/in" \
		> "$tmp/in.bz2" 2> "$tmp/bz.err"
	check "Debian's stripped bzip2 and libbz2, patched from .dynsym and .eh_frame, compress as without" \
		bash -c "bzip2 -dc '$tmp/in.bz2' | cmp - '$tmp/in' &&
			 grep -q 'patched [1-9][0-9]* functions of /usr/bin/bzip2' '$tmp/bz.err'" ||
		diag "$tmp/bz.err"
	cgb=$(callgrind_of cgb /usr/bin/bzip2 -c "$tmp/in")
	check "Debian's stripped bzip2 and libbz2: every patched function's count is callgrind's" \
		bash -c "python3 '$ROOT/selftests/host/callgrind_calls.py' \
				'$cgb' /usr/bin/bzip2 '$tmp/bz.json' '$tmp/bz.err' 0 &&
			 python3 '$ROOT/selftests/host/callgrind_calls.py' \
				'$cgb' '$BZLIB' '$tmp/bz.json' '$tmp/bz.err' 5"
else
	skip "Debian's stripped bzip2 and libbz2 compress as without" "not installed"
	skip "Debian's stripped bzip2 and libbz2: counts" "not installed"
fi
[ $fails = 0 ]
