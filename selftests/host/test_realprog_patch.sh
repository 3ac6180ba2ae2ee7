#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-run --patch on real programs built as Debian builds them, with
# nothing of meter's (bzip2 and lua5.4 from apt-get source, Debian's
# flags: -O2 with inlining, PIE, fortified; bench/realprogs.sh's plain
# builds): each writes what it writes without, and every function of the
# executable that callgrind saw called has callgrind's count in meter's
# profile, but for those refused and listed, at most 5 % of them.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
. "$ROOT/selftests/tools_lib.sh" || exit 1
. "$ROOT/bench/realprogs.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_realprog_patch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
DIR=$ROOT/build/realprogs

if ! command -v valgrind > /dev/null 2>&1; then
	echo "1..0 # SKIP valgrind is not installed"
	exit 4
fi
if ! realprogs_build "$DIR" bzip2 lua > "$tmp/build.log" 2>&1; then
	nok "bzip2 and lua5.4 from apt-get source build"
	tail -n 20 "$tmp/build.log" | diag
	echo "1..$n"
	exit 1
fi

for prog in bzip2 lua; do
	bin=$DIR/$prog/plain/$prog
	mapfile -t args <<< "$(realprogs_args $prog "$DIR" 1)"
	"$bin" "${args[@]}" > "$tmp/$prog.plain" 2> /dev/null
	"$RUN" --backend signal --patch --patch-list -f json \
		-o "$tmp/$prog.json" -- "$bin" "${args[@]}" \
		> "$tmp/$prog.out" 2> "$tmp/$prog.err"
	check "$prog (Debian's flags), patched, writes what it writes without" \
		cmp "$tmp/$prog.plain" "$tmp/$prog.out" || diag "$tmp/$prog.err"
	valgrind --tool=callgrind --callgrind-out-file="$tmp/$prog.cg" \
		"$bin" "${args[@]}" > /dev/null 2> "$tmp/$prog.cgerr"
	check "$prog: every called function has callgrind's count or is refused (at most 5 %)" \
		python3 "$ROOT/selftests/host/callgrind_calls.py" "$tmp/$prog.cg" \
			"$bin" "$tmp/$prog.json" "$tmp/$prog.err"
done
echo "1..$n"
[ $fails = 0 ]
