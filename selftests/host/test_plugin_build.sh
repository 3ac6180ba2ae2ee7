#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The GCC plugin at build time and on what it builds: the leaf rule
# (flat when no call can reach instrumented code), flat=all|none, the tiny
# rule (a few statements, no loop, no recursion: left alone; tiny=N),
# exclude-file, a clear error for a bad argument, names from the records
# (a stripped binary keeps them), C++ templates and methods named as
# -finstrument-functions' build names them with the same counts, -O0, a
# translation unit that also uses METER_FUNCTION() by hand, and frames
# left by longjmp into a host built without the plugin.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
PLUGIN=$ROOT/build/plugin/meter.so
CC=${CC:-gcc}
CXX=${CXX:-g++}
. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_plugin_build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
LINK=(-I"$ROOT/include" -L"$ROOT/build/lib" -Wl,-rpath,"$ROOT/build/lib" -lmeter)
CORNERS=$ROOT/selftests/host/lib_plugin_corners.c
# tiny functions instrumented too (the tiny rule has its own section):
# these checks compare counts and code with the other modes
ALL=-fplugin-arg-meter-tiny=0

# name -> calls, from a profile's flat rows ("%time cum self calls ... name")
calls_table() { # json
	"$STAT" -i "$1" -f flat --whole-names 2> /dev/null | flat_rows /dev/stdin |
		awk 'NF >= 7 { name = $7; for (i = 8; i <= NF; i++) name = name " " $i;
			       print $4 "\t" name }' | sort -t "$(printf '\t')" -k2
}
# the functions a profile reports flat, sorted, on one line
flat_names() { # json
	python3 -c 'import json, sys
print(" ".join(sorted(f["name"] for f in json.load(open(sys.argv[1]))["functions"] if f.get("flat"))))' "$1"
}
run_off() { # binary json [args]
	local b=$1 j=$2; shift 2
	METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=$j "$b" "$@" > /dev/null
}

# --- the leaf rule ---------------------------------------------------------
"$CC" -O2 -c -fplugin="$PLUGIN" $ALL -fplugin-arg-meter-verbose -I"$ROOT/include" \
	"$CORNERS" -o "$tmp/c.o" 2> "$tmp/verbose"
mode_of() { sed -n "s/.*meter: ‘$1’ \([a-z]*\).*/\1/p; s/.*meter: '$1' \([a-z]*\).*/\1/p" "$tmp/verbose"; }
check "leaf rule: leaf_flat (no calls) and dso-free vsum are flat" \
	test "$(mode_of leaf_flat)/$(mode_of vsum)" = flat/flat
check "leaf rule: tail_a, twice (they call functions) and bail (calls longjmp) are stacked" \
	test "$(mode_of tail_a)/$(mode_of twice)/$(mode_of bail)" = stacked/stacked/stacked
check "no_instrument_function: untouched is not instrumented" \
	test -z "$(mode_of untouched)"
"$CC" -O2 -c -fplugin="$PLUGIN" $ALL -fplugin-arg-meter-verbose -fplugin-arg-meter-flat=none \
	-I"$ROOT/include" "$CORNERS" -o "$tmp/c.o" 2> "$tmp/verbose"
check "flat=none: leaf_flat stacked" test "$(mode_of leaf_flat)" = stacked
"$CC" -O2 -c -fplugin="$PLUGIN" $ALL -fplugin-arg-meter-verbose -fplugin-arg-meter-flat=all \
	-I"$ROOT/include" "$CORNERS" -o "$tmp/c.o" 2> "$tmp/verbose"
check "flat=all: tail_a flat" test "$(mode_of tail_a)" = flat
check "extern inline: stdlib.h's atoi (libc's function) is not instrumented" \
	test -z "$(mode_of atoi)"
"$CC" -O2 -c -fplugin="$PLUGIN" $ALL -fplugin-arg-meter-exclude-file=plugin_corners \
	-fplugin-arg-meter-verbose -I"$ROOT/include" "$CORNERS" -o "$tmp/c.o" 2> "$tmp/verbose"
check "exclude-file=plugin_corners: nothing instrumented" \
	test "$(grep -c 'meter: ' "$tmp/verbose")" = 0
"$CC" -O2 -c -fplugin="$PLUGIN" $ALL -I"$ROOT/include" "$CORNERS" -o "$tmp/c.o"
size=$(objdump -h "$tmp/c.o" | awk '$2 == "meter_records" { print $3 }')
check "one 32-byte record per instrumented function (12, got $((0x${size:-0} / 32)))" \
	test $((0x${size:-0} / 32)) = 12

if "$CC" -c -fplugin="$PLUGIN" $ALL -fplugin-arg-meter-flat=some "$CORNERS" \
	-I"$ROOT/include" -o "$tmp/c.o" 2> "$tmp/err"; then
	nok "a bad plugin argument fails the build"
else
	check "a bad plugin argument fails the build with a clear error" \
		grep -q "flat takes auto, all or none" "$tmp/err"
fi
"$CC" -c -fplugin="$PLUGIN" $ALL -fplugin-arg-meter-nosuch=1 "$CORNERS" \
	-I"$ROOT/include" -o "$tmp/c.o" 2> "$tmp/err"
check "an unknown plugin argument is named in the error" grep -q "unknown argument.*nosuch" "$tmp/err"

# --- the tiny rule -----------------------------------------------------------
cat > "$tmp/tiny.c" <<'SRC'
int get(const int *p) { return p[1]; }
int add3(int a, int b, int c) { return a + b + c; }
int sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
int fact(int n) { return n < 2 ? 1 : n * fact(n - 1); }
int wide(int a, int b)
{
	int c = a * b, d = a - b, e = c ^ d, f = e + a, g = f * 3, h = g - c;

	return h + d + e + f + g;
}
int main(void) { return 0; }
SRC
tiny_build() { "$CC" -O2 -c -fplugin="$PLUGIN" -fplugin-arg-meter-verbose "$@" \
	"$tmp/tiny.c" -o "$tmp/t.o" 2> "$tmp/verbose"; }
tiny_build
check "tiny rule: get and add3 (a few statements) are left alone" \
	test "$(mode_of get)/$(mode_of add3)" = tiny/tiny
check "tiny rule: a loop (sum), recursion (fact), more statements (wide) and main are instrumented" \
	test "$(mode_of sum)/$(mode_of fact)/$(mode_of wide)/$(mode_of main)" = flat/stacked/flat/flat
tiny_build -fplugin-arg-meter-tiny=0
check "tiny=0: every function instrumented" \
	test "$(mode_of get)/$(mode_of add3)/$(mode_of wide)" = flat/flat/flat
tiny_build -fplugin-arg-meter-tiny=40
check "tiny=40: wide is left alone too" test "$(mode_of wide)" = tiny
if tiny_build -fplugin-arg-meter-tiny=many; then
	nok "tiny=many fails the build"
else
	check "tiny=many fails the build with a clear error" \
		grep -q "tiny takes a number of statements" "$tmp/verbose"
fi

# --- frames left by longjmp into code the plugin did not build --------------
# protect() calls setjmp and is built without the plugin (or with
# -finstrument-functions); cb(), built with it, recurses three levels and
# longjmps back.  libmeter's longjmp takes the four frames it leaves off,
# so each landing's outermost cb sees main and itself only (and protect,
# when it is built with -finstrument-functions), and main's end main
# alone.  With the C library's longjmp (landings libc) they are taken off
# at the next entry (the stale-frame test), or by protect's exit hook;
# with a plain host the last landing's four are still there at main's
# end, with no entry after them.  1000 landings must not pile up 4000
# frames.
cat > "$tmp/protect.c" <<'SRC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
static jmp_buf jb;
void (*jump)(struct __jmp_buf_tag *, int) = longjmp;
void protect(void (*cb)(int))
{
	if (!setjmp(jb))
		cb(3);
}
void bail(void)
{
	jump(jb, 1);
}
/* the C library's longjmp, which libmeter's stands in front of */
int use_libc_longjmp(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	jump = libc ? (void (*)(struct __jmp_buf_tag *, int))
	       dlsym(libc, "longjmp") : 0;
	return jump && jump != longjmp ? 0 : -1;
}
SRC
cat > "$tmp/landings.c" <<'SRC'
#include <stdio.h>
#include <meter.h>
void protect(void (*cb)(int));
void bail(void);
int use_libc_longjmp(void);
static unsigned deepest;
__attribute__((no_instrument_function)) static unsigned depth_now(void)
{
	const struct meter__page_hdr *pg =
		(const struct meter__page_hdr *)meter__tls.page;

	return pg ? pg->depth : 0;
}
__attribute__((noinline)) static void cb(int k)
{
	if (k == 3 && depth_now() > deepest)
		deepest = depth_now();
	if (k > 0)
		cb(k - 1);
	else
		bail();
}
int main(int argc, char **argv)
{
	if (argc > 1 && use_libc_longjmp())
		return 1;
	for (int i = 0; i < 1000; i++)
		protect(cb);
	printf("deepest=%u end=%u\n", deepest, depth_now());
	return 0;
}
SRC
for host in plain -finstrument-functions; do
	hflag= want='deepest=2 end=1' want_libc='deepest=2 end=5'
	[ $host = plain ] ||
		{ hflag=$host; want='deepest=3 end=1' want_libc=$want; }
	if "$CC" -O2 $hflag -c "$tmp/protect.c" -o "$tmp/protect.o" &&
	   "$CC" -O2 -fplugin="$PLUGIN" $ALL "$tmp/landings.c" "$tmp/protect.o" \
		-o "$tmp/landings" "${LINK[@]}" 2> "$tmp/landings.err"; then
		METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null \
			"$tmp/landings" > "$tmp/landings.out" 2>&1
		check "longjmp into a host built $host, 1000 times: libmeter's longjmp takes the frames it left off ($(cat "$tmp/landings.out"))" \
			grep -qx "$want" "$tmp/landings.out"
		METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=/dev/null \
			"$tmp/landings" libc > "$tmp/landings.out" 2>&1
		check "the C library's longjmp into a host built $host, 1000 times: the next entry takes the frames it left off ($(cat "$tmp/landings.out"))" \
			grep -qx "$want_libc" "$tmp/landings.out"
	else
		nok "longjmp into a host built $host: the program builds"
		diag "$tmp/landings.err"
	fi
done

# --- names from the records, not from the ELF symbols -------------------------
cat > "$tmp/names.c" <<'SRC'
static volatile int sink;
__attribute__((noinline)) static void hidden_static(int i) { sink += i; }
__attribute__((noinline)) void visible(int i) { hidden_static(i); }
int main(void) { for (int i = 0; i < 77; i++) visible(i); return 0; }
SRC
"$CC" -O2 -fplugin="$PLUGIN" $ALL "$tmp/names.c" -o "$tmp/names" "${LINK[@]}" &&
	strip --strip-all "$tmp/names" && run_off "$tmp/names" "$tmp/names.json"
calls_table "$tmp/names.json" > "$tmp/names.tab"
check "stripped binary: hidden_static and visible keep their names and counts (77)" \
	bash -c "grep -qP '^77\thidden_static$' '$tmp/names.tab' && grep -qP '^77\tvisible$' '$tmp/names.tab'"

# --- -O0, and a unit that also uses METER_FUNCTION() by hand ------------------
cat > "$tmp/mixed.c" <<'SRC'
#include <meter.h>
static volatile int sink;
__attribute__((noinline)) static void by_hand(void) { METER_FUNCTION(); sink++; }
__attribute__((noinline)) static void by_plugin(void) { by_hand(); }
int main(void) { for (int i = 0; i < 50; i++) by_plugin(); return 0; }
SRC
for o in -O0 -O2; do
	"$CC" $o -fplugin="$PLUGIN" $ALL "$tmp/mixed.c" -o "$tmp/mixed" "${LINK[@]}" &&
		run_off "$tmp/mixed" "$tmp/mixed.json"
	calls_table "$tmp/mixed.json" > "$tmp/mixed.tab"
	check "$o, METER_FUNCTION() beside the plugin: by_hand counted once per call (50), by_plugin 50, main 1" \
		bash -c "grep -qP '^50\tby_hand$' '$tmp/mixed.tab' && grep -qP '^50\tby_plugin$' '$tmp/mixed.tab' && grep -qP '^1\tmain$' '$tmp/mixed.tab'"
done

# A body each mode built, inlined into the other's: each must read the
# current the other stored (the plugin stores the page's words in an alias
# set of its own; both load them in alias set 0).  Reading a stale word,
# the inner body restored it at its return, and the outer function's time
# went to its caller (main 100 %, the function 0).
cat > "$tmp/nested.c" <<'SRC'
#include <time.h>
#include <meter.h>
volatile unsigned long sink;
__attribute__((no_instrument_function)) static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
#ifdef PLUGIN_INSIDE
/* the plugin's (a leaf: flat), inlined into the macro's */
static inline void inner(int n) { for (int k = 0; k < n; k++) sink += k; }
#define OUTER_ENTRY() METER_FUNCTION_FLAT()
#else
/* the macro's, inlined into the plugin's */
static inline __attribute__((always_inline)) void inner(int n)
{
	METER_FUNCTION_FLAT();
	sink += n;
}
#define OUTER_ENTRY() do { } while (0)
#endif
__attribute__((noinline)) void outer(double s)
{
	OUTER_ENTRY();
	inner(10);
	double end = cpu_s() + s;

	while (cpu_s() < end)
		sink++;
}
int main(void) { outer(0.3); return 0; }
SRC
self_pct() { # json name: its self samples, % of all
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
s = sum(f["self_samples"] for f in p["functions"]) or 1
print(round(100 * sum(f["self_samples"] for f in p["functions"] if f["name"] == sys.argv[2]) / s))' "$@"
}
for way in PLUGIN_INSIDE MACRO_INSIDE; do
	"$CC" -O2 -D$way -fplugin="$PLUGIN" "$tmp/nested.c" -o "$tmp/nested" \
		"${LINK[@]}" && METER_BACKEND=signal METER_QUIET=1 \
		METER_OUTPUT="$tmp/nested.json" "$tmp/nested"
	pct=$(self_pct "$tmp/nested.json" outer)
	check "$way: the outer function keeps its time ($pct % self)" \
		test "${pct:-0}" -ge 90
done

# --- C++: templates, methods, a namespace; as -finstrument-functions names them
cat > "$tmp/tmpl.cc" <<'SRC'
#include <cstdlib>
#include <stdexcept>
namespace shapes {
template <typename T> struct box {
	T v;
	__attribute__((noinline)) T grow(T by) { v += by; return v; }
};
template <typename T> __attribute__((noinline)) T total(box<T> &b, int n)
{
	T s = 0;
	for (int i = 0; i < n; i++)
		s += b.grow(1);
	return s;
}
}
__attribute__((noinline)) static int seventh(int i)
{
	if (i % 7 == 0)
		throw std::runtime_error("seven");
	return i;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 10, s = 0;
	shapes::box<int> bi{0};
	shapes::box<double> bd{0};
	auto twice = [](int x) __attribute__((noinline)) { return 2 * x; };
	struct local {
		__attribute__((noinline)) static int bump(int x) { return x + 1; }
	};
	for (int i = 0; i < n; i++) {
		s += twice(i) + local::bump(i);
		try {
			s += seventh(i);
		} catch (const std::exception &) {
			s++;
		}
	}
	return (int)(shapes::total(bi, n) + shapes::total(bd, 2 * n) + s) & 1;
}
SRC
"$CXX" -O2 -fplugin="$PLUGIN" $ALL "$tmp/tmpl.cc" -o "$tmp/tmpl-plugin" "${LINK[@]}" &&
	run_off "$tmp/tmpl-plugin" "$tmp/tp.json" 40
"$CXX" -O2 -finstrument-functions "$tmp/tmpl.cc" -o "$tmp/tmpl-auto" "${LINK[@]}" &&
	run_off "$tmp/tmpl-auto" "$tmp/ta.json" 40
calls_table "$tmp/tp.json" | grep -v atoi > "$tmp/tp.tab"
calls_table "$tmp/ta.json" | grep -v atoi > "$tmp/ta.tab"
check "C++: the plugin's names and counts equal -finstrument-functions' ($(wc -l < "$tmp/tp.tab") functions)" \
	cmp -s "$tmp/tp.tab" "$tmp/ta.tab" || { diff "$tmp/ta.tab" "$tmp/tp.tab" | diag; }
check "C++: shapes::box<double>::grow(double) counted 80 times" \
	grep -qP '^80\tshapes::box<double>::grow\(double\)$' "$tmp/tp.tab"
check "C++: a lambda, a local class's member and a throwing function counted 40 times each" \
	bash -c "grep -qP '^40\tmain::\{lambda\(int\)#1\}::operator\(\)\(int\) const$' '$tmp/tp.tab' &&
		 grep -qP '^40\tmain::local::bump\(int\)$' '$tmp/tp.tab' &&
		 grep -qP '^40\tseventh\(int\)$' '$tmp/tp.tab'" || diag "$tmp/tp.tab"

# --- link-time optimisation ----------------------------------------------
# -flto inlines at the link, so the plugin goes to the link as well, where
# its pass after inlining (plugin/entry_forms.cc) runs; the constructor
# that registers the records is made as the first record is (made when
# the IPA passes began, it crashed cc1 under -flto).  PLUGIN_ONLY: the
# program without its body of the macro, whose entry needs no link to
# expand it (the slow-path share below is the plugin's marks')
LEAVES=$ROOT/selftests/host/lib_plugin_leaves.c
if "$CC" -O2 -flto -fplugin="$PLUGIN" -I"$ROOT/include" -DPLUGIN_ONLY -c "$LEAVES" \
	-o "$tmp/lto.o" 2> "$tmp/lto.err" &&
   "$CC" -O2 -flto -fplugin="$PLUGIN" -o "$tmp/lto" "$tmp/lto.o" "${LINK[@]}" \
	2>> "$tmp/lto.err"; then
	METER_BACKEND=off METER_QUIET=1 METER_OUTPUT="$tmp/lto.json" \
		"$tmp/lto" 10 10 > "$tmp/lto.out" 2>> "$tmp/lto.err"
	check "-flto: built and run; the bodies that became leaves at the link push nothing, the others one frame" \
		grep -q 'became_leaf=0 inlined_leaf=0 hosts_copy=1 keeps_call=1' "$tmp/lto.out" ||
		diag "$tmp/lto.out"
	calls_table "$tmp/lto.json" > "$tmp/lto.tab"
	check "-flto: the records registered, the counts exact (became_leaf 11, inlined_leaf 23: 22 and tiny_start's)" \
		bash -c "grep -qP '^11\tbecame_leaf\$' '$tmp/lto.tab' &&
			 grep -qP '^23\tinlined_leaf\$' '$tmp/lto.tab'" || diag "$tmp/lto.tab"
	check "-flto, one partition: the records whose bodies all became leaves at the link are flat, the others not" \
		test "$(flat_names "$tmp/lto.json")" = "became_leaf inlined_leaf"
else
	nok "-flto: the plugin builds the program"
	diag "$tmp/lto.err"
	nok "-flto: the records registered"
	nok "-flto: the records of leaves flat"
fi
# Without the plugin at the link nothing expands the entries' marks: each
# runs the slow path it holds (counted and pushed, exact), and the
# profile says every call took it.
if "$CC" -O2 -flto -o "$tmp/lto-nolink" "$tmp/lto.o" "${LINK[@]}" \
	2>> "$tmp/lto.err"; then
	METER_BACKEND=signal METER_QUIET=1 METER_OUTPUT="$tmp/lto-nolink.json" \
		"$tmp/lto-nolink" 10 10 > "$tmp/lto-nolink.out" 2>> "$tmp/lto.err"
	calls_table "$tmp/lto-nolink.json" > "$tmp/lto-nolink.tab"
	check "-flto without the plugin at the link: the counts exact, every call through the slow path" \
		bash -c "grep -qP '^11\tbecame_leaf\$' '$tmp/lto-nolink.tab' &&
			 grep -qP '^23\tinlined_leaf\$' '$tmp/lto-nolink.tab' &&
			 '$STAT' -i '$tmp/lto-nolink.json' -f flat 2>&1 |
			 grep -q '(100.00 % of calls)'" ||
		{ diag "$tmp/lto-nolink.tab"; diag "$tmp/lto.err"; }
else
	nok "-flto without the plugin at the link: built"
	diag "$tmp/lto.err"
fi

# where the records may be written before a clone's body is compiled
# (-fno-toplevel-reorder: in the order symbols were made), a body that
# became a leaf cannot vouch for the others: the records stay stacked,
# which --correct charges the stacked cost
"$CC" -O2 -fplugin="$PLUGIN" -I"$ROOT/include" "$LEAVES" -o "$tmp/ord" \
	"${LINK[@]}" 2> "$tmp/ord.err" && run_off "$tmp/ord" "$tmp/ord.json" 10 10
"$CC" -O2 -fno-toplevel-reorder -fplugin="$PLUGIN" -I"$ROOT/include" \
	"$LEAVES" -o "$tmp/noreorder" "${LINK[@]}" 2>> "$tmp/ord.err" &&
	run_off "$tmp/noreorder" "$tmp/noreorder.json" 10 10
check "records of the bodies that all became leaves: flat at -O2, stacked with -fno-toplevel-reorder" \
	test "$(flat_names "$tmp/ord.json")/$(flat_names "$tmp/noreorder.json")" = \
	     "became_leaf inlined_leaf/" || diag "$tmp/ord.err"

# --- an inlined copy costs its own instructions, not its host's -----------
# The page's words have an alias set of their own and the stores the
# sampler reads are volatile (no fence), and a copy in a function whose own
# entry comes first has no slow path (no call in the loop): the loop keeps
# the plain build's code, its invariant loads out of it, plus the copy's
# four instructions (load the word, make current, count, store the word
# back).  With fences, or a slow path in the loop, o's four fields are
# loaded again on every turn (eleven more).  Built with -g, the copy is
# counted only (its time is told by address): its record's id and the
# count's address leave the loop too, and the count alone is left in it.
cat > "$tmp/loop.c" <<'SRC'
struct opt { unsigned *lit; unsigned lsum; unsigned *ml; unsigned msum; };

static unsigned weight(unsigned x) { return x * 256 / (x + 1); }

/* an inlined copy in a loop, which the plain build keeps free of the
 * loop's invariant loads (o's fields) */
static unsigned price(const struct opt *o, unsigned k)
{
	unsigned p = o->lsum - weight(o->lit[k & 63]);

	return p + o->msum - weight(o->ml[k & 31]);
}

unsigned loop(const struct opt *o, unsigned n)
{
	unsigned s = 0;

	for (unsigned i = 0; i < n; i++)
		s += price(o, i);
	return s;
}
SRC
loop_body() { # object: the instructions of loop()'s loop, the one that divides
	python3 - "$1" <<'PY'
import re, subprocess, sys
out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", sys.argv[1]],
                     capture_output=True, text=True).stdout
addrs, mn, best, on = [], [], 0, False
for line in out.splitlines():
    if line.endswith("<loop>:"):
        on = True
        continue
    if on and not line.strip():
        break
    m = re.match(r"\s+([0-9a-f]+):\s+(\S+)(.*)", line)
    if not on or not m:
        continue
    addrs.append(int(m.group(1), 16))
    mn.append(m.group(2))
    j = re.search(r"\s([0-9a-f]+) <loop\+", m.group(3))
    if m.group(2).startswith("j") and j and int(j.group(1), 16) < addrs[-1]:
        body = [k for a, k in zip(addrs, mn) if a >= int(j.group(1), 16)]
        if "div" in body and (not best or len(body) < best):
            best = len(body)
print(best)
PY
}
"$CC" -O2 -c "$tmp/loop.c" -o "$tmp/loop-plain.o"
"$CC" -O2 -c -fplugin="$PLUGIN" -fplugin-arg-meter-verbose -I"$ROOT/include" \
	"$tmp/loop.c" -o "$tmp/loop-plugin.o" 2> "$tmp/loop.err"
plain_n=$(loop_body "$tmp/loop-plain.o")
plugin_n=$(loop_body "$tmp/loop-plugin.o")
check "an inlined copy in a loop adds its 4 instructions to it, no more (plain $plain_n, plugin $plugin_n)" \
	test "$plain_n" -gt 0 -a "$plugin_n" -le $((plain_n + 4)) -a \
	     "$plugin_n" -gt "$plain_n" || diag "$tmp/loop.err"
check "that copy is flat once inlining is done" \
	grep -q "‘price’ flat once inlining is done (an inlined copy)" "$tmp/loop.err"
"$CC" -O2 -g -c -fplugin="$PLUGIN" -fplugin-arg-meter-verbose -I"$ROOT/include" \
	"$tmp/loop.c" -o "$tmp/loop-counted.o" 2> "$tmp/loop-g.err"
counted_n=$(loop_body "$tmp/loop-counted.o")
check "with -g, counted only: the copy adds at most 2 instructions to the loop, fewer than flat (plain $plain_n, flat $plugin_n, counted $counted_n)" \
	test "$plain_n" -gt 0 -a "$counted_n" -le $((plain_n + 2)) -a \
	     "$counted_n" -lt "$plugin_n" || diag "$tmp/loop-g.err"
check "with -g, the verbose note says it is counted only" \
	grep -q "‘price’ flat once inlining is done (an inlined copy, counted only: its time by address)" \
	"$tmp/loop-g.err"

# The inliner weighs an entry as its mark, one statement: a function the
# plain build inlines is inlined in the plugin's build too.  Whole, the
# stacked sequence weighed about 70, and common() (51) stayed a call.
cat > "$tmp/inl.c" <<'SRC'
void note_empty(void);
/* a function of about 50 in GCC's estimate, declared inline: the plain
 * build inlines it into each caller */
static inline unsigned long common(const unsigned char *a, const unsigned char *b,
				   const unsigned char *end)
{
	const unsigned char *start = a;

	if (a == end)
		note_empty();

	if (a + 8 <= end) {
		unsigned long x = *(const unsigned long *)a ^ *(const unsigned long *)b;

		if (x)
			return (unsigned long)__builtin_ctzl(x) >> 3;
		a += 8;
		b += 8;
	}
	while (a + 8 <= end) {
		unsigned long x = *(const unsigned long *)a ^ *(const unsigned long *)b;

		if (x)
			return (unsigned long)(a - start) + ((unsigned long)__builtin_ctzl(x) >> 3);
		a += 8;
		b += 8;
	}
	if (a + 4 <= end && *(const unsigned *)a == *(const unsigned *)b) {
		a += 4;
		b += 4;
	}
	if (a + 2 <= end && *(const unsigned short *)a == *(const unsigned short *)b) {
		a += 2;
		b += 2;
	}
	if (a < end && *a == *b)
		a++;
	return (unsigned long)(a - start);
}

unsigned long use1(const unsigned char *a, const unsigned char *b, unsigned n)
{
	unsigned long s = 0;

	for (unsigned i = 0; i < n; i++)
		s += common(a + i, b, a + n);
	return s;
}

unsigned long use2(const unsigned char *a, const unsigned char *b, unsigned n)
{
	return common(a + 1, b, a + n) * 3;
}

unsigned long use3(const unsigned char *a, unsigned n)
{
	return common(a, a + 8, a + n) ^ 5;
}
SRC
"$CC" -O2 -c "$tmp/inl.c" -o "$tmp/inl-plain.o"
"$CC" -O2 -c -fplugin="$PLUGIN" -I"$ROOT/include" "$tmp/inl.c" -o "$tmp/inl-plugin.o"
out_of_line() { nm "$1" | grep -c ' t common$'; }
check "a function the plain build inlines everywhere is inlined by the plugin's build too (out of line: plain $(out_of_line "$tmp/inl-plain.o"), plugin $(out_of_line "$tmp/inl-plugin.o"))" \
	test "$(out_of_line "$tmp/inl-plain.o")/$(out_of_line "$tmp/inl-plugin.o")" = 0/0

# --- one sequence: the plugin's code is the macro's ------------------------
# The same function instrumented by METER_FUNCTION() (or _FLAT) and by the
# plugin: the instructions from entry to the first return, mnemonics only
# (register choice is the allocator's, and so is a move from one register
# to another: the macro's build moves the argument out of %rdi), must be
# the same list, but for the return address the macro's push keeps in
# sites[] (its load and its store), which only a function resumed
# abnormally or holding an entry that reads it keeps in the plugin's.
cat > "$tmp/seq.c" <<'SRC'
#ifdef BY_MACRO
#include <meter.h>
#define ENTER() METER_FUNCTION()
#else
#define ENTER() do { } while (0)
#endif
volatile unsigned long sink;
void elsewhere(void);
__attribute__((noinline)) void seq_callee(unsigned long i)
{
	ENTER();
	sink += i;
#ifdef CALLS_OUT
	if (i == 12345)
		elsewhere();
#endif
}
SRC
# (the thread pointer's load aside: where it goes is the scheduler's, and
# fs_loads counts it)
# the store into sites[d] (METER__BLOCK_SITES + 8 from &pg[d * 8]) and the
# load of the return address it stores
SITE_STORE=", $(( $(printf '#include <meter.h>\nMETER__BLOCK_SITES + 8\n' |
	"$CC" -E -P -I"$ROOT/include" -I"$ROOT/include/uapi" - | tail -n 1) ))("
mnemonics() { # asm file [nosite] -> seq_callee's mnemonics up to its first ret
	awk -v nosite="${2:-}" -v store="$SITE_STORE" '
	     /^seq_callee:/ { on = 1; next }
	     on && /^[ \t]*(#|\.|$)/ { next }
	     on && /^[^ \t]/ { next }
	     on && $1 ~ /^mov/ && $2 ~ /^%[a-z0-9]+,$/ && $3 ~ /^%[a-z0-9]+$/ { next }
	     on && /%fs:/ { next }
	     on { n++; op[n] = $1; src[n] = $2; dst[n] = $3; if ($1 == "ret") exit }
	     END {
		if (nosite)
			for (i = 1; i <= n; i++)
				if (index(src[i] " " dst[i], store)) {
					reg = src[i]; sub(/,$/, "", reg)
					for (j = i - 1; j > 0; j--)
						if (src[j] ~ /\(%rsp\),$/ && dst[j] == reg)
							break
					if (j > 0) { drop[i] = 1; drop[j] = 1; dropped = 2 }
				}
		for (i = 1; i <= n; i++)
			if (!drop[i])
				print op[i]
		if (nosite && dropped != 2)
			print "(no site store found)"
	     }' "$1"
}
fs_loads() { # asm file -> seq_callee's loads from %fs up to its first ret
	awk '/^seq_callee:/ { on = 1; next }
	     on && /%fs:/ { n++ }
	     on && $1 == "ret" { exit }
	     END { print n + 0 }' "$1"
}
# gated: the default rules on a body that still calls out once inlining
# is done, whose push plugin/entry_forms.cc keeps
for form in stacked flat gated; do
	case $form in
	flat) mflag=-DMETER_FLAT; pflag=all ;;
	stacked) mflag=; pflag=none ;;
	gated) mflag=-DCALLS_OUT; pflag="auto -DCALLS_OUT" ;;
	esac
	"$CC" -O2 -S -DBY_MACRO $mflag -I"$ROOT/include" -I"$ROOT/include/uapi" \
		"$tmp/seq.c" -o "$tmp/seq-macro.s"
	"$CC" -O2 -S -fplugin="$PLUGIN" $ALL -fplugin-arg-meter-flat=$pflag \
		"$tmp/seq.c" -o "$tmp/seq-plugin.s"
	nosite=1
	[ $form != flat ] || nosite=
	mnemonics "$tmp/seq-macro.s" $nosite > "$tmp/seq-macro.txt"
	mnemonics "$tmp/seq-plugin.s" > "$tmp/seq-plugin.txt"
	if [ $form = gated ]; then
		# the gate's folded branches leave the scheduler another order
		sort -o "$tmp/seq-macro.txt" "$tmp/seq-macro.txt"
		sort -o "$tmp/seq-plugin.txt" "$tmp/seq-plugin.txt"
	fi
	check "$form: the plugin's instructions are the macro's ($(wc -l < "$tmp/seq-plugin.txt") to the return, and $(fs_loads "$tmp/seq-plugin.s") thread-pointer load)" \
		eval 'cmp -s "$tmp/seq-macro.txt" "$tmp/seq-plugin.txt" &&
		      [ "$(fs_loads "$tmp/seq-macro.s")" = 1 ] &&
		      [ "$(fs_loads "$tmp/seq-plugin.s")" = 1 ]' ||
		{ diff "$tmp/seq-macro.txt" "$tmp/seq-plugin.txt" | diag; }
done

# ---- lines of its own: what meter adds is on "<meter>" in the line table
# (1: entries, 2: returns), the program's instructions on its own lines
cat > "$tmp/lines.c" <<'SRC'
volatile unsigned long sink;
__attribute__((noinline)) void lines_leaf(unsigned long i)
{
	sink += i;
}
__attribute__((noinline)) unsigned long lines_work(unsigned long n)
{
	unsigned long i, s = 0, unused_here;

	for (i = 0; i < n; i++) {
		lines_leaf(i);
		s += sink;
	}
	return s;
}
int main(void)
{
	return lines_work(100) == 0;
}
SRC
"$CC" -O2 -g -Wall -fplugin="$PLUGIN" $ALL -o "$tmp/lines" "$tmp/lines.c" \
	"${LINK[@]}" 2> "$tmp/lines.err"
"$CC" -O2 -g -o "$tmp/lines-plain" "$tmp/lines.c"
by_line() { # binary function -> "FILE:LINE MNEMONIC" per instruction
	objdump -d -l --no-show-raw-insn "$1" |
		awk -v f="<$2>:" '$2 == f { on = 1; next }
			on && /^$/ { exit }
			on && /^[^ \t].*:[0-9]+/ { sub(/ .*/, ""); n = split($0, p, "/"); at = p[n]; next }
			on && /^ +[0-9a-f]+:/ { print at, $2 }'
}
by_line "$tmp/lines" lines_leaf > "$tmp/lines_leaf.txt"
by_line "$tmp/lines" lines_work > "$tmp/lines_work.txt"
check "lines: the build runs (exit 0)" "$tmp/lines"
check "lines: the thread's page (%fs) and the count are on <meter>:1 in both functions" \
	test "$(grep -c '^<meter>:1 ' "$tmp/lines_leaf.txt")" -ge 5 -a \
	"$(grep -c '^<meter>:1 ' "$tmp/lines_work.txt")" -ge 10
check "lines: no %fs load or count off <meter>:1" \
	test -z "$(objdump -d -l --no-show-raw-insn "$tmp/lines" | awk '/^[^ \t].*:[0-9]+/ { at = $0 } /%fs:|addq +\$0x1,0x5000/ { print at }' | grep -v '<meter>:1$')"
check "lines: each function's return store is on <meter>:2 (one instruction each)" \
	test "$(grep -c '^<meter>:2 ' "$tmp/lines_leaf.txt")" = 1 -a \
	"$(grep -c '^<meter>:2 ' "$tmp/lines_work.txt")" = 1
# the leaf's own instructions, where its source lines say, are the plain
# build's: nothing of meter's on them
by_line "$tmp/lines-plain" lines_leaf | grep -v '^<meter>' | awk '{ print $2 }' > "$tmp/leaf-plain.txt"
grep -v '^<meter>' "$tmp/lines_leaf.txt" | awk '$2 != "nopw" && $2 != "nopl" && $2 != "data16" { print $2 }' > "$tmp/leaf-own.txt"
sed -i '/^nop/d; /^data16/d' "$tmp/leaf-plain.txt"
check "lines: lines_leaf's instructions on its own lines are the plain build's ($(tr '\n' ' ' < "$tmp/leaf-plain.txt"))" \
	cmp -s "$tmp/leaf-plain.txt" "$tmp/leaf-own.txt" ||
	{ diff "$tmp/leaf-plain.txt" "$tmp/leaf-own.txt" | diag; }
check "lines: lines_work's loop is on lines.c (lines 10 to 12)" \
	test "$(grep -c '^lines.c:1[012] ' "$tmp/lines_work.txt")" -ge 5
check "lines: a warning still names the source file itself, not one included from <meter>" \
	eval 'grep -q "lines.c:8:.*unused_here" "$tmp/lines.err" && ! grep -q "included from <meter>" "$tmp/lines.err"'
"$CC" -O2 -g -flto -fplugin="$PLUGIN" $ALL -o "$tmp/lines-lto" "$tmp/lines.c" "${LINK[@]}"
by_line "$tmp/lines-lto" lines_leaf > "$tmp/lines_lto.txt"
check "lines: under -flto too (the leaf's count on <meter>:1, its body on lines.c:4)" \
	eval 'grep -q "^<meter>:1 addq" "$tmp/lines_lto.txt" && grep -q "^lines.c:4 " "$tmp/lines_lto.txt"'

# a function without an entry of its own (no_instrument_function here)
# reads the page of its counted copies once at its start: on <meter>:1
cat > "$tmp/lines-host.c" <<'SRC'
volatile unsigned long sink;
static inline __attribute__((always_inline)) void lines_copy(unsigned long n)
{
	for (unsigned long k = 0; k < n; k++)
		sink += k;
}
__attribute__((noinline, no_instrument_function)) void lines_host(unsigned long n)
{
	lines_copy(n);
}
int main(void)
{
	lines_host(3);
	return sink != 3;
}
SRC
"$CC" -O2 -g -fplugin="$PLUGIN" -o "$tmp/lines-host" "$tmp/lines-host.c" \
	"${LINK[@]}" 2> "$tmp/lines-host.err"
by_line "$tmp/lines-host" lines_host > "$tmp/lines_host.txt"
host_meter=$(grep -c '^<meter>:1 ' "$tmp/lines_host.txt")
host_off=$(objdump -d -l --no-show-raw-insn "$tmp/lines-host" |
	awk '/^[^ \t].*:[0-9]+/ { at = $0 } /%fs:|addq +\$0x1,0x5000/ { print at }' |
	grep -v '<meter>:1$')
check "lines: a function without an entry reads its counted copy's page and counts on <meter>:1 ($host_meter instructions), nothing off it, and runs" \
	eval '"$tmp/lines-host" && test "$host_meter" -ge 4 -a -z "$host_off"' ||
	{ diag "$tmp/lines_host.txt"; diag "$tmp/lines-host.err"; }

# a precompiled header read while parsing replaces the line table: one
# built without the plugin must not move meter's lines into a header
mkdir -p "$tmp/pch"
printf 'extern volatile unsigned long sink;\nstatic inline unsigned long twice(unsigned long x) { return 2 * x; }\n' > "$tmp/pch/pch.h"
printf '#include "pch.h"\nvolatile unsigned long sink;\n__attribute__((noinline)) void lines_leaf(unsigned long i)\n{\n\tsink += twice(i);\n}\nint main(void) { lines_leaf(3); return sink != 6; }\n' > "$tmp/pch/main.c"
"$CC" -O2 -g -x c-header "$tmp/pch/pch.h" -o "$tmp/pch/pch.h.gch"
"$CC" -O2 -g -Winvalid-pch -fplugin="$PLUGIN" $ALL -o "$tmp/pch/main" "$tmp/pch/main.c" "${LINK[@]}"
by_line "$tmp/pch/main" lines_leaf > "$tmp/lines_pch.txt"
check "lines: with a precompiled header built without the plugin (the count on <meter>:1, the body on main.c:5)" \
	eval '"$tmp/pch/main" && grep -q "^<meter>:1 addq" "$tmp/lines_pch.txt" && grep -q "^main.c:5 " "$tmp/lines_pch.txt"' ||
	diag "$tmp/lines_pch.txt"

# none at -O0 (a breakpoint on a function would stop on <meter>:1, a file
# that does not exist) or under --coverage (gcov would list it); and -H,
# which lists the headers read, does not name it
"$CC" -O0 -g -fplugin="$PLUGIN" $ALL -c -o "$tmp/lines-O0.o" "$tmp/lines.c"
"$CC" -O2 -g --coverage -fplugin="$PLUGIN" $ALL -c -o "$tmp/lines-cov.o" "$tmp/lines.c"
"$CC" -O2 -H -fplugin="$PLUGIN" $ALL -c -o "$tmp/lines-H.o" "$tmp/lines.c" 2> "$tmp/lines-H.txt"
check "lines: none of meter's at -O0 or under --coverage, and -H does not list <meter>" \
	eval '! objdump --dwarf=decodedline "$tmp/lines-O0.o" "$tmp/lines-cov.o" | grep -q "<meter>" &&
	      ! grep -q "<meter>" "$tmp/lines-H.txt"'
echo "1..$n"
[ $fails = 0 ]
