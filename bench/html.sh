#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/html.sh: how fast meter's HTML report opens on a large profile.
# Makes a profile of 50,000 distinct stacks (1,000 functions each calling
# 6 others, walks of depth 4 to 24 from main, each stack in one of 4
# threads, drawn from fixed seeds, so every run has the same profile), renders
# it with `meter-stat -f html`, and loads it in headless chromium
# (selftests/host/html_check.py --bench): seconds from navigation until the
# page's script has drawn the flame graph and answers, then one search over
# every box and one thread selected.  Repeated 3 times; a figure, not a
# test.  Needs chromium and python3 (scripts/install-deps).  Prints a table
# and, last, one JSON line.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STAT=$ROOT/build/tools/meter-stat
OUT=${BENCH_OUT:-$ROOT/build/bench/html}
STACKS=${BENCH_HTML_STACKS:-50000}
mkdir -p "$OUT"
[ -x "$STAT" ] || make -C "$ROOT" -s build/tools/meter-stat

python3 - "$OUT/big.json" "$STACKS" <<'PY'
import json, random, sys
path, nstacks = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
nf = 1000
# a program's shape: each function calls a few others (ids above its own
# mostly, so that stacks go deep), and stacks are walks from main
callees = {f: rng.sample(range(2, nf + 1), 6) for f in range(1, nf + 1)}
seen, stacks = set(), []
while len(stacks) < nstacks:
    depth = rng.randint(4, 24)
    frames = [1]
    while len(frames) < depth:
        frames.append(rng.choice(callees[frames[-1]]))
    frames = tuple(frames)
    if frames in seen:
        continue
    seen.add(frames)
    stacks.append({'frames': list(frames), 'samples': rng.randint(1, 50),
                   'truncated': False})
# four threads, from their own seed so that the stacks stay those above
trng = random.Random(2)
for s in stacks:
    s['tid'] = 100 + trng.randint(0, 3)
total = sum(s['samples'] for s in stacks)
selfs = {}
for s in stacks:
    selfs[s['frames'][-1]] = selfs.get(s['frames'][-1], 0) + s['samples']
funcs = [{'id': i, 'name': 'f%d' % i, 'calls': 1000 + i,
          'self_samples': selfs.get(i, 0), 'total_samples': 0,
          'alloc_calls': 0, 'alloc_bytes': 0} for i in range(1, nf + 1)]
json.dump({'format': 'meter-profile', 'version': 1, 'command': 'big',
           'backend': 'kernel', 'pid': 1, 'uid': 0, 'cookie': 1,
           'parent_cookie': 0, 'exited': True, 'runs': 1,
           'period_ns': 1000000, 'start_ns': 0, 'end_ns': total * 1000000,
           'samples': total, 'no_current': 0, 'invalid': 0, 'lost': 0,
           'truncated': 0, 'call_cost_ps': 0, 'functions': funcs,
           'stacks': stacks,
           'threads': [{'tid': t, 'samples': sum(s['samples'] for s in stacks
                                                 if s['tid'] == t),
                        'exited': True} for t in range(100, 104)]},
          open(path, 'w'))
PY
"$STAT" -i "$OUT/big.json" -f html -o "$OUT/big.html"
size=$(stat -c %s "$OUT/big.html")
loads=() searches=() threads=()
for rep in 1 2 3; do
	line=$(python3 "$ROOT/selftests/host/html_check.py" --bench "$OUT/big.html")
	set -- $line
	loads+=("$2") searches+=("$4") boxes=$6 threads+=("$8")
done
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
printf '%-44s %s\n' "HTML report, $STACKS distinct stacks" "$size bytes, $boxes boxes drawn"
printf '%-44s %s s (runs: %s)\n' "  open until interactive, median of 3" "$(median "${loads[@]}")" "${loads[*]}"
printf '%-44s %s s (runs: %s)\n' "  one search over every box, median of 3" "$(median "${searches[@]}")" "${searches[*]}"
printf '%-44s %s s (runs: %s)\n' "  one thread selected, median of 3" "$(median "${threads[@]}")" "${threads[*]}"
printf '{"html_report": {"stacks": %d, "bytes": %d, "boxes": %d, "open_s": %s, "search_s": %s, "thread_s": %s}}\n' \
	"$STACKS" "$size" "$boxes" "$(median "${loads[@]}")" "$(median "${searches[@]}")" "$(median "${threads[@]}")"
