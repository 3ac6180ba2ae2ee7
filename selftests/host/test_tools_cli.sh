#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Host tests of meter-run and meter-stat as commands: meter-run on a real
# instrumented program with the signal backend (no kernel module on the
# host), exit statuses, the message for a program without libmeter, -o,
# --repeat, --follow-fork, --alloc, bad options (status 2), malformed JSON (status 1,
# one line, no crash) and merge.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
STAT=$ROOT/build/tools/meter-stat
APPEL=$ROOT/build/selftests/tools_appel
APPEL_AUTO=$ROOT/build/selftests/tools_appel_auto
DATA=$ROOT/selftests/host/data
export METER_QUIET=1

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

echo "1..38"

# --- meter-run on a real program (signal backend) ------------------------

"$RUN" --backend signal -- "$APPEL" 3000 > run.out 2> run.err
rc=$?
check "meter-run: exits with the program's status (0)" test $rc -eq 0
check "meter-run: the program's own output comes first, on stdout" \
	grep -qx 'tools_appel: 3000 rounds, sink 6000' run.out
check "meter-run: says which backend ran (signal)" \
	grep -q 'backend signal' run.out
flat_rows run.out > rows
check "meter-run: flat profile has the exact call counts (is_prime 6000, f 3000, g 3000, main 1)" \
	awk '$NF == "is_prime" && $4 == 6000 { a++ } $NF == "f" && $4 == 3000 { a++ }
	     $NF == "g" && $4 == 3000 { a++ } $NF == "main" && $4 == 1 { a++ }
	     END { exit a != 4 }' rows || { diag run.out; diag run.err; }
check "meter-run: is_prime has most of the samples" \
	awk 'NR == 1 { exit !($NF == "is_prime" && $1 > 80) }' rows
awk '/^ -+$/ { blk = ""; next } { blk = blk $0 "\n" }
     /^ \[[0-9]+\].* is_prime$/ { print blk; exit }' run.out > isprime
check "meter-run: call graph charges is_prime's time to f, whose calls are expensive (>= 95%)" \
	awk '$1 == "f" && $2 ~ /^\[/ { sub(/%/, "", $3); found = 1; good = ($3 + 0 >= 95) }
	     END { exit !(found && good) }' isprime ||
	diag isprime
check "meter-run: no progress line when stderr is not a terminal" \
	bash -c "! grep -q \$'\\r' run.err"

# A terminal (script(1) gives one): the progress line, for runs over 1 s.
if command -v script > /dev/null 2>&1; then
	script -qec "'$RUN' --backend signal -f flat -- '$APPEL' 12000 > /dev/null" tty.log > /dev/null 2>&1
	check "meter-run: on a terminal, a progress line (elapsed seconds) for a long run" \
		grep -aq $'\rmeter-run: [0-9.]* s' tty.log || diag tty.log
else
	skip "meter-run: on a terminal, a progress line" "script(1) is not installed"
fi

"$RUN" --backend signal -- "$APPEL_AUTO" 1000 > auto.out 2>&1
check "meter-run: -finstrument-functions program: names from the ELF symbols" \
	has_all auto.out f g is_prime main ||
	diag auto.out

"$RUN" --backend signal -o report.txt -- "$APPEL" 500 > prog.out 2> /dev/null
check "meter-run -o: the report goes to the file" grep -q '^Flat profile:' report.txt
check "meter-run -o: the program's output stays out of the report file" \
	bash -c "! grep -q 'tools_appel:' report.txt && grep -q 'tools_appel: 500 rounds' prog.out"

"$RUN" --backend signal --repeat 3 -f json -o rep.json -- "$APPEL" 200 > /dev/null 2>&1
check "meter-run --repeat 3: one profile of 3 runs, call counts tripled (main 3, is_prime 1200)" \
	bash -c "grep -q '\"runs\": 3,' rep.json &&
		 grep -q '\"name\": \"main\", \"calls\": 3,' rep.json &&
		 grep -q '\"name\": \"is_prime\", \"calls\": 1200,' rep.json"
"$STAT" -i rep.json -f flat > rep.flat 2>&1
check "meter-run --repeat 3 of a one-thread program: the header says 3 threads over 3 runs" \
	grep -q '; 3 threads over 3 runs$' rep.flat || diag rep.flat
check "meter-run --format json: meter-stat -i reads it back" \
	bash -c "'$STAT' -i rep.json -f flat | grep -q is_prime"

"$RUN" --backend signal --follow-fork -f json -o fork.json -- \
	sh -c "'$APPEL' 100 > /dev/null; '$APPEL' 100 > /dev/null; true" > /dev/null 2>&1
check "meter-run --follow-fork: the children's profiles are merged (main called twice)" \
	grep -q '"name": "main", "calls": 2,' fork.json

"$RUN" --backend signal --follow-fork -f flat -- "$APPEL" 100 fork > fork2.out 2> /dev/null
"$RUN" --backend signal -f flat -- "$APPEL" 100 fork > nofork.out 2> nofork.err
check "meter-run --follow-fork: a forked child's profile is merged (child_rounds; f 200 calls); without it, left out and said" \
	bash -c "flat_rows() { awk '/^ *time +seconds/ { on = 1; next } on && NF == 0 { exit } on { print }' \"\$1\"; };
		 flat_rows fork2.out | awk '\$NF == \"child_rounds\" && \$4 == 1 { a++ } \$NF == \"f\" && \$4 == 200 { a++ } END { exit a != 2 }' &&
		 flat_rows nofork.out | awk '\$NF == \"f\" && \$4 == 100 { a++ } \$NF == \"child_rounds\" && NF > 4 { b++ } END { exit !(a == 1 && !b) }' &&
		 grep -q '1 profile of forked children left out' nofork.err" || { diag fork2.out; diag nofork.err; }

"$RUN" --backend signal -f pprof -o run.pb.gz -- "$APPEL" 300 > /dev/null 2>&1
check "meter-run --format pprof: a gzip file" gzip -t run.pb.gz

# --alloc preloads libmeter-alloc.so; without it nothing is counted
WORKLOAD=$ROOT/build/selftests/host/lib_workload_manual
alloc_of() { tr '{' '\n' < "$1" | awk -F'"alloc_calls": ' '/"name": "allocator"/ { split($2, a, ","); print a[1] }'; }
"$RUN" -b off --alloc -f json -o alloc.json -- "$WORKLOAD" alloc 1000 > /dev/null 2>&1
check "meter-run --alloc: 1000 x (malloc, calloc, realloc) are 3000 allocation calls of allocator" \
	test "$(alloc_of alloc.json)" = 3000
"$RUN" -b off -f json -o noalloc.json -- "$WORKLOAD" alloc 1000 > /dev/null 2>&1
check "meter-run without --alloc: no allocation counted" \
	test "$(alloc_of noalloc.json)" = 0
METER_ALLOC_LIB=/nonexistent/libmeter-alloc.so "$RUN" --alloc -- "$WORKLOAD" > /dev/null 2> alloc.err
rc=$?
check "meter-run --alloc without the library: status 2, says where it looked" \
	bash -c "[ $rc -eq 2 ] && grep -q /nonexistent/libmeter-alloc.so alloc.err"


# --- exit statuses and programs without libmeter ------------------------------

"$RUN" -- sh -c 'exit 3' > /dev/null 2> st3.err
check "meter-run: exits with the program's exit status (3)" test $? -eq 3
"$RUN" -- sh -c 'kill -9 $$' > /dev/null 2>&1
check "meter-run: a program killed by signal 9 gives 128+9" test $? -eq 137
"$RUN" --backend signal -- true > /dev/null 2> plain.err
rc=$?
check "meter-run: a program without libmeter: status 1 (it exited 0, but no profile)" test $rc -eq 1
check "meter-run: ... says it was not built with libmeter, and how to build it" \
	bash -c "grep -q 'not built with libmeter' plain.err &&
		 grep -q '#include <meter.h>' plain.err &&
		 grep -q 'METER_FUNCTION' plain.err &&
		 grep -q -- '-finstrument-functions' plain.err" || diag plain.err
check "meter-run: ... names the GCC plugin the guide recommends first" \
	grep -q -- '-fplugin=\$(pkg-config --variable=gccplugin meter)' plain.err
check "meter-run: ... and which backend was used" grep -q 'backend signal' plain.err
check "meter-run: ... and no kernel session, nor an empty reason, with the signal backend" \
	bash -c "! grep -q 'kernel session' plain.err && ! grep -q ': )' plain.err" || diag plain.err

# the notice that samples come at the scheduler tick: once for the tree
# (METER_QUIET would silence it; the warning about short threads, which
# may come or not, also names the scheduler tick)
env -u METER_QUIET "$RUN" --backend signal --follow-fork -f flat -- \
	sh -c "'$APPEL' 100 > /dev/null; '$APPEL' 100 > /dev/null; true" > /dev/null 2> notice.err
check "meter-run --backend signal: two profiled children, the tick notice said once" \
	test "$(grep -c 'samples are limited to the scheduler tick' notice.err)" = 1 ||
	diag notice.err
"$RUN" -- /nonexistent/prog > /dev/null 2> noprog.err
check "meter-run: a program that cannot be run: 127 and a message" \
	bash -c "[ $? -eq 127 ] && grep -q 'cannot run /nonexistent/prog' noprog.err"

# --- bad options ------------------------------------------------------------------

bad_run=0
for args in "--period bogus -- true" "--period 0 -- true" "-F 0 -- true" \
	    "--backend nope -- true" "--format nope -- true" "--order nope -- true" \
	    "--threshold 200 -- true" "--repeat 0 -- true" "--hide-self x -- true" \
	    "--no-such-option -- true" ""; do
	# shellcheck disable=SC2086
	"$RUN" $args > /dev/null 2> bad.err
	rc=$?
	if [ $rc -ne 2 ] || [ "$(wc -l < bad.err)" -gt 2 ] || [ ! -s bad.err ]; then
		bad_run=$((bad_run + 1))
		echo "# meter-run $args: status $rc"; diag bad.err
	fi
done
check "meter-run: each bad option gives a short message and status 2" test $bad_run -eq 0

bad_stat=0
for args in "frobnicate" "show" "show notapid" "reset 1 2" "-i" "--format nope -i x" \
	    "merge" "--interval 1 list"; do
	# shellcheck disable=SC2086
	"$STAT" $args > /dev/null 2> bad.err
	rc=$?
	if [ $rc -ne 2 ] || [ ! -s bad.err ]; then
		bad_stat=$((bad_stat + 1))
		echo "# meter-stat $args: status $rc"; diag bad.err
	fi
done
check "meter-stat: each bad usage gives a message and status 2" test $bad_stat -eq 0

# --- malformed JSON ---------------------------------------------------------------

: > empty.json
head -c 300 "$DATA/appel.json" > truncated.json
head -c 4096 /dev/urandom > garbage.json 2> /dev/null || printf '\001\002\377\376' > garbage.json
printf '[1, 2, 3]\n' > array.json
printf '{"format": "other", "version": 1}\n' > otherfmt.json
sed 's/"frames": \[1, 2, 4\]/"frames": [1, 2, 99]/' "$DATA/appel.json" > badid.json
sed 's/"samples": 1050,/"samples": 99999999999999999999999,/' "$DATA/appel.json" > huge.json
sed 's/"calls": 100,/"calls": -5,/' "$DATA/appel.json" > negative.json
sed 's/"name": "f"/"name": 42/' "$DATA/appel.json" > badname.json
printf '{"format":"meter-profile","version":1,"period_ns":1,"samples":0,"functions":[],"stacks":[]} trailing\n' > trailing.json
bad_json=0
for f in empty truncated garbage array otherfmt badid huge negative badname trailing missing; do
	"$STAT" -i "$f.json" > out.txt 2> err.txt
	rc=$?
	if [ $rc -ne 1 ] || [ "$(wc -l < err.txt)" -ne 1 ] || [ -s out.txt ]; then
		bad_json=$((bad_json + 1))
		echo "# $f.json: status $rc"; diag err.txt
	else
		echo "#   $f.json: $(cat err.txt)"
	fi
done
check "meter-stat -i: 11 malformed files, each status 1 with one line on stderr and nothing on stdout" \
	test $bad_json -eq 0
"$STAT" -i truncated.json 2>&1 | grep -q 'meter-stat: truncated.json: invalid JSON: unexpected end of input'
check "meter-stat -i: the message names the file and what is wrong" test $? -eq 0

# --- merge ---------------------------------------------------------------------------

"$STAT" merge "$DATA/appel.json" "$DATA/appel-renumbered.json" -o merged.json
check "merge: exit 0 and writes JSON" test $? -eq 0 -a -s merged.json
check "merge: counts add up, matched by name across different ids (is_prime 400 calls, 2000 self)" \
	grep -q '"name": "is_prime", "calls": 400, "self_samples": 2000, "total_samples": 2000' merged.json
check "merge: functions only in one profile are kept (h)" \
	grep -q '"name": "h", "calls": 7,' merged.json
check "merge: identical stacks add up (main;f;is_prime 1800) and runs add up (2)" \
	bash -c "'$STAT' -i merged.json -f folded | grep -qx 'main;f;is_prime 1800' &&
		 grep -q '\"runs\": 2,' merged.json"
"$STAT" merge "$DATA/appel.json" garbage.json -o m2.json > /dev/null 2>&1
check "merge: a bad input file fails with status 1" test $? -eq 1

echo "# $fails failed"
[ "$fails" -eq 0 ]
