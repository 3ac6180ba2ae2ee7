#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The reports' reading by address (each sample carries the user address
# it was taken at: meter.ko's, and the signal backend's): on a program
# built with the plugin at -O2 -g, a tiny function inlined without a
# record gets its own samples, meter's own instructions are taken out,
# and the report says so; --no-correction gives the samples as taken; a
# profile file read again reads the same; a map naming a FIFO (which
# would block) is not read; the separate debug file of a program not
# built for meter is not read either (its symbols name it); a patched
# GCC clone keeps its samples (C and C++).  The signal backend here;
# meter.ko in the VM (selftests/vm/test_tools_byaddr.sh, through
# selftests/on-kernel).
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
BACKEND=${LIBTEST_BACKEND:-signal}
RUN=$ROOT/build/tools/meter-run
STAT=$ROOT/build/tools/meter-stat
# the path the maps name: the real one (check-asan runs from a view of links)
PROG=$(readlink -f "$ROOT/build/selftests/tools_inlined")
export METER_QUIET=1
# the signal backend ticks at the scheduler tick (250 a second): more work
[ "$BACKEND" = kernel ] && ROUNDS=${TOOLS_INLINED_ROUNDS:-30000} ||
	ROUNDS=${TOOLS_INLINED_ROUNDS:-300000}

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_byaddr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

echo "1..17"

# the share (%time) and calls of a flat profile's row; "-" when none
row() { # report, name
	flat_rows "$1" | awk -v f="$2" '$NF == f { print $1, (NF >= 7 ? $4 : 0); h = 1 }
		END { if (!h) print "-" }'
}

"$RUN" --backend "$BACKEND" -f json -o prof.json -- "$PROG" "$ROUNDS" > /dev/null 2> run.err
check "meter-run --backend $BACKEND -f json: the profile has addresses and maps" \
	python3 -c 'import json, sys
p = json.load(open("prof.json"))
sys.exit(not (p.get("addresses") and p.get("maps")))' || diag run.err

"$STAT" -i prof.json -f flat > byaddr.out 2> byaddr.err
read -r mix_pct mix_calls <<< "$(row byaddr.out mix)"
read -r work_pct work_calls <<< "$(row byaddr.out work)"
echo "# by address: mix $mix_pct % ($mix_calls calls), work $work_pct % ($work_calls calls)"
check "by address (the default): mix, inlined without a record, is a row with no calls" \
	test "$mix_pct" != - -a "$mix_calls" = 0 || { diag byaddr.out; diag byaddr.err; }
check "by address: mix has most of work's time (its own instructions)" \
	awk -v m="$mix_pct" -v w="$work_pct" 'BEGIN { exit !(m + 0 > w + 0 && m + 0 > 30) }' ||
	diag byaddr.out
check "by address: work keeps its exact calls ($ROUNDS)" test "$work_calls" = "$ROUNDS"
# rows(): a copy counted without being made current, in work2 (tiny, left
# alone), with mix inlined into it; by address between work2 and mix
"$STAT" -i prof.json -f folded > folded.out 2>&1
# (its own few instructions may have no sample: under TCG a sample falls
# at the end of a translation block, mix's)
read -r rows_pct rows_calls <<< "$(row byaddr.out rows)"
check "by address: rows, a counted copy, keeps its exact calls ($rows_calls of $ROUNDS; $rows_pct % its own)" \
	test "$rows_calls" = "$ROUNDS" || { diag byaddr.out; diag folded.out; }
check "by address: mix, inlined into rows, is under it (main;work2;rows;mix), never under work2 directly" \
	bash -c "grep -q '^main;work2;rows;mix [1-9]' folded.out && ! grep -q '^main;work2;mix ' folded.out" ||
	diag folded.out
check "by address: the report says what it took out and moved" \
	grep -q "^By address: meter's own instructions .* taken out; .* moved" byaddr.out ||
	diag byaddr.out

"$STAT" -i prof.json -f flat --no-correction > taken.out 2>&1
check "--no-correction: the samples as taken, no row for mix" \
	test "$(row taken.out mix)" = - || diag taken.out
check "--no-correction: no line about addresses" \
	bash -c '! grep -q "^By address" taken.out'

# the same samples on the program's current path, read again from the file
"$STAT" -i prof.json -f flat > again.out 2>&1
check "the file read again reads the same" cmp -s byaddr.out again.out

# the interpreters' modules are meter's own, as libmeter is: the program's
# map renamed as Lua's meter.so and Python's _meter extension (files that
# are not there: the name decides), its samples are all taken out
own_pct() { sed -n 's/^By address: .*(\([0-9.]*\)% of the samples), taken out.*/\1/p' "$1"; }
prog_pct=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); m = [x for x in p["maps"] if x["path"] == sys.argv[2]]
inside = lambda a: any(int(x["start"]) <= int(a["ip"]) < int(x["end"]) for x in m)
print(round(100.0 * sum(a["samples"] for a in p["addresses"] if inside(a)) / p["samples"], 1))' \
	prof.json "$PROG")
for mod in lua/5.4/meter.so meter/_meter.cpython-311-x86_64-linux-gnu.so; do
	sed "s|\"path\": \"$PROG\"|\"path\": \"$tmp/$mod\"|" prof.json > mod.json
	"$STAT" -i mod.json -f flat > mod.out 2>&1
	check "a map named $(basename "$mod"): its samples ($prog_pct %) are meter's own ($(own_pct mod.out) %)" \
		python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2] or -1)
sys.exit(not (a > 50 and b >= a - 0.1))' "$prog_pct" "$(own_pct mod.out)" || diag mod.out
done

# a map that names a FIFO: never opened for reading (it would block)
mkfifo fifo
sed "s|\"path\": \"$PROG\"|\"path\": \"$tmp/fifo\"|" prof.json > fifo.json
timeout 60 "$STAT" -i fifo.json -f flat > fifo.out 2>&1
rc=$?
check "a map naming a FIFO: read in time (status $rc), no row for mix" \
	test $rc -eq 0 -a "$(row fifo.out mix)" = - || diag fifo.out

# a map that names a device: looked at, never opened for reading
sed "s|\"path\": \"$PROG\"|\"path\": \"/dev/zero\"|" prof.json > dev.json
if command -v strace > /dev/null; then
	strace -f -e trace=open,openat -o dev.trace "$STAT" -i dev.json -f flat > dev.out 2>&1
	check "a map naming a device: only looked at (O_PATH), never opened to read" \
		bash -c 'grep "/dev/zero\"" dev.trace | grep -q O_PATH &&
			 ! grep "/dev/zero" dev.trace | grep -qv O_PATH' ||
		diag dev.trace
else
	skip "a map naming a device: only looked at (O_PATH)" "no strace"
fi

# a program not built for meter, its debug information split off beside
# it (.gnu_debuglink, .symtab kept), profiled as it is (--patch): its
# samples are in its own code, and the report names them by its symbols,
# never opening the debug file (whose decoding, for libc6-dbg's
# compressed libc, took 400 million instructions a report)
cat > spin.c <<'EOC'
volatile unsigned long sink;
__attribute__((noinline)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}
int main(void)
{
	spin(400000000UL);
	return 0;
}
EOC
if command -v strace > /dev/null && command -v objcopy > /dev/null &&
	${CC:-gcc} -O2 -g -o plain spin.c &&
	objcopy --only-keep-debug plain plain.debug &&
	objcopy --strip-debug --add-gnu-debuglink=plain.debug plain; then
	"$RUN" --backend "$BACKEND" --patch -f json -o plain.json -- ./plain \
		> /dev/null 2> plain.err
	strace -f -e trace=open,openat -o plain.trace "$STAT" -i plain.json -f flat > plain.out 2>&1
	read -r spin_pct spin_calls <<< "$(flat_rows plain.out |
		awk '$NF ~ /^spin/ { print $1, $4; h = 1 } END { if (!h) print "- -" }')"
	check "a program not built for meter, patched: its samples in its code (spin $spin_pct %), its separate debug file never opened" \
		bash -c "test '$spin_pct' != - && awk 'BEGIN { exit !($spin_pct > 50) }' &&
			 grep -q '/plain\"' plain.trace && ! grep -q 'plain\.debug' plain.trace" ||
		{ diag plain.err; diag plain.out; diag plain.trace; }
else
	skip "a program not built for meter: debug file unread" "no strace, objcopy or compiler"
fi

# a patched program with a function and another whose symbol is a GCC
# clone's of it (selftests/host/tools_clone.c, as C and as C++): the
# clone's samples stay its own, never moved to spin as a callee that was
# never called
for lang in c cxx; do
	prog=$ROOT/build/selftests/tools_clone$([ $lang = cxx ] && echo _cxx)
	"$RUN" --backend "$BACKEND" --patch -f json -o clone.$lang.json -- \
		"$prog" $([ "$BACKEND" = kernel ] && echo short) \
		> /dev/null 2> clone.$lang.err
	"$STAT" -i clone.$lang.json --whole-names -f folded > clone.$lang.out 2>&1
	copy=$(awk -F' ' '{ n = $NF; $NF = "" }
		$0 ~ /^main;spin[^;]*constprop\.0[^;]* $/ { print n }' clone.$lang.out)
	check "a patched clone ($lang) keeps its samples (${copy:-none}), none moved to spin under it" \
		bash -c "test -n '$copy' && test '$copy' -gt 10 &&
			 ! grep -q 'constprop\.0[^;]*;spin' clone.$lang.out" ||
		{ diag clone.$lang.err; diag clone.$lang.out; }
done

echo "# $fails failed"
[ "$fails" -eq 0 ]
