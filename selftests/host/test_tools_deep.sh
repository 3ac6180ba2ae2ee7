#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One stack rule, in every backend and every format that shows stacks: a
# stack deeper than a sample keeps (128 frames) keeps its leaf-most frames
# and loses its root.  300-deep recursion ending in spin, profiled by the
# kernel backend (data/deep-kernel.json, recorded by meter-run in the test
# VM; test_lib_kernel_robust checks the kernel side live) and by the signal
# backend (run here): the JSON, the folded lines, pprof's traces (read by
# go tool pprof) and the HTML page's stacks all end in spin (or in deep's
# own code, where a tick may land on the way) and are marked cut at the
# root ("[truncated]", where main was).  Recursion past the
# shadow stack's capacity (1008 frames) takes libmeter's slow path on every
# call beyond it: the header counts those calls and meter-run warns.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
RUN=$ROOT/build/tools/meter-run
WORK=$ROOT/build/selftests/host/lib_workload_manual
DATA=$ROOT/selftests/host/data

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_deep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..12"

cp "$DATA/deep-kernel.json" "$tmp/kernel.json"
"$RUN" -b signal -f json -o "$tmp/signal.json" -- "$WORK" deep 300 200 \
	> /dev/null 2>&1

# The deep stacks of each format, one per line, leaf first: "leaf root".
deep_json() {
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
names = {f["id"]: f["name"] for f in p["functions"]}
for s in p["stacks"]:
    f = [names[i] for i in s["frames"]]
    if f.count("deep") >= 100:
        print(f[-1], "[truncated]" if s["truncated"] else f[0])' "$1"
}
deep_folded() {
	"$STAT" -i "$1" -f folded --no-correction |
		awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";")
		       if (gsub(/deep/, "&") >= 100) print f[n], f[1] }'
}
deep_pprof() {
	"$STAT" -i "$1" -f pprof -o "$tmp/p.pb.gz" &&
	go_pprof -traces "$tmp/p.pb.gz" 2> /dev/null |
		awk '/^-----------\+/ { if (n >= 100) print leaf, root
					 n = 0; leaf = ""; next }
		     /^ +[0-9.]+[a-z]*s +[^ ]+$/ { leaf = $2; root = $2
						 n += $2 == "deep"; next }
		     /^ +[^ ]+$/ && leaf != "" { root = $1; n += $1 == "deep" }
		     END { if (n >= 100) print leaf, root }'
}
deep_html() {
	"$STAT" -i "$1" -f html -o "$tmp/p.html" &&
	python3 -c 'import json, re, sys
t = open(sys.argv[1]).read()
d = json.loads(re.search(r"id=\"meter-data\">(.*?)</script>", t, re.S).group(1))
for s in d["stacks"]:
    f = [d["funcs"][i] for i in s[3:]]
    if f.count("deep") >= 100:
        print(f[-1], "[truncated]" if s[1] & 4 else f[0])' "$tmp/p.html"
}

# Every line "LEAF [truncated]": the root is marked cut (main was dropped)
# and the leaf is spin, or deep itself (a tick may land in deep's own code
# on the way down to spin or back); at least one ends in spin.
ends_in_spin() {
	[ -s "$1" ] && grep -qx 'spin \[truncated\]' "$1" &&
		! awk '($1 != "spin" && $1 != "deep") || $2 != "[truncated]" { bad = 1 }
		       END { exit !bad }' "$1"
}

# The signal backend, on a loaded machine, may miss most of the CPU time
# (it says so: unsampled_ns); its stacks then show nothing to check.
starved() {
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
sys.exit(0 if p.get("unsampled_ns", 0) * 4 > p["samples"] * p["period_ns"] else 1)' "$1"
}

for b in kernel signal; do
	if [ $b = signal ] && starved "$tmp/$b.json"; then
		for what in JSON folded pprof HTML "both backends"; do
			skip "$b: $what" "the signal backend missed a quarter of the CPU time: the machine is too loaded"
		done
		continue
	fi
	deep_json "$tmp/$b.json" > "$tmp/$b.j"
	check "$b: the JSON's deep stacks are marked truncated and end in spin ($(wc -l < "$tmp/$b.j") stacks)" \
		ends_in_spin "$tmp/$b.j" || diag "$tmp/$b.j"
	deep_folded "$tmp/$b.json" > "$tmp/$b.f"
	check "$b: folded: the same ($(wc -l < "$tmp/$b.f") lines)" ends_in_spin "$tmp/$b.f" ||
		diag "$tmp/$b.f"
	if command -v go > /dev/null 2>&1; then
		deep_pprof "$tmp/$b.json" > "$tmp/$b.p"
		check "$b: pprof: go tool pprof -traces shows spin as the leaf, [truncated] as the root ($(wc -l < "$tmp/$b.p") traces)" \
			ends_in_spin "$tmp/$b.p" || diag "$tmp/$b.p"
	else
		skip "$b: pprof traces" "go is not installed"
	fi
	deep_html "$tmp/$b.json" > "$tmp/$b.h"
	check "$b: HTML: the flame graph's stacks the same, the cut marked for its [truncated] frame ($(wc -l < "$tmp/$b.h"))" \
		ends_in_spin "$tmp/$b.h" || diag "$tmp/$b.h"
done
[ -f "$tmp/signal.f" ] &&
check "both backends give the same deep stack to spin, in every format" \
	bash -c "cat '$tmp/kernel.f' '$tmp/kernel.h' '$tmp/signal.f' '$tmp/signal.h' | grep '^spin ' | sort -u | wc -l | grep -qx 1"
check "... of the depth a sample keeps (128 frames in each)" \
	bash -c "[ \$(python3 -c 'import json, sys
for a in sys.argv[1:]:
    p = json.load(open(a))
    print(max(len(s[\"frames\"]) for s in p[\"stacks\"]))' '$tmp/kernel.json' '$tmp/signal.json' | sort -u) = 128 ]"

"$RUN" -b signal -f flat -o "$tmp/deep3000.txt" -- "$WORK" deep 3000 20 \
	> /dev/null 2> "$tmp/deep3000.err"
"$RUN" -b signal -f flat -o "$tmp/deep300.txt" -- "$WORK" deep 300 20 \
	> /dev/null 2> "$tmp/deep300.err"
check "3000 deep: the header counts the slow path's calls, and meter-run warns naming the depth" \
	bash -c "grep -Eq '^[0-9]{4} calls took libmeter.s slow path' '$tmp/deep3000.txt' &&
		 grep -q 'took libmeter.s slow path: recursion deeper than 1008 frames' '$tmp/deep3000.err'" ||
	diag "$tmp/deep3000.txt" "$tmp/deep3000.err"
check "300 deep: no slow path beyond the first call, no line, no warning" \
	bash -c "! grep -q 'slow path' '$tmp/deep300.txt' '$tmp/deep300.err'" ||
	diag "$tmp/deep300.txt" "$tmp/deep300.err"

exit $((fails > 0))
