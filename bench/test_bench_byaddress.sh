#!/bin/bash
# SPDX-License-Identifier: MIT
#
# test_bench_byaddress: bench/byaddress.py (bench/selfshares.py's reader
# of `perf script -F ip,sym,dso,srcline --inline`) on a small made-up pair
# of scripts: a sample on a "<meter>" line, in <meter.h>'s inline code or
# in libmeter is meter's own and left out, an inlined frame and a tiny
# function keep their samples, time in libc goes to the calling program
# function, a program whose path holds parentheses is still the program,
# and the older format without lines reads as before.
set -u
root=$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)
. "$root/selftests/tools_lib.sh" || exit 1
echo "1..5"
command -v python3 >/dev/null || { for i in 1 2 3 4 5; do skip "bench/byaddress.py" "no python3"; done; exit 0; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir "$t/p(1)"
prog="$t/p(1)/prog"
touch "$prog"
echo '{"functions": [{"name": "f"}, {"name": "g"}]}' > "$t/names.json"
echo tiny_t > "$t/prog.tiny"
tab=$(printf '\t')
sample() { # leaf first: "ip sym [dso]|srcline[ (inlined)]" ...
	local fr
	echo
	for fr in "$@"; do
		printf '%s           %s\n  %s\n' "$tab" "${fr%%|*}" "${fr#*|}"
	done
}
{
	sample "10 f ($prog)|prog.c:10"
	sample "11 f ($prog)|prog.c:11"
	sample "20 tiny_t|prog.c:3 (inlined)" "20 f ($prog)|prog.c:12"
	sample "30 memcpy (/usr/lib/x86_64-linux-gnu/libc.so.6)|:0" "40 g ($prog)|prog.c:20"
} > "$t/plain.script"
{
	sample "10 f|<meter>:1 (inlined)" "10 g ($prog)|prog.c:21"
	sample "12 meter__enter|meter.h:340 (inlined)" "12 f ($prog)|prog.c:9"
	sample "11 f ($prog)|prog.c:11"
	sample "20 tiny_t|prog.c:3 (inlined)" "20 f ($prog)|prog.c:12"
	sample "30 memcpy (/usr/lib/x86_64-linux-gnu/libc.so.6)|:0" "40 g ($prog)|prog.c:20"
	sample "21 f ($prog)|/src/<meter>:2"
	sample "50 meter_push (/usr/lib/libmeter.so.1)|meter_shadow.c:70" "51 f ($prog)|<meter>:1"
} > "$t/plugin.script"
out=$(python3 "$root/bench/byaddress.py" "$prog" "$t/plain.script" "$prog" \
	"$t/plugin.script" "$t/names.json" --tiny "$t/prog.tiny" --json 2>&1)
get() { python3 -c "import json, sys; j = json.loads(sys.argv[1]); print($2)" "$out"; }
check "four samples on meter's lines, in meter__enter or in libmeter are counted apart" \
	test "$(get "$out" 'j["meter_own_samples"]')" = 4 ||
	echo "$out" | diag
check "the plain build's four samples: f 2, tiny_t 1 (inlined), g 1 (libc's memcpy)" \
	test "$(get "$out" '[j["plain_samples"], j["functions"]["f"]["plain"], j["functions"]["tiny_t"]["plain"], j["functions"]["g"]["plain"]]')" = "[4, 50.0, 25.0, 25.0]"
check "the plugin build's program samples: f 1, tiny_t 1, g 1" \
	test "$(get "$out" '[j["plugin_samples"], j["functions"]["f"]["by_address"], j["functions"]["tiny_t"]["by_address"]]')" = "[3, 33.33, 33.33]"
check "the largest difference is f's (16.67 points)" \
	test "$(get "$out" 'j["max_diff_pp"]')" = 16.67
# the format without lines (make bench's perf.script): inlined frames say
# so in the dso's place
{
	printf '\n%s           20 tiny_t (inlined)\n%s           20 f (%s)\n' "$tab" "$tab" "$prog"
	printf '\n%s           11 f (%s)\n' "$tab" "$prog"
} > "$t/old.script"
check "the older format: tiny_t (inlined) and f, one sample each" \
	test "$(python3 -c "import sys; sys.path.insert(0, '$root/bench'); from selfshares import perf_shares; print(sorted(perf_shares(sys.argv[1], sys.argv[2], {'f', 'tiny_t'})[0].items()))" "$prog" "$t/old.script")" = "[('f', 50.0), ('tiny_t', 50.0)]"
