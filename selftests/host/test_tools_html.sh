#!/bin/bash
# SPDX-License-Identifier: MIT
#
# -f html: the page's own HTML (self-contained, tables readable without
# scripts, names escaped) on the fixtures; then a real run of the example
# Appel's program (forking) and split's diff against the changed build,
# driven in headless chromium
# with the network off (selftests/host/html_check.py: sorting, the function
# view, flame graph and icicle box by box, search, zoom, focus, the diff
# report, no console error).  Screenshots land in build/check/.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
RUN=$ROOT/build/tools/meter-run
DATA=$ROOT/selftests/host/data
SHOTS=$ROOT/build/check

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_html.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

BROWSER_TESTS=32
echo "1..$((12 + BROWSER_TESTS))"

"$STAT" -i "$DATA/appel.json" -f html -o "$tmp/appel.html"
check "one file: no external script, style, link or image" \
	bash -c "head -c 15 '$tmp/appel.html' | grep -q '<!DOCTYPE html>' &&
		 ! grep -Eiq '<(script|img|iframe)[^>]* src=|<link |url\(|@import' '$tmp/appel.html'" ||
	diag "$tmp/appel.html"
check "a Content-Security-Policy that allows nothing from elsewhere" \
	grep -q "default-src 'none'; script-src 'unsafe-inline'" "$tmp/appel.html"
check "the header facts: backend, rate, samples, CPU seconds, calls, lost, invalid, truncated, correction" \
	bash -c "for k in backend rate samples 'CPU seconds' calls threads lost invalid truncated correction; do
			grep -q \"<tr><th>\$k</th>\" '$tmp/appel.html' || exit 1
		 done && grep -q '<tr><th>rate</th><td>1000 Hz' '$tmp/appel.html'"
check "flat table without scripts: is_prime 95.24 % self, 1.29 points at 95 %, 200 calls" \
	grep -q '<a href="#f[0-9]*" title="is_prime">is_prime</a></td><td>95.24</td><td>1.29</td><td>1.000</td><td>95.24</td><td>1.000</td><td>200</td>' "$tmp/appel.html"
# f's entry: its caller main (100 %) and its callee is_prime (90 of 92 samples)
awk '/<div class="fn" id="f[0-9]*" data-node="[0-9]*"><h3>f<\/h3>/ { on = 1 }
     on { print } on && /<\/div>/ { exit }' "$tmp/appel.html" > "$tmp/f"
check "call graph without scripts: f's caller main 100 %, its callee is_prime 97.83 %, both links" \
	bash -c "grep -q '<a href=\"#f[0-9]*\">main</a></td><td>100.00</td>' '$tmp/f' &&
		 grep -q '<a href=\"#f[0-9]*\">is_prime</a></td><td>97.83</td><td>0.900</td>' '$tmp/f'" ||
	diag "$tmp/f"

"$STAT" -i "$DATA/recursive.json" -f html -o "$tmp/rec.html"
# stacks of 1, 2 and 4 samples in 2000: boxes under 3 px, one under 1 px
"$STAT" -i "$DATA/narrow.json" --no-correction -f html -o "$tmp/narrow.html"
"$STAT" -i "$DATA/deep-kernel.json" --no-correction -f html -o "$tmp/deep.html"
check "names and the command escaped in HTML; the data cannot close its script" \
	bash -c "grep -q '<title>meter: rec &quot;quoted&quot; \\\\ tab' '$tmp/rec.html' &&
		 grep -q 'operator new;x y' '$tmp/rec.html' &&
		 [ \$(grep -c '</script>' '$tmp/rec.html') = 2 ]"
"$STAT" -i "$DATA/wall.json" -f html -o "$tmp/wall.html"
check "wall clock: the off-CPU split in the facts, a self off-CPU column, states in the stacks" \
	bash -c "grep -q '<tr><th>off the CPU</th><td>5.0 % runnable, 50.0 % blocked' '$tmp/wall.html' &&
		 grep -q '<th>self off-CPU %</th>' '$tmp/wall.html' &&
		 grep -Eq '^\[[0-9]+,2,' '$tmp/wall.html'" || diag "$tmp/wall.html"

# a real run, with meter-run writing the page itself
"$RUN" -f html -o "$tmp/split.html" -- "$ROOT/build/examples/split" 4000 > /dev/null 2>&1
check "meter-run -f html: a real run of split, heavy medium light in the table" \
	bash -c "for f in heavy medium light; do
			grep -q \">\$f</a></td><td>\" '$tmp/split.html' || exit 1
		 done"
"$RUN" -f json -o "$tmp/split.json" -- "$ROOT/build/examples/split" 4000 > /dev/null 2>&1
"$RUN" -f json -o "$tmp/light4.json" -- "$ROOT/build/selftests/split_light4" 4000 > /dev/null 2>&1
# Appel's program and its forked child, merged: is_prime has two callers
# (f and g) under two roots' worth of stacks
"$RUN" --follow-fork -f json -o "$tmp/appel.json" -- "$ROOT/build/selftests/tools_appel" 1500 fork > /dev/null 2>&1
# the profile as taken, so that the browser's figures match the file's
"$STAT" -i "$tmp/appel.json" --no-correction -f html -o "$tmp/report.html"
"$STAT" diff -f html -o "$tmp/diff.html" "$tmp/split.json" "$tmp/light4.json"
check "meter-stat -i FILE -f html and diff -f html write their pages" \
	test -s "$tmp/report.html" -a -s "$tmp/diff.html"
# a program we did not write: Debian's lua5.4 built with the GCC plugin,
# running bench/realprogs/work.lua (errors raised and caught, recursion)
. "$ROOT/bench/realprogs.sh" || exit 1
lua_args=()
if realprogs_build "$ROOT/build/realprogs" > "$tmp/realprogs.log" 2>&1; then
	mapfile -t args <<< "$(realprogs_args lua "$ROOT/build/realprogs" 1)"
	"$RUN" -f json -o "$tmp/lua.json" -- "$ROOT/build/realprogs/lua/plugin/lua" \
		"${args[@]}" > /dev/null 2>&1
	"$STAT" -i "$tmp/lua.json" --no-correction -f html -o "$tmp/lua.html"
	lua_args=(--real-profile "$tmp/lua.json" --real-report "$tmp/lua.html")
fi
check "Debian's lua5.4 (GCC plugin) profiled, and its page written" \
	test -s "$tmp/lua.html" || diag "$tmp/realprogs.log"
# C++ names of 270 characters (1000 of them, one row each)
METER_BACKEND=signal METER_QUIET=1 METER_OUTPUT="$tmp/cxx.json" \
	"$ROOT/build/selftests/host/lib_cxx_names" > /dev/null 2>&1
"$STAT" -i "$tmp/cxx.json" -f html -o "$tmp/cxx.html" 2> /dev/null
# and a name of 400 characters with no space to break it at
wide=$(printf 'x%.0s' $(seq 400))
sed "s/\"name\": \"g\"/\"name\": \"$wide\"/" "$DATA/narrow.json" > "$tmp/wide.json"
"$STAT" -i "$tmp/wide.json" -f html -o "$tmp/wide.html" 2> /dev/null
check "a C++ program's page written (lib_cxx_names, 1000 long names), and one with a 400-character name" \
	test -s "$tmp/cxx.html" -a -s "$tmp/wide.html"
"$STAT" merge -f html -o "$tmp/merged.html" "$tmp/split.json" "$tmp/split.json"
check "merge -f html: two runs in one page" \
	grep -q '<tr><th>runs merged</th><td>2</td></tr>' "$tmp/merged.html"

mkdir -p "$SHOTS"
if ! command -v chromium > /dev/null 2>&1 || ! command -v python3 > /dev/null 2>&1; then
	for i in $(seq "$BROWSER_TESTS"); do
		nok "browser check $i: chromium or python3 is not installed (scripts/install-deps)"
	done
	exit 1
fi
python3 "$ROOT/selftests/host/html_check.py" --first $((n + 1)) \
	--profile "$tmp/appel.json" --report "$tmp/report.html" \
	--diff "$tmp/diff.html" --narrow-profile "$DATA/narrow.json" \
	--narrow-report "$tmp/narrow.html" --deep-profile "$DATA/deep-kernel.json" \
	--deep-report "$tmp/deep.html" --cxx-report "$tmp/cxx.html" \
	--wide-report "$tmp/wide.html" \
	--shots "$SHOTS" "${lua_args[@]}"
rc=$?
exit $((fails > 0 || rc != 0))
