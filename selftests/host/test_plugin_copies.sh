#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What the plugin's entries, inlined copies and leaves cost, and that they
# still count: an executable reads the thread's page at a fixed offset from
# the thread pointer (its own meter__tls, which libmeter's references
# reach), a shared object through its GOT; a copy of a leaf (by the leaf
# rule) in a function whose own entry comes first has no slow path and
# takes its host's page, rather than loading meter__tls again; a function
# whose only calls are to the C library's leaves (strcoll, strtol, errno)
# is flat, one that hands libc a callback (qsort) is not, nor one that
# calls a function of a libc name the program declared itself.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
PLUGIN=$ROOT/build/plugin/meter.so
CC=${CC:-gcc}
CXX=${CXX:-g++}
. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_plugin_copies.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
LINK=(-L"$ROOT/build/lib" -Wl,-rpath,"$ROOT/build/lib" -lmeter)
# every function instrumented, the small ones too
PFLAGS=(-O2 -fplugin="$PLUGIN" -fplugin-arg-meter-tiny=0 -fplugin-arg-meter-verbose)

# host(), stacked (it calls away), with two inlined copies of mix, a leaf
cat > "$tmp/host.h" <<'SRC'
volatile unsigned long sink;

static inline unsigned mix(unsigned x)
{
	for (unsigned k = 0; k < 3; k++)
		x = x * 2654435761u ^ (x >> 7);
	return x;
}

/* a loop: not tiny, so instrumented under the default rules too */
__attribute__((noinline)) void away(unsigned s)
{
	for (int k = 0; k < 2; k++)
		sink += s;
}

__attribute__((noinline)) unsigned host(unsigned n)
{
	unsigned s = 0;

	for (unsigned i = 0; i < n; i++)
		s += mix(i) + mix(s);
	away(s);
	return s;
}
SRC
cat > "$tmp/copies.c" <<'SRC'
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

/* the C library's leaves only */
__attribute__((noinline)) long collate(const char *a, const char *b)
{
	errno = 0;
	return strcoll(a, b) + strtol(a, NULL, 10) + errno;
}

static int by_value(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* libc calls back into the program */
__attribute__((noinline)) void sorts(int *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_value);
}

long own_strcoll_user(const char *a);

int main(int argc, char **argv)
{
	int v[] = { 3, 1, 2 };
	unsigned s = 0;
	long c = 0;
	int n = argc > 1 ? atoi(argv[1]) : 10;

	for (int i = 0; i < n; i++) {
		s += host(7);
		c += collate("12", "13");
	}
	sorts(v, 3);
	c += own_strcoll_user("x");
	printf("%u %ld %d\n", s, c, v[0]);
	return 0;
}
SRC
# a function named as libc's, declared by the program, not by libc's header
cat > "$tmp/own.c" <<'SRC'
int strcoll(const char *a, const char *b);

long own_strcoll_user(const char *a)
{
	return strcoll(a, a);
}
SRC
cat > "$tmp/own_def.c" <<'SRC'
int strcoll(const char *a, const char *b)
{
	return a[0] - b[0];
}
SRC

"$CC" "${PFLAGS[@]}" -S "$tmp/copies.c" -o "$tmp/copies.s" 2> "$tmp/verbose"
"$CC" "${PFLAGS[@]}" -S "$tmp/own.c" -o "$tmp/own.s" 2>> "$tmp/verbose"
mode_of() { sed -n "s/.*meter: ‘$1’ \([a-z]*\).*/\1/p; s/.*meter: '$1' \([a-z]*\).*/\1/p" "$tmp/verbose"; }
# host's instructions, from its label to the end of its body
body_of() { # asm function
	awk -v f="$2" '$0 == f ":" { on = 1; next } on && /^\t\.size/ { exit } on' "$1"
}
body_of "$tmp/copies.s" host > "$tmp/host.s"

check "leaf rule: collate (strcoll, strtol, errno) is flat" \
	test "$(mode_of collate)" = flat || diag "$tmp/verbose"
check "leaf rule: sorts (qsort calls back) and a strcoll the program declared itself are stacked" \
	test "$(mode_of sorts)/$(mode_of own_strcoll_user)" = stacked/stacked ||
	diag "$tmp/verbose"
check "mix is a leaf and host stacked" \
	test "$(mode_of mix)/$(mode_of host)" = flat/stacked || diag "$tmp/verbose"
check "the copies of mix in host have no slow path: host jumps to its own entry's thunk alone" \
	eval 'grep -q "meter__enter_own_thunk" "$tmp/host.s" &&
	      ! grep -q "meter__enter_thunk" "$tmp/host.s" &&
	      ! grep -q "meter__enter_flat_thunk" "$tmp/host.s"' ||
	grep -n "thunk" "$tmp/host.s" | diag
fs=$(grep -c '%fs:' "$tmp/host.s")
check "the copies take their host's page: host reads meter__tls once ($fs)" \
	test "$fs" = 1 || head -n 40 "$tmp/host.s" | diag

check "an executable reads meter__tls at a fixed offset (no GOT)" \
	eval 'grep -q "%fs:meter__tls_abi4@tpoff" "$tmp/copies.s" &&
	      ! grep -q "meter__tls_abi4@gottpoff" "$tmp/copies.s"'
"$CC" "${PFLAGS[@]}" -fPIC -S "$tmp/copies.c" -o "$tmp/copies-pic.s" 2> /dev/null
check "a shared object's code reads it through its GOT" \
	eval 'grep -q "meter__tls_abi4@gottpoff" "$tmp/copies-pic.s" &&
	      ! grep -q "meter__tls_abi4@tpoff" "$tmp/copies-pic.s"'

# and they count: host's 10 calls, mix's 2 a turn, 7 turns a call
"$CC" "${PFLAGS[@]}" -o "$tmp/copies" "$tmp/copies.c" "$tmp/own.c" \
	"$tmp/own_def.c" "${LINK[@]}" 2> /dev/null
METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=$tmp/p.json "$tmp/copies" 10 > "$tmp/out"
calls_in() { # json name
	python3 -c 'import json, sys
print(sum(f["calls"] for f in json.load(open(sys.argv[1]))["functions"] if f["name"] == sys.argv[2]))' \
		"$1" "$2"
}
calls() { calls_in "$tmp/p.json" "$1"; }
check "counts exact: host 10, mix 140, collate 10, away 10, sorts 1, by_value counted" \
	test "$(calls host)/$(calls mix)/$(calls collate)/$(calls away)/$(calls sorts)" = 10/140/10/10/1 -a \
	     "$(calls by_value)" -gt 0 ||
	echo "# host $(calls host) mix $(calls mix) collate $(calls collate) away $(calls away) sorts $(calls sorts)"
# the program's strcoll takes libc's place for collate too (whose count
# stays exact; being flat, collate is not its caller in the stacks)
# one slow-path entry, the thread's first call: had libmeter set a
# meter__tls of its own, every entry would have taken the slow path
check "the executable's meter__tls is the one libmeter sets: 1 slow-path entry in the run" \
	test "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["slow_entries"])' "$tmp/p.json")" = 1
check "the program's own strcoll is counted: 11 calls (own_strcoll_user 1, collate 10)" \
	test "$(calls own_strcoll_user)/$(calls strcoll)" = 1/11
# A call that is not profiled (before libmeter's constructor, from
# .preinit_array; in a thread's key destructor, after libmeter has let the
# thread go) gets libmeter's scratch page, which its copies then count
# and push into: a whole block, as the one of threads not registered.
cat > "$tmp/early.c" <<'SRC'
#include <pthread.h>
#include <stdio.h>

#include "host.h"

static void preinit(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv, (void)envp;
	host(5);
}
__attribute__((section(".preinit_array"), used))
static void (*const preinit_p)(int, char **, char **) = preinit;

static pthread_key_t key;

static void at_key_end(void *v)
{
	host(5);
	(void)v;
}

static void *worker(void *v)
{
	pthread_setspecific(key, v);
	return v;
}

int main(void)
{
	pthread_t t;

	pthread_key_create(&key, at_key_end);
	pthread_create(&t, NULL, worker, &key);
	pthread_join(t, NULL);
	printf("%u\n", host(7));
	return 0;
}
SRC
"$CC" "${PFLAGS[@]}" -o "$tmp/early" "$tmp/early.c" "${LINK[@]}" -lpthread 2> /dev/null
if [ "${METER_ASAN:-0}" = 1 ]; then
	# .preinit_array runs before any library's initialisation, ASan's
	# too: libmeter built with it faults on its first shadow access
	skip "copies in calls not profiled (.preinit_array, a key destructor) run" \
		"libmeter built with ASan cannot run before ASan starts"
else
	METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=$tmp/early.json "$tmp/early" > "$tmp/early.out"
	rc=$?
	check "copies in calls not profiled (.preinit_array, a key destructor) run (exit $rc), main's counted (host $(calls_in "$tmp/early.json" host), mix $(calls_in "$tmp/early.json" mix))" \
		test $rc = 0 -a "$(calls_in "$tmp/early.json" host)/$(calls_in "$tmp/early.json" mix)" = 1/14
fi

# Built with -fvisibility=hidden, the executable's meter__tls is exported
# all the same (libmeter sets it): one slow-path entry, not one a call.
cat > "$tmp/hidden.c" <<'SRC'
#ifdef BY_HAND
#include <meter.h>
#else
#define METER_FUNCTION() do { } while (0)
#endif

volatile unsigned long sink;

__attribute__((noinline)) void by_hand(int i)
{
	METER_FUNCTION();
	sink += (unsigned long)i;
}

__attribute__((noinline)) void by_plugin(int i)
{
	for (int k = 0; k < 2; k++)
		sink += (unsigned long)i;
}

int main(void)
{
	for (int i = 0; i < 1000; i++) {
		by_hand(i);
		by_plugin(i);
	}
	return 0;
}
SRC
"$CC" -O2 -fvisibility=hidden -DBY_HAND -I"$ROOT/include" \
	-o "$tmp/hidden-macro" "$tmp/hidden.c" "${LINK[@]}"
"$CC" "${PFLAGS[@]}" -fvisibility=hidden -o "$tmp/hidden-plugin" \
	"$tmp/hidden.c" "${LINK[@]}" 2> /dev/null
slow_of() { # binary
	METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=$tmp/h.json "$1" &&
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["slow_entries"])' "$tmp/h.json"
}
check "-fvisibility=hidden: one slow-path entry, the macro's build ($(slow_of "$tmp/hidden-macro")) and the plugin's ($(slow_of "$tmp/hidden-plugin"))" \
	test "$(slow_of "$tmp/hidden-macro")/$(slow_of "$tmp/hidden-plugin")" = 1/1

# A C++ method of a libc leaf's name is not that leaf: std::ostream::write
# may call the program's streambuf.
cat > "$tmp/stream.cc" <<'SRC'
#include <ostream>

__attribute__((noinline)) void put(std::ostream &o)
{
	o.write("x", 1);
}
SRC
"$CXX" "${PFLAGS[@]}" -c "$tmp/stream.cc" -o "$tmp/stream.o" 2> "$tmp/stream.err"
check "C++: a function calling std::ostream::write is stacked" \
	grep -q "meter: .put(std::ostream&). stacked" "$tmp/stream.err" ||
	diag "$tmp/stream.err"

# A forked child is registered again by the next function's own entry it
# runs.  The copies it runs before, in the function that forked, have no
# slow path (mix calls step at the source, so the leaf rule makes it
# stacked; step is tiny, left alone and inlined, and each copy of mix
# becomes a leaf): they count into the page their host's entry found, the
# child's own block, which that registration reports.  Counted into
# meter__tls's page, which the fork left unregistered, they were lost.
cat > "$tmp/fork.c" <<'SRC'
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long sink;

static inline unsigned step(unsigned x)
{
	return x * 2654435761u;
}

static inline unsigned mix(unsigned x)
{
	unsigned s = 0;

	for (unsigned k = 0; k < 2; k++)
		s ^= step(x + k);
	return s;
}

/* a loop: not tiny, so instrumented (its entry registers the child) */
__attribute__((noinline)) void away(unsigned s)
{
	for (int k = 0; k < 2; k++)
		sink += s;
}

__attribute__((noinline)) void host(unsigned n)
{
	unsigned s = 0;
	pid_t p = fork();

	for (unsigned i = 0; i < n; i++)
		s += mix(i);
	away(s);
	if (p == 0)
		exit(0);
	waitpid(p, NULL, 0);
}

int main(void)
{
	host(100);
	return 0;
}
SRC
"$CC" -O2 -fplugin="$PLUGIN" -fplugin-arg-meter-verbose -o "$tmp/fork" \
	"$tmp/fork.c" "${LINK[@]}" 2> "$tmp/fork.err"
check "fork: step is left alone, mix stacked by the leaf rule and flat once inlined" \
	eval 'test "$(sed -n "s/.*meter: .step. \([a-z]*\).*/\1/p" "$tmp/fork.err")" = tiny &&
	      grep -q "meter: .mix. stacked" "$tmp/fork.err" &&
	      grep -q "mix. flat once inlining is done (an inlined copy)" "$tmp/fork.err"' ||
	diag "$tmp/fork.err"
mkdir "$tmp/fork.out"
METER_BACKEND=off METER_QUIET=1 METER_OUTPUT=$tmp/fork.out/%p.json "$tmp/fork"
child_mix=$(python3 -c 'import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    c = {r["name"]: r["calls"] for r in d["functions"]}
    if not c.get("main"):
        print(c.get("mix", 0))' "$tmp/fork.out")
check "a forked child's copies count before it registers again (child: mix ${child_mix:-none} of 100)" \
	test "$child_mix" = 100
echo "1..$n"
[ $fails = 0 ]
