# SPDX-License-Identifier: MIT
#
# The TAP helpers of every shell test (selftests/host/*.sh,
# selftests/vm/*.sh), and what the tools' tests share; sourced as
# "$ROOT/selftests/tools_lib.sh" (in the VM $ROOT is $METER_ROOT, the
# repository's own path).

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { # description, then a command
	local d=$1; shift
	if "$@"; then ok "$d"; else nok "$d"; return 1; fi
}
diag() { sed 's/^/# /' "$@"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP${2:+ $2}"; } # description[, reason]

# An interpreter under meter-run, its profile as JSON in OUT (the
# interpreters' tests: $RUN, $BACKEND, $tmp; the program's output in
# $tmp/stdout and $tmp/stderr).
run_json() { # OUT, then the command line
	local out=$1
	shift
	METER_QUIET=1 "$RUN" -b "$BACKEND" -f json -o "$out" -- "$@" \
		> "$tmp/stdout" 2> "$tmp/stderr"
}
# Each NAME's exact call count in a JSON profile, as py_profile.py ($Q)
# reads it.
want_calls() { # profile, then NAME=COUNT...
	local prof=$1 kv got
	shift
	for kv; do
		got=$($Q calls "$prof" "${kv%=*}")
		if [ "$got" != "${kv##*=}" ]; then
			echo "# ${kv%=*}: $got calls, want ${kv##*=}"
			return 1
		fi
	done
}

# Debian's go tool pprof, with its caches in the test's $tmp.
go_pprof() {
	HOME=${HOME:-$tmp} GOCACHE=$tmp/gocache GOPATH=$tmp/gopath \
		go tool pprof "$@"
}

# The flat profile's rows: "%time cumulative self [calls ms ms] name".
flat_rows() { # report -> the flat profile's rows
	awk '/^ *time +seconds/ { on = 1; next }
	     on && NF == 0 { exit }
	     on { print }' "$1"
}
has_all() { # report, then function names that must all be rows
	local file=$1 x
	shift
	for x; do
		flat_rows "$file" | awk -v f="$x" '$NF == f { h = 1 } END { exit !h }' || return 1
	done
}
