#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Host test of selftests/vm-run, in three VM boots (each costs seconds):
#  1. a command that writes stdout and stderr, reads an --add dir, writes
#     an --out dir and exits 7: status, streams (free of kernel noise) and
#     the round trip come back right; meter.ko (when built) is loaded;
#     nobody (uid 65534) exists; / tmp proc sys dev are mounted;
#     busybox answers at /usr/bin too (/usr/bin/sed: libtool wrappers).
#  2. insmod warn_test.ko from a test run-tests runs: vm-run exits
#     non-zero and shows the WARNING splat, its first line naming the
#     test; a taint alone is no splat.
#  3. --timeout expiry gives 124.
set -eu

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
. "$ROOT/selftests/tools_lib.sh" || exit 1
cd "$ROOT"
VMRUN=$ROOT/selftests/vm-run


echo "1..15"

kver=$(selftests/kernels | awk '{ print $1 }')
if [ -z "$kver" ]; then
	echo "# no test kernel installed (run scripts/install-deps)"
	exit 4
fi
warn_ko=$ROOT/build/kernel/$kver/selftests/warn_mod/warn_test.ko
meter_ko=$ROOT/build/kernel/$kver/kmod/meter.ko
[ -f "$warn_ko" ] || make -s -C "$ROOT" warn-module KVER="$kver" >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_vm_run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/add" "$tmp/out"
echo "from the host" > "$tmp/add/input"
echo "stale" > "$tmp/out/kept"

modopt=(--no-module)
[ -f "$meter_ko" ] && modopt=()
set +e

# --- 1: streams, status, --add, --out ----------------------------------------
script='
echo "to stdout"
echo "to stderr" >&2
cat '"$tmp"'/add/input
mkdir -p '"$tmp"'/out/sub
echo "from the VM" > '"$tmp"'/out/sub/result
id -u nobody
for m in /proc /sys /dev /tmp; do grep -q " $m " /proc/mounts && echo "mounted $m"; done
[ -n "${METER_KVER:-}" ] && echo "kver $METER_KVER"
grep -q "^meter " /proc/modules && echo "meter loaded"
echo "$PATH" | grep -q "/build/tools" && echo "tools on PATH"
echo x | /usr/bin/sed s/x/usr-bin-sed/
pwd
exit 7'
"$VMRUN" --kernel "$kver" "${modopt[@]}" --add "$tmp/add" --out "$tmp/out" \
	-- sh -c "$script" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
check "COMMAND's exit status 7 comes back" [ $rc = 7 ] || diag "$tmp/stderr"
want="to stdout
from the host
65534
mounted /proc
mounted /sys
mounted /dev
mounted /tmp
kver $kver"
[ -f "$meter_ko" ] && want="$want
meter loaded"
want="$want
tools on PATH
usr-bin-sed
$ROOT"
check "stdout is exactly COMMAND's stdout" [ "$(cat "$tmp/stdout")" = "$want" ] ||
	{ echo "# got:"; diag "$tmp/stdout"; }
check "stderr carries COMMAND's stderr" grep -qx "to stderr" "$tmp/stderr"
check "no kernel log lines on stdout or stderr" \
	bash -c "! grep -Eq '^\[ *[0-9]+\.[0-9]+\]|Linux version' '$tmp/stdout' '$tmp/stderr'"
check "--out: a file written in the VM comes back" \
	grep -qx "from the VM" "$tmp/out/sub/result"
check "--out: host files already there are kept" grep -qx stale "$tmp/out/kept"
if [ -f "$meter_ko" ]; then
	check "meter.ko is loaded before COMMAND" grep -qx "meter loaded" "$tmp/stdout"
else
	skip "meter.ko is loaded before COMMAND" "meter.ko not built"
fi

# --- 2: a kernel WARNING fails the run ---------------------------------------
# Through run-tests, which marks each test's start in the kernel log.
mkdir -p "$tmp/wcase"
printf '#!/bin/sh\ninsmod %s && echo loaded && echo "ok 1 loaded"\n' \
	"$warn_ko" > "$tmp/wcase/warn_case"
chmod +x "$tmp/wcase/warn_case"
"$VMRUN" --kernel "$kver" --no-module --add "$(dirname "$warn_ko")" \
	--add "$tmp/wcase" --env METER_TEST_KMSG=1 \
	-- "$ROOT/selftests/run-tests" "$tmp/wcase/warn_case" \
	> "$tmp/stdout2" 2> "$tmp/stderr2"
rc=$?
check "the command itself succeeded" grep -qx loaded "$tmp/stdout2"
check "the splat's first line names the test it came in" \
	grep -q 'has a splat: WARNING:.*warn_test.* (during warn_case)$' \
	"$tmp/stderr2" || diag "$tmp/stderr2"
check "a kernel WARNING makes vm-run fail (status $rc)" [ $rc != 0 ]
check "vm-run prints the WARNING splat" grep -q 'WARNING:.*warn_test' "$tmp/stderr2" ||
	diag "$tmp/stderr2"
check "the splat has its call trace" grep -q 'Call Trace' "$tmp/stderr2"

# Taint messages alone (unsigned out-of-tree module) are no splat: load
# it quietly and still pass.  The same boot checks the on-demand trigger.
"$VMRUN" --kernel "$kver" --no-module --add "$(dirname "$warn_ko")" --timeout 120 \
	-- sh -c "insmod $warn_ko warn=0 && dmesg | grep -c taint" \
	> "$tmp/stdout3" 2> "$tmp/stderr3"
rc=$?
check "a taint message alone is no splat (status $rc)" [ $rc = 0 ] || diag "$tmp/stderr3"
check "the kernel did log the taint" [ "$(cat "$tmp/stdout3")" -ge 1 ]

# --- 3: timeout -----------------------------------------------------------------
"$VMRUN" --kernel "$kver" --no-module --timeout 2 -- sleep 60 \
	> /dev/null 2> "$tmp/stderr4"
rc=$?
check "--timeout expiry gives status 124" [ $rc = 124 ]

exit $((fails > 0))
