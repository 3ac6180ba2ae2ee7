#!/bin/bash
# SPDX-License-Identifier: MIT
#
# VM tests of meter-run and meter-stat with meter.ko loaded: meter-run on a
# real instrumented program (Appel's f/g/is_prime) with the kernel backend,
# then meter-stat listing, showing, resetting and deleting a finished
# session, and watching and refusing to delete a running one.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
STAT=$ROOT/build/tools/meter-stat
APPEL=$ROOT/build/selftests/tools_appel
export METER_QUIET=1
ROUNDS=${TOOLS_APPEL_ROUNDS:-300}

# Until a running session of COMMAND (and of PID, if given) has samples:
# a slow kernel, e.g. the debug one, may take longer than any fixed wait.
sampled() {
	local i

	for i in $(seq 1 120); do
		"$STAT" | awk -v c="$1" -v p="${2:-}" '$3 == c && $4 == "running" &&
			(p == "" || $2 == p) && $6 > 0 { f = 1 } END { exit !f }' &&
			return 0
		sleep 0.5
	done
	return 1
}

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tools_kernel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

echo "1..35"

if ! grep -q '^meter ' /proc/modules; then
	echo "# meter.ko is not loaded"
	exit 4
fi

# --- meter-run with the kernel backend -----------------------------------

"$RUN" --backend kernel -- "$APPEL" "$ROUNDS" > run.out 2> run.err
rc=$?
check "meter-run --backend kernel: exits with the program's status (0)" test $rc -eq 0 ||
	{ diag run.out; diag run.err; }
check "meter-run --backend kernel: the report says backend kernel" \
	grep -q 'backend kernel' run.out
flat_rows run.out > rows
check "meter-run --backend kernel: exact call counts (is_prime $((2 * ROUNDS)), f $ROUNDS, g $ROUNDS, main 1)" \
	awk -v r="$ROUNDS" '$NF == "is_prime" && $4 == 2 * r { a++ } $NF == "f" && $4 == r { a++ }
	     $NF == "g" && $4 == r { a++ } $NF == "main" && $4 == 1 { a++ }
	     END { exit a != 4 }' rows || { diag run.out; diag run.err; }
# of the samples charged to a function (a slow kernel stretches start-up
# and exit, which have none)
check "meter-run --backend kernel: is_prime has most of the samples charged to a function (> 80 %)" \
	awk 'NR == 1 { top = $NF; pct = $1 } $NF == "function>" { none = $1 }
	     END { exit !(top == "is_prime" && pct > 0.8 * (100 - none)) }' rows
awk '/^ -+$/ { blk = ""; next } { blk = blk $0 "\n" }
     /^ \[[0-9]+\].* is_prime$/ { print blk; exit }' run.out > isprime
check "meter-run --backend kernel: call graph charges is_prime to f (>= 95%), not half by calls" \
	awk '$1 == "f" && $2 ~ /^\[/ { sub(/%/, "", $3); found = 1; good = ($3 + 0 >= 95) }
	     END { exit !(found && good) }' isprime || diag isprime
pid=$(sed -n 's/^meter profile of .*(pid \([0-9]*\)).*/\1/p' run.out)
"$STAT" > list.out 2>&1
check "meter-run: deletes the kernel session it read (pid $pid not listed)" \
	bash -c "[ -n '$pid' ] && ! awk '{ print \$2 }' list.out | grep -qx '$pid'" || diag list.out

"$RUN" --backend kernel -F 2000 -f flat -- "$APPEL" 100 > rate.out 2>&1
# (late ticks, as under TCG, add the rate they came at)
check "meter-run -F 2000: the report states a 500 us period" \
	grep -Eq 'at a period of 500 us (\(2000 Hz\)|from [0-9]+ ticks \(2000 Hz asked, [0-9]+ Hz delivered\))' rate.out ||
	diag rate.out

"$RUN" --backend kernel -f json -o run.json -- "$APPEL" 100 > /dev/null 2>&1
check "meter-run --backend kernel -f json: meter-stat -i reads it back, backend kernel" \
	bash -c "grep -q '\"backend\": \"kernel\"' run.json && '$STAT' -i run.json -f json | cmp -s - run.json"

"$RUN" --backend kernel --periodic 0.5 -f flat -- "$APPEL" $((ROUNDS * 20)) > periodic.out 2> periodic.err
check "meter-run --periodic 0.5: live reports on stderr while the program runs" \
	grep -q '=== meter-run: live report at' periodic.err || diag periodic.err

"$RUN" --backend kernel -- sh -c 'exit 5' > /dev/null 2> plain.err
check "meter-run --backend kernel on a program without libmeter: its status (5) and the explanation" \
	bash -c "[ $? -eq 5 ] && grep -q 'not built with libmeter' plain.err && grep -q 'backend kernel' plain.err"

# PROG (a shell) not profiled, its children profiled: said without
# contradiction, and no "not built with libmeter"
"$RUN" --backend kernel -- sh -c "'$APPEL' 100 > /dev/null; true" > /dev/null 2> shell.err
check "meter-run --backend kernel: an unprofiled shell with a profiled child points to --follow-fork only" \
	bash -c "grep -q 'made no profiled call itself, but 1 process it forked did: --follow-fork merges them' shell.err &&
		 ! grep -q 'not built with libmeter' shell.err" || diag shell.err

"$RUN" --backend kernel --follow-fork -f flat -- "$APPEL" 100 fork > fork.out 2> fork.err
flat_rows fork.out > fork.rows
check "meter-run --follow-fork (kernel): the forked child's session is merged (child_rounds; f called 200 times)" \
	awk '$NF == "child_rounds" && $4 == 1 { a++ } $NF == "f" && $4 == 200 { a++ }
	     END { exit a != 2 }' fork.rows || { diag fork.out; diag fork.err; }
"$RUN" --backend kernel -f flat -- "$APPEL" 100 fork > nofork.out 2> nofork.err
flat_rows nofork.out > nofork.rows
check "meter-run without --follow-fork (kernel): only PROG's session, and it says the child's was left" \
	bash -c "awk '\$NF == \"f\" && \$4 == 100 { a++ } \$NF == \"child_rounds\" && NF > 4 { b++ } END { exit !(a == 1 && !b) }' nofork.rows &&
		 grep -q '1 session of forked children left in the kernel' nofork.err" ||
	{ diag nofork.out; diag nofork.err; }
for c in $("$STAT" | awk '$3 == "tools_appel" && $4 == "exited" { print $1 }'); do
	"$STAT" delete "$c" > /dev/null
done

"$RUN" --backend kernel -f flat -- "$APPEL" $((ROUNDS * 40)) > term.out 2> term.err &
runpid=$!
# the signal goes once PROG's session is in the kernel and has samples
sampled tools_appel
kill -TERM $runpid
wait $runpid
rc=$?
check "meter-run: SIGTERM ends PROG (status 143) and the kernel session is still reported" \
	bash -c "[ $rc -eq 143 ] && grep -q 'backend kernel' term.out && grep -q 'is_prime' term.out" ||
	{ diag term.out; diag term.err; }

# --- meter-stat on a finished session ------------------------------------

METER_BACKEND=kernel "$APPEL" 100 > /dev/null &
bgpid=$!
wait $bgpid
# The module folds the last thread in from a workqueue: give it a moment.
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$STAT" > list.out 2>&1
	awk -v p=$bgpid '$2 == p && $4 == "exited"' list.out | grep -q . && break
	sleep 0.2
done
check "meter-stat: lists the finished session (pid, command, state exited)" \
	awk -v p=$bgpid '$2 == p && $3 == "tools_appel" && $4 == "exited" { f = 1 } END { exit !f }' list.out ||
	diag list.out
check "meter-stat: the list has a header with PID, COMMAND, STATE, THREADS, SAMPLES, RATE, AGE" \
	grep -Eq '^COOKIE +PID +COMMAND +STATE +THREADS +SAMPLES +RATE +AGE$' list.out
"$STAT" show $bgpid > show.out 2> show.err
check "meter-stat show PID: a flat profile with the functions" \
	has_all show.out f g is_prime main ||
	{ diag show.out; diag show.err; }
"$STAT" show $bgpid --format json > show.json
check "meter-stat show --format json: read back by meter-stat -i byte-identically" \
	bash -c "'$STAT' -i show.json -f json | cmp -s - show.json"
cookie=$(awk -v p=$bgpid '$2 == p { print $1; exit }' list.out)
check "meter-stat show COOKIE: the same session" \
	bash -c "'$STAT' show $cookie -f json | cmp -s - show.json"
"$STAT" reset $bgpid > reset.out 2>&1
check "meter-stat reset PID: succeeds" test $? -eq 0 || diag reset.out
"$STAT" show $bgpid -f json > after.json 2>&1
check "meter-stat reset: the session's samples are zero" \
	grep -q '"samples": 0,' after.json || diag after.json
"$STAT" delete $bgpid > delete.out 2>&1
check "meter-stat delete PID: succeeds" test $? -eq 0 || diag delete.out
"$STAT" show $bgpid > /dev/null 2> gone.err
check "meter-stat show after delete: status 1 and a message" \
	bash -c "[ $? -eq 1 ] && [ -s gone.err ]"

# --- meter-stat on a running session -----------------------------------------

METER_BACKEND=kernel "$APPEL" $((ROUNDS * 20)) > /dev/null &
bgpid=$!
sampled tools_appel $bgpid
# The watch starts while the program has most of its run ahead of it: on
# the debug kernel the list and delete below took long enough for it to
# find the session already exited, one frame.
timeout 120 "$STAT" watch $bgpid --interval 0.5 -f flat > watch.out 2> watch.err &
watchpid=$!
"$STAT" > live.out 2>&1
check "meter-stat: lists a running session as running" \
	awk -v p=$bgpid '$2 == p && $4 == "running" { f = 1 } END { exit !f }' live.out || diag live.out
"$STAT" delete $bgpid > /dev/null 2> busy.err
check "meter-stat delete of a running session: status 1, says why" \
	bash -c "[ $? -eq 1 ] && [ -s busy.err ]" || diag busy.err
wait $watchpid
check "meter-stat watch: reports until the session exits, then stops" \
	bash -c "[ \$(grep -c '^meter-stat: session' watch.out) -ge 2 ] &&
		 tail -n 30 watch.out | grep -q 'exited'" ||
	{ tail -n 20 watch.out > watch.tail; diag watch.tail; diag watch.err; }
wait $bgpid
"$STAT" delete $bgpid > /dev/null 2>&1

# --- the top view: the last interval beside the totals, live call counts ------

METER_BACKEND=kernel "$APPEL" $((ROUNDS * 20)) > /dev/null &
bgpid=$!
sampled tools_appel $bgpid
timeout 120 "$STAT" watch $bgpid --interval 0.5 --threads > top.out 2> top.err
wait $bgpid
"$STAT" delete $bgpid > /dev/null 2>&1
# frames: "meter-stat: session" starts one; rows: %self samples calls (the
# interval), %self samples calls (the totals), name; then --threads' rows:
# % samples (the interval), % samples (the totals), tid, state, name
top_rows() {
	awk '/^meter-stat: session/ { frame++; run = ($0 ~ /running/); th = 0 }
	     /^Threads:/ { th = 1 }
	     th == '"$1"' && NF >= 6 && $1 ~ /^[0-9.]+$/ {
		if (th) print frame, $2, $4, $5; else print frame, run, $2, $3, $5, $6, $7 }' top.out
}
top_rows 0 > top.rows
top_rows 1 > top.threads
check "meter-stat watch (piped): plain lines, no escape sequences, 3 frames or more" \
	bash -c "! grep -q \$'\\033' top.out && [ \$(grep -c '^meter-stat: session' top.out) -ge 3 ]" ||
	{ head -n 20 top.out > top.head; diag top.head; diag top.err; }
check "meter-stat watch: a running program's call counts are live (is_prime > 0 before it exits)" \
	awk '$2 == 1 && $7 == "is_prime" && $6 > 0 { f = 1 } END { exit !f }' top.rows || diag top.rows
check "meter-stat watch: each interval's calls and samples are the totals' change since the last frame" \
	awk '{ k = $7 } (k in c) && $1 == f[k] + 1 { n++; if ($4 != $6 - c[k] || $3 != $5 - s[k]) bad++ }
	     { f[k] = $1; c[k] = $6; s[k] = $5 } END { exit !(n >= 4 && !bad) }' top.rows || diag top.rows
check "meter-stat watch (piped): each row had samples or calls in its interval" \
	awk '{ n++ } $3 == 0 && $4 == 0 { bad++ } END { exit !(n && !bad) }' top.rows || diag top.rows
check "meter-stat watch --threads: the program's thread in every frame, its interval samples the change of its total" \
	awk -v tid=$bgpid -v frames=$(grep -c '^meter-stat: session' top.out) \
	    '$4 == tid { n++; if ($1 == last + 1 && $2 != $3 - total) bad++; last = $1; total = $3 }
	     END { exit !(n == frames && n >= 3 && !bad) }' top.threads || diag top.threads
check "meter-stat watch: rows sorted by the last interval's self samples" \
	awk '$1 == fr && $3 > last { bad++ } { fr = $1; last = $3 } END { exit bad > 0 }' top.rows || diag top.rows
check "meter-stat show -f top: the whole run as the interval (interval = total)" \
	bash -c "'$STAT' -i '$tmp/run.json' -f top 2>&1 | awk 'NF == 7 && \$1 ~ /^[0-9.]+\$/ { n++; if (\$2 != \$5 || \$3 != \$6) bad++ } END { exit !(n >= 3 && !bad) }'"

# --- the wall clock ---------------------------------------------------------

WORK=$ROOT/build/selftests/host/lib_workload_manual
"$RUN" --clock wall -f flat -- "$WORK" wall 300 > wall.out 2> wall.err
check "meter-run --clock wall: the report is of wall-clock time, split on and off the CPU" \
	bash -c "grep -q 'of wall-clock time' wall.out && grep -q '^wall clock: .* blocked or sleeping' wall.out" ||
	{ diag wall.out; diag wall.err; }
"$RUN" --clock wall -f folded -- "$WORK" wall 300 > wall.folded 2> wall.err
check "meter-run --clock wall -f folded: main;wait_io;[blocked] holds its 300 ms wait (>= 270 samples)" \
	awk '$1 == "main;wait_io;[blocked]" && $2 >= 270 { f = 1 } END { exit !f }' wall.folded ||
	{ diag wall.folded; diag wall.err; }

echo "# $fails failed"
[ "$fails" -eq 0 ]
