#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The fuzz targets' corpora replayed (Documentation/fuzzing.md): each
# target of fuzz/, built with gcc, AddressSanitizer and UBSan around a
# plain driver instead of libFuzzer (selftests/host/fuzz.mk), reads every
# input of fuzz/corpus/NAME/: the seeds taken from real inputs and every
# input that once crashed a reader, so that a reader that breaks again
# fails here in seconds, without clang.  One test per target: no crash,
# no sanitizer report, no leak, no broken promise of the target's.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
REPLAY=$ROOT/build/selftests/fuzz

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_fuzz_replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

names=()
for src in "$ROOT"/fuzz/fuzz_*.c; do
	name=${src##*/fuzz_}
	names+=("${name%.c}")
done

echo "1..${#names[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for name in "${names[@]}"; do
	inputs=("$ROOT/fuzz/corpus/$name"/*)
	log=$tmp/$name.log
	if [ ! -x "$REPLAY/replay_$name" ]; then
		nok "$name: replay driver built (make $REPLAY/replay_$name)"
	elif [ ! -e "${inputs[0]}" ]; then
		nok "$name: fuzz/corpus/$name/ has inputs"
	elif "$REPLAY/replay_$name" "${inputs[@]}" > "$log" 2>&1; then
		ok "$name: ${#inputs[@]} inputs of fuzz/corpus/$name/ read, no crash or sanitizer report"
	else
		nok "$name: replay of fuzz/corpus/$name/ failed"
		tail -n 30 "$log" | sed 's/^/# /'
	fi
done

echo "# $fails failed"
[ "$fails" -eq 0 ]
