#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Each sampled stack belongs to one thread: the JSON keeps its tid, merges
# keep the threads apart, folded output (which has no threads) sums them,
# pprof labels each sample with its thread, and a real two-thread run
# keeps each thread's function in its own stacks.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
RUN=$ROOT/build/tools/meter-run
DATA=$ROOT/selftests/host/data

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_threads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..10"

"$STAT" -i "$DATA/threads.json" -f json -o "$tmp/back.json"
check "JSON: each stack's tid written back byte for byte" \
	cmp "$DATA/threads.json" "$tmp/back.json"

# the row of ended threads meter.ko folded together (max_thread_rows)
sed 's/{"tid": 302, "samples": 35, "exited": true}/&,\n    {"tid": 0, "samples": 5, "exited": true, "folded": 7}/' \
	"$DATA/threads.json" > "$tmp/fold.json"
"$STAT" -i "$tmp/fold.json" -f json -o "$tmp/fold-back.json"
"$STAT" -i "$tmp/fold.json" --threads > "$tmp/fold.txt"
check "a folded row of 7 ended threads: kept by JSON, shown as such" \
	bash -c "cmp '$tmp/fold.json' '$tmp/fold-back.json' &&
		 grep -Eq '^ +0 +5 .* exited +\(7 ended\)$' '$tmp/fold.txt'" ||
	diag "$tmp/fold.txt"

"$STAT" -i "$DATA/threads.json" -f folded > "$tmp/folded"
check "folded: worker;work from threads 301 and 302 is one line of 60" \
	bash -c "grep -qx 'worker;work 60' '$tmp/folded' &&
		 [ \$(grep -c '^worker;work ' '$tmp/folded') = 1 ] &&
		 grep -qx 'main;work 30' '$tmp/folded' &&
		 grep -qx 'main;merge 10' '$tmp/folded'" || diag "$tmp/folded"

"$STAT" merge -f json -o "$tmp/merged.json" "$DATA/threads.json" "$DATA/threads.json"
check "merge: the same thread's stack adds up, two threads' stay apart" \
	python3 - "$tmp/merged.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
names = {f['id']: f['name'] for f in p['functions']}
got = sorted((tuple(names[i] for i in s['frames']), s.get('tid'), s['samples'])
             for s in p['stacks'])
want = [(('main', 'merge'), 300, 20), (('main', 'work'), 300, 60),
        (('worker', 'work'), 301, 50), (('worker', 'work'), 302, 70)]
assert got == want, got
PY

"$STAT" -i "$DATA/threads.json" -f html -o "$tmp/t.html"
check "HTML: each stack row carries its thread" \
	bash -c "grep -Eq '^\[25,0,301,[0-9]+,[0-9]+\]' '$tmp/t.html' &&
		 grep -Eq '^\[35,0,302,[0-9]+,[0-9]+\]' '$tmp/t.html'"

"$STAT" -i "$DATA/threads.json" -f pprof -o "$tmp/t.pb.gz"
if command -v go > /dev/null 2>&1; then
	gopp() { go_pprof "$@" 2>&1; }
	gopp -tags "$tmp/t.pb.gz" > "$tmp/tags"
	check "pprof -tags: tid 300 40 ms, 302 35 ms, 301 25 ms" \
		bash -c "grep -Eq '40.0ms .*: 300$' '$tmp/tags' &&
			 grep -Eq '35.0ms .*: 302$' '$tmp/tags' &&
			 grep -Eq '25.0ms .*: 301$' '$tmp/tags'" || diag "$tmp/tags"
	gopp -sample_index=samples -tagfocus=tid=302 -top "$tmp/t.pb.gz" > "$tmp/focus"
	check "pprof -tagfocus=tid=302: work 35 samples, nothing of main" \
		bash -c "awk '\$NF == \"work\" && \$1 == 35 { f = 1 } END { exit !f }' '$tmp/focus' &&
			 ! grep -Eq ' (main|merge)$' '$tmp/focus'" || diag "$tmp/focus"
	# the thread's name as the label "thread"
	sed 's/{"tid": 302, "samples": 35, "exited": true}/{"tid": 302, "samples": 35, "exited": true, "name": "worker-1"}/' \
		"$DATA/threads.json" > "$tmp/named.json"
	"$STAT" -i "$tmp/named.json" -f pprof -o "$tmp/named.pb.gz"
	gopp -sample_index=samples -tagfocus=thread=worker-1 -top "$tmp/named.pb.gz" > "$tmp/named"
	check "pprof -tagfocus=thread=worker-1: the named thread's work, 35 samples, nothing else" \
		bash -c "awk '\$NF == \"work\" && \$1 == 35 { f = 1 } END { exit !f }' '$tmp/named' &&
			 ! grep -Eq ' (main|merge)$' '$tmp/named'" || diag "$tmp/named"
else
	skip "pprof -tags" "go is not installed"
	skip "pprof -tagfocus" "go is not installed"
	skip "pprof -tagfocus=thread" "go is not installed"
fi

# a real run: waits' main thread parses, its second thread updates
"$RUN" -f json -o "$tmp/waits.json" -- "$ROOT/build/examples/waits" 2 > /dev/null 2>&1
check "a real two-thread run: main's stacks and updater's carry two tids" \
	python3 - "$tmp/waits.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
names = {f['id']: f['name'] for f in p['functions']}
tids = {}
for s in p['stacks']:
    tids.setdefault(names[s['frames'][0]], set()).add(s.get('tid'))
assert set(tids) == {'main', 'updater'}, tids
assert all(len(t) == 1 and 0 not in t and None not in t for t in tids.values()), tids
assert tids['main'] != tids['updater'], tids
known = {t['tid'] for t in p['threads']}
assert tids['main'] | tids['updater'] <= known, (tids, known)
PY
check "... update() only in the updater's stacks, parse() only in main's" \
	python3 - "$tmp/waits.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
names = {f['id']: f['name'] for f in p['functions']}
by = {}
for s in p['stacks']:
    fr = [names[i] for i in s['frames']]
    by.setdefault(s['tid'], set()).update(fr)
roots = {s['tid']: names[s['frames'][0]] for s in p['stacks']}
for tid, fns in by.items():
    if roots[tid] == 'main':
        assert 'parse' in fns and 'update' not in fns, fns
    else:
        assert 'update' in fns and 'parse' not in fns, fns
PY
