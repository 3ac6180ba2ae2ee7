#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-run --pid: a running program built plainly
# (selftests/host/patch_target.c) is attached, patched, profiled for a
# second and detached; it runs on to the result it has without meter,
# the entries it had patched are its own bytes again, and the profile
# counts its calls.  Bad targets are refused clearly: none, another
# user's, a static one, a C++ program (selftests/host/patch_exceptions.cc
# waiting).  The backend is
# LIBTEST_BACKEND's (signal on the host; selftests/vm/test_patch_attach.sh
# runs this with meter.ko's).
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
PROG=$ROOT/build/selftests/host/patch_target
BACKEND=${LIBTEST_BACKEND:-signal}
export METER_QUIET=1

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_patch_attach.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP attaching needs root (ptrace)"
	exit 4
fi
echo "1..8"

# Attach only once the target runs main: a process still in the dynamic
# loader has no C library to call dlopen in yet.  The bound is for a
# target that never starts (a TCG guest takes well under a second).
started() {
	local i

	for ((i = 0; i < 1200; i++)); do
		[ -e "$1" ] && return 0
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.05
	done
	echo "# the target never created $1" >&2
	return 1
}

"$PROG" "$tmp/stop" "$tmp/ready" > "$tmp/out" &
pid=$!
started "$tmp/ready"
"$RUN" --backend "$BACKEND" --pid "$pid" --duration 1 -f json \
	-o "$tmp/p.json" 2> "$tmp/err"
rc=$?
check "meter-run --pid attaches, profiles a second and detaches (exit 0)" \
	[ $rc = 0 ] || diag "$tmp/err"

# the program's code in memory against its file: no jump left
check "after detaching, the program's code is its file's again, byte for byte" \
	python3 - "$pid" "$PROG" <<'PY'
import os, sys
# /proc names the file by its real path: a checkout may be a link
pid, prog = sys.argv[1], os.path.realpath(sys.argv[2])
data = open(prog, 'rb').read()
mem = open('/proc/%s/mem' % pid, 'rb')
n = 0
for line in open('/proc/%s/maps' % pid):
    w = line.split()
    if len(w) < 6 or w[5] != prog or 'x' not in w[1]:
        continue
    lo, hi = (int(x, 16) for x in w[0].split('-'))
    off = int(w[2], 16)
    mem.seek(lo)
    got = mem.read(hi - lo)
    want = data[off:off + (hi - lo)]
    n += 1
    diff = [i for i in range(min(len(got), len(want))) if got[i] != want[i]]
    print('# text at %x: %d bytes, %d differ' % (lo, len(want), len(diff)))
    if diff or not want:
        sys.exit(1)
sys.exit(0 if n else 1)
PY

check "the $BACKEND backend's profile counts the calls made while attached: step 100 a round_of" \
	python3 - "$tmp/p.json" "$BACKEND" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(1)
if p.get('backend') != sys.argv[2]:
    print('# backend %s' % p.get('backend'))
    sys.exit(1)
c = {f['name']: f.get('calls', 0) for f in p['functions']}
s = {f['name']: f.get('self_samples', 0) for f in p['functions']}
print('# calls %s, samples %s' % (c, s))
r, st = c.get('round_of', 0), c.get('step', 0)
sys.exit(0 if r > 0 and abs(st - 100 * r) <= 100 and s.get('step', 0) > 0 else 1)
PY

touch "$tmp/stop"
wait "$pid"
rc=$?
pid=
read -r rounds sum < "$tmp/out"
"$PROG" "${rounds:-0}" > "$tmp/plain"
check "the program runs on to its end, with the result it has without meter" \
	bash -c "[ $rc = 0 ] && [ -n '$rounds' ] && cmp -s '$tmp/out' '$tmp/plain'" ||
	diag "$tmp/out" "$tmp/plain"

"$RUN" --pid 999999999 > /dev/null 2> "$tmp/nopid"
rc=$?
check "a process that does not exist is refused with a message" \
	bash -c "[ $rc != 0 ] && grep -q 'pid' '$tmp/nopid'" || diag "$tmp/nopid"

# a static program has no C library to load the patcher with
BUSYBOX=$(command -v busybox)
if [ -n "$BUSYBOX" ] && ! ldd "$BUSYBOX" > /dev/null 2>&1; then
	"$BUSYBOX" sleep 60 &
	pid=$!
	"$RUN" --pid "$pid" --duration 1 > /dev/null 2> "$tmp/static"
	rc=$?
	check "a static program is refused: no C library to load the patcher" \
		bash -c "[ $rc != 0 ] && grep -q 'no C library mapped' '$tmp/static' &&
			 kill -0 $pid" || diag "$tmp/static"
	kill "$pid"
	wait "$pid" 2> /dev/null
	pid=
else
	skip "a static program is refused" "no static busybox here"
fi

"$ROOT/build/selftests/host/patch_exceptions" "$tmp/stop3" "$tmp/ready3" \
	> /dev/null &
pid=$!
started "$tmp/ready3"
"$RUN" --pid "$pid" --duration 1 > /dev/null 2> "$tmp/cxx"
rc=$?
check "a C++ process is refused (its exceptions would meet patched frames), and left alone" \
	bash -c "[ $rc != 0 ] && grep -q 'C++ program' '$tmp/cxx' &&
		 ! grep -q libmeter /proc/$pid/maps" || diag "$tmp/cxx"
touch "$tmp/stop3"
wait "$pid"
pid=

"$PROG" "$tmp/stop2" "$tmp/ready2" > /dev/null &
pid=$!
started "$tmp/ready2"
if command -v setpriv > /dev/null && setpriv --reuid=65534 true 2> /dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$RUN" \
		--pid "$pid" --duration 1 > /dev/null 2> "$tmp/perm"
	rc=$?
	check "another user's process is refused, and why" \
		bash -c "[ $rc != 0 ] && grep -q 'not permitted' '$tmp/perm'" ||
		diag "$tmp/perm"
else
	skip "another user's process is refused" "no setpriv here"
fi
touch "$tmp/stop2"
wait "$pid"
pid=
[ $fails = 0 ]
