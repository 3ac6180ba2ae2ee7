#!/bin/bash
# SPDX-License-Identifier: MIT
#
# meter-stat diff: on the fixtures (exact figures; a late sampler's
# weighted ticks widen the band), on real runs of the example split (two
# runs of one build show no change beyond the noise; the build whose
# light() does four times the work shows light's share up and heavy's
# down, calls unchanged), in text, JSON and HTML; and
# `go tool pprof -diff_base` on meter's pprof files of those runs.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
STAT=$ROOT/build/tools/meter-stat
RUN=$ROOT/build/tools/meter-run
DATA=$ROOT/selftests/host/data
SPLIT=$ROOT/build/examples/split
SPLIT8=$ROOT/build/selftests/split_light8

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_diff.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "1..23"

# --- fixtures -------------------------------------------------------------

"$STAT" diff "$DATA/appel.json" "$DATA/appel.json" > "$tmp/self" 2>&1
check "a profile against itself: nothing changed" \
	bash -c "grep -q '^0 functions changed beyond the noise, 4 within it' '$tmp/self' &&
		 ! grep -q '^\*' '$tmp/self'" || diag "$tmp/self"

# one name, three records (a static inline function of a header, one
# record per translation unit): they pair up in id order, not at random
cat > "$tmp/dup.json" <<'JSON'
{
  "format": "meter-profile", "version": 1, "command": "dup",
  "backend": "signal", "pid": 7, "uid": 0, "cookie": 9, "parent_cookie": 0,
  "exited": true, "runs": 1, "period_ns": 1000000, "start_ns": 1,
  "end_ns": 2, "samples": 1000, "no_current": 0, "invalid": 0, "lost": 0,
  "truncated": 0, "call_cost_ps": 0,
  "functions": [
    {"id": 1, "name": "main", "calls": 1, "self_samples": 100, "total_samples": 1000, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 2, "name": "dup", "calls": 5, "self_samples": 0, "total_samples": 0, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 3, "name": "dup", "calls": 90000, "self_samples": 900, "total_samples": 900, "alloc_calls": 0, "alloc_bytes": 0},
    {"id": 4, "name": "dup", "calls": 0, "self_samples": 0, "total_samples": 0, "alloc_calls": 0, "alloc_bytes": 0}
  ],
  "stacks": [
    {"frames": [1], "samples": 100, "truncated": false},
    {"frames": [1, 3], "samples": 900, "truncated": false}
  ],
  "threads": [{"tid": 7, "samples": 1000, "exited": true}]
}
JSON
"$STAT" diff "$tmp/dup.json" "$tmp/dup.json" > "$tmp/dup" 2>&1
check "records of one name pair up in id order: a profile with three 'dup' against itself changes nothing" \
	bash -c "grep -q '^0 functions changed beyond the noise' '$tmp/dup' &&
		 ! grep -q '^\*' '$tmp/dup' && grep -Eq ' 90000 +90000 +\+0  dup$' '$tmp/dup'" ||
	diag "$tmp/dup"

"$STAT" diff "$DATA/appel.json" "$DATA/appel-renumbered.json" > "$tmp/ren" 2>&1
check "functions matched by name across renumbered ids; h is new only, +7 calls" \
	grep -Eq '^\* +0\.00 +4\.55 +\+4\.55 .* 0 +7 +\+7  h  \(new only\)$' "$tmp/ren" || diag "$tmp/ren"
check "8 shares compared: the band is 3.58 standard errors" \
	grep -q '(3\.58 sigma of the ticks' "$tmp/ren"
check "is_prime 95.24 -> 90.91 %: -4.33 points, beyond its band of 3.90" \
	grep -Eq '^\* +95\.24 +90\.91 +-4\.33 +3\.90 .* 200 +200 +\+0  is_prime$' "$tmp/ren"
check "f's total moved 3.98 points, inside its band of 5.41: not marked" \
	grep -Eq '^  +1\.90 +1\.82 +-0\.09 +2\.09 +87\.62 +83\.64 +-3\.98 +5\.41 ' "$tmp/ren"
check "rows sorted: the real changes first" \
	awk '/^\*/ { if (plain) bad = 1; real++ } /^   +[0-9]/ { plain++ }
	     END { exit bad || real != 2 || plain != 3 }' "$tmp/ren"

"$STAT" diff -f json "$DATA/appel.json" "$DATA/appel-renumbered.json" > "$tmp/ren.json"
check "JSON: the band is the sigmas that keep 0.27 % over the shares compared, of both sample counts, for every function" \
	python3 - "$tmp/ren.json" "$DATA/appel.json" "$DATA/appel-renumbered.json" <<'EOF'
import json, math, sys
from statistics import NormalDist
d = json.load(open(sys.argv[1]))
b, n = (json.load(open(p)) for p in sys.argv[2:4])
assert d['format'] == 'meter-diff' and d['changed'] == 2
nb, nn = b['samples'], n['samples']
# no ticks in the fixtures: every sample its own draw
assert d['base']['weight'] == 1 and d['new']['weight'] == 1, d
sb = {f['name']: f['self_samples'] for f in b['functions']}
sn = {f['name']: f['self_samples'] for f in n['functions']}
tb = {f['name']: f['total_samples'] for f in b['functions']}
tn = {f['name']: f['total_samples'] for f in n['functions']}
# a self with samples is one share; a total too, unless it is the self
m = 0
for name in set(sb) | set(sn):
    self = sb.get(name, 0) or sn.get(name, 0)
    total = tb.get(name, 0) or tn.get(name, 0)
    same = tb.get(name, 0) == sb.get(name, 0) and tn.get(name, 0) == sn.get(name, 0)
    m += bool(self) + bool(total and not (self and same))
each = 1 - (1 - 0.0027) ** (1 / m)
sigmas = NormalDist().inv_cdf(1 - each / 2)
assert d['shares_compared'] == m == 8, (d['shares_compared'], m)
assert abs(d['sigmas'] - sigmas) < 1e-3, (d['sigmas'], sigmas)
for f in d['functions']:
    pb, pn = sb.get(f['name'], 0) / nb, sn.get(f['name'], 0) / nn
    band = sigmas * math.sqrt(pb * (1 - pb) / nb + pn * (1 - pn) / nn)
    s = f['self']
    assert abs(s['band_pct'] - 100 * band) < 1e-3, (f, band)
    assert abs(s['change_pct'] - 100 * (pn - pb)) < 1e-3, f
    assert f['real'] == (abs(s['change_pct']) > s['band_pct'] or
                         abs(f['total']['change_pct']) > f['total']['band_pct'])
    assert f['presence'] == ('both' if f['name'] in sb and f['name'] in sn
                             else 'new' if f['name'] in sn else 'gone')
EOF

# A sampler that ran late: a quarter as many ticks as samples, each tick
# weighing four periods.  The shares are as before, their noise that of a
# quarter of the draws: the band doubles and is_prime's -4.33 is inside it.
# (The 8 shares compared are as before, and so are the 3.58 sigmas.)
for f in appel appel-renumbered; do
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); p["ticks"] = p["samples"] // 4
json.dump(p, open(sys.argv[2], "w"))' "$DATA/$f.json" "$tmp/$f-late.json"
done
"$STAT" diff "$tmp/appel-late.json" "$tmp/appel-renumbered-late.json" > "$tmp/late" 2>&1
check "ticks a quarter of the samples: is_prime's band doubles to 7.80, -4.33 is inside it" \
	grep -Eq '^  +95\.24 +90\.91 +-4\.33 +7\.80 .* 200 +200 +\+0  is_prime$' "$tmp/late" ||
	diag "$tmp/late"

# Two hundred functions of 500 samples in 100000, of which two moved 110
# samples each way: 3.3 and 3.7 standard errors of their differences.
# One share alone at 3 sigma would be marked; among 200 compared, the band
# is 4.35.
python3 - "$tmp" <<'EOF'
import json, sys
def prof(moved):
    fs, st = [], []
    for i in range(200):
        s = 500 + (moved if i == 0 else -moved if i == 1 else 0)
        fs.append({"id": i + 1, "name": "f%03d" % i, "calls": 10,
                   "self_samples": s, "total_samples": s,
                   "alloc_calls": 0, "alloc_bytes": 0})
        st.append({"frames": [i + 1], "samples": s, "truncated": False})
    return {"format": "meter-profile", "version": 1, "command": "many",
            "backend": "signal", "pid": 7, "uid": 0, "cookie": 9,
            "parent_cookie": 0, "exited": True, "runs": 1,
            "period_ns": 1000000, "start_ns": 1, "end_ns": 2,
            "samples": 100000, "no_current": 0, "invalid": 0, "lost": 0,
            "truncated": 0, "call_cost_ps": 0, "functions": fs,
            "stacks": st, "threads": [{"tid": 7, "samples": 100000,
                                       "exited": True}]}
json.dump(prof(0), open(sys.argv[1] + "/many-a.json", "w"))
json.dump(prof(110), open(sys.argv[1] + "/many-b.json", "w"))
EOF
"$STAT" diff -f json "$tmp/many-a.json" "$tmp/many-b.json" > "$tmp/many" 2>&1
check "200 shares compared: the band is 4.35 standard errors" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["shares_compared"] == 200 and abs(d["sigmas"] - 4.3515) < 1e-3, d["sigmas"]' \
	"$tmp/many" || diag "$tmp/many"
check "... and two functions moved 3.3 and 3.7 standard errors are within it: nothing marked" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); f = {r["name"]: r for r in d["functions"]}
s = f["f000"]["self"]
assert d["changed"] == 0 and not f["f000"]["real"] and not f["f001"]["real"], d["changed"]
assert 3.2 < s["change_pct"] / s["band_pct"] * d["sigmas"] < 3.4, s' "$tmp/many"

"$STAT" diff "$DATA/appel.json" "$DATA/wall.json" > "$tmp/mix" 2>&1
check "CPU against wall clock: refused with a reason (status 1)" \
	bash -c "test $? = 1 && grep -q 'do not compare' '$tmp/mix'"
"$STAT" diff "$DATA/appel.json" > /dev/null 2>&1
check "one file: usage error (status 2)" test $? = 2
"$STAT" diff -f folded "$DATA/appel.json" "$DATA/appel.json" > /dev/null 2>&1
check "a format diff does not write: usage error (status 2)" test $? = 2
"$STAT" diff "$DATA/appel.json" "$tmp/none.json" > "$tmp/miss" 2>&1
check "a missing file: status 1, named" \
	bash -c "test $? = 1 && grep -q 'none.json' '$tmp/miss'"

# --- real runs: the same build twice, then the changed build ----------------

# The work is sized on the ticks it gets, not on the units: the signal
# backend ticks at the host's scheduler tick, 1000 or 250 Hz.  At 1000
# ticks the band of heavy's change (50 -> 31 %) is 6.5 points, and the
# change 18.75: 8.6 sigma.
want=1000
units=8000
"$RUN" -o "$tmp/size.json" -f json -- "$SPLIT" $units > /dev/null 2>&1
got=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); print(p.get("ticks") or p["samples"])' \
	"$tmp/size.json" 2> /dev/null)
if [ "${got:-0}" -gt 0 ] && [ "$got" -lt $want ]; then
	units=$(( (units * want / got + 9) / 10 * 10 ))
fi
echo "# split: $units units ($got ticks from 8000)"
for r in a b; do
	"$RUN" -o "$tmp/split-$r.json" -f json -- "$SPLIT" $units > /dev/null 2>&1
	"$STAT" -i "$tmp/split-$r.json" -f pprof -o "$tmp/split-$r.pb.gz"
done
"$RUN" -o "$tmp/light8.json" -f json -- "$SPLIT8" $units > /dev/null 2>&1
"$STAT" -i "$tmp/light8.json" -f pprof -o "$tmp/light8.pb.gz"

"$STAT" diff "$tmp/split-a.json" "$tmp/split-b.json" > "$tmp/same" 2>&1
check "two runs of split: no change beyond the noise" \
	grep -q '^0 functions changed beyond the noise' "$tmp/same" || diag "$tmp/same"
c=$((units / 10))
check "two runs of split: calls equal (heavy, medium, light $c each)" \
	bash -c "[ \$(grep -Ec ' $c +$c +\+0  (heavy|medium|light)$' '$tmp/same') = 3 ]"

"$STAT" diff "$tmp/split-a.json" "$tmp/light8.json" > "$tmp/chg" 2>&1
check "light doing 8 units, not 2: light's self share up beyond the noise" \
	awk '$1 == "*" && $NF == "light" && $4 > $5 && $4 > 0 { f = 1 } END { exit !f }' \
	"$tmp/chg" || diag "$tmp/chg"
check "... heavy's down beyond the noise, and calls unchanged" \
	awk '$1 == "*" && $NF == "heavy" && $4 < -$5 && $(NF - 1) == "+0" { f = 1 }
	     END { exit !f }' "$tmp/chg"
check "... light listed first (the largest real change)" \
	awk '/^[* ] +[0-9]/ { print $NF; exit }' "$tmp/chg" | grep -qx light

"$STAT" diff -f html -o "$tmp/chg.html" "$tmp/split-a.json" "$tmp/light8.json"
check "HTML: the table marks light as changed, upward" \
	grep -Eq '<tr data-presence="both"><td>light</td><td>yes</td><td>[0-9.]+</td><td>[0-9.]+</td><td class="up">\+' "$tmp/chg.html"
sig=$("$STAT" diff -f json "$tmp/split-a.json" "$tmp/light8.json" |
	python3 -c 'import json, sys; print("%.4f" % json.load(sys.stdin)["sigmas"])')
check "HTML: both profiles' stacks and weights, and the table's sigmas ($sig), for the differential flame graph" \
	bash -c "grep -q '\"kind\":\"diff\",\"period_ns\":[0-9]*,\"sigmas\":$sig,\"weight\":[0-9.]*,' '$tmp/chg.html' &&
		 grep -q '\"base\":{\"weight\":[0-9.]*,\"funcs\":\[' '$tmp/chg.html'"

# --- pprof -diff_base ---------------------------------------------------------

if command -v go > /dev/null 2>&1; then
	go_pprof -sample_index=samples -top \
		-diff_base "$tmp/split-a.pb.gz" "$tmp/light8.pb.gz" \
		> "$tmp/pdiff" 2> "$tmp/pdiff.err"
	check "go tool pprof -diff_base: light's samples grew" \
		awk '$NF == "light" && $1 > 0 { f = 1 } END { exit !f }' "$tmp/pdiff" ||
		{ diag "$tmp/pdiff"; diag "$tmp/pdiff.err"; }
	go_pprof -sample_index=samples -top \
		-diff_base "$tmp/split-a.pb.gz" "$tmp/split-a.pb.gz" \
		> "$tmp/pself" 2> "$tmp/pself.err"
	check "go tool pprof -diff_base of a profile against itself: all of it cancels" \
		bash -c "grep -Eq '^Showing nodes accounting for 0, 0% of [1-9][0-9]* total' '$tmp/pself' &&
			 ! grep -Eq ' (main|heavy|medium|light)$' '$tmp/pself'" ||
		{ diag "$tmp/pself"; diag "$tmp/pself.err"; }
else
	skip "go tool pprof -diff_base: light's samples grew" "go is not installed"
	skip "go tool pprof -diff_base against itself" "go is not installed"
fi

exit $((fails > 0))
