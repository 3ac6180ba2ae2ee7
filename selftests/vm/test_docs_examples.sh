#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Every runnable example of the documentation runs as documented.
#
# A runnable example is a fenced block opened with ```console in
# Documentation/user-guide.md or README.md.  Its lines starting with "$ "
# are commands (a command ending in "\" goes on to the next line); the
# other lines are the output shown.  A block preceded by a line
#     <!-- not run: REASON -->
# is shown but not run (it compiles, or needs a tool the VM lacks): a SKIP.
# Blocks in ```sh, ```c or plain ``` fences are never run.
#
# Each block is one TAP case.  The blocks of a file run in order, each in a
# fresh bash, in one scratch directory where build/, selftests/, examples/
# and the other top directories of the tree are symlinks, so the paths of
# the guide work and files written by one block (appel.json) are there for
# the next.  A case passes when
#   - every command exits 0, except a command followed by `echo $?` whose
#     shown output is a number N: that command must exit N;
#   - every shown output line without a digit in it (headers, messages,
#     JSON keys; "..." excepted) appears in what the commands printed, so
#     that a changed report or message shows up here.
# Lines with digits (times, pids, counts) vary from run to run and are not
# compared.
#
# DOCS_TRANSCRIPT=1 prints each block's actual transcript as TAP comments
# (to refresh the guide's output).  DOCS_FILTER=TEXT runs only the blocks
# whose first command contains TEXT.
set -u

ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -f "$d/dkms.conf" ]; do d=$(dirname "$d"); done; echo "$d")}
. "$ROOT/selftests/tools_lib.sh" || exit 1
export PATH=$ROOT/build/tools:$PATH
block_timeout=${DOCS_TIMEOUT:-60}

tmp=$(mktemp -d /tmp/test_docs_examples.XXXXXX)
trap 'rm -rf "$tmp"' EXIT


# Splits FILE's console blocks into DIR/<k>.line (first line number),
# DIR/<k>.skip (reason), DIR/<k>.cmd<i> (command i), DIR/<k>.out
# ("<i><TAB><line>": output shown after command i).
extract() { # file, dir
	awk -v dir="$2" '
	function flush() { if (f != "") { close(f ".line"); close(f ".skip") } }
	BEGIN { inblk = 0; nb = 0; pend = ""; f = "" }
	{
		line = $0
		if (!inblk) {
			if (line ~ /^<!-- not run: .* -->[ \t]*$/) {
				pend = line
				sub(/^<!-- not run: /, "", pend)
				sub(/ -->[ \t]*$/, "", pend)
				next
			}
			if (line ~ /^```console[ \t]*$/) {
				inblk = 1; nb++; f = dir "/" nb; ncmd = 0; cont = 0
				print NR > (f ".line")
				if (pend != "") print pend > (f ".skip")
				printf "" > (f ".out")
				pend = ""
				next
			}
			if (line !~ /^[ \t]*$/) pend = ""
			next
		}
		if (line ~ /^```[ \t]*$/) { inblk = 0; flush(); next }
		if (cont) {
			print line > (f ".cmd" ncmd)
			cont = (line ~ /\\$/)
			next
		}
		if (line ~ /^\$ /) {
			ncmd++
			c = substr(line, 3)
			print c > (f ".cmd" ncmd)
			cont = (c ~ /\\$/)
			next
		}
		print ncmd "\t" line > (f ".out")
	}
	END { print nb > (dir "/count") }
	' "$1"
}

norm() { # squeeze blanks, trim
	awk '{ gsub(/[ \t]+/, " "); sub(/^ /, ""); sub(/ $/, ""); print }'
}

work=$tmp/work
mkdir -p "$work"
for d in build selftests examples lib include man tools kmod Documentation; do
	[ -e "$ROOT/$d" ] && ln -s "$ROOT/$d" "$work/$d"
done

files=(Documentation/user-guide.md README.md)
total=0
for doc in "${files[@]}"; do
	mkdir -p "$tmp/x/$doc"
	extract "$ROOT/$doc" "$tmp/x/$doc"
	total=$((total + $(cat "$tmp/x/$doc/count")))
done
echo "TAP version 13"
echo "1..$total"

for doc in "${files[@]}"; do
	x=$tmp/x/$doc
	count=$(cat "$x/count")
	k=0
	while [ $k -lt "$count" ]; do
		k=$((k + 1))
		b=$x/$k
		line=$(cat "$b.line")
		first=$(head -n 1 "$b.cmd1" 2>/dev/null)
		name="$doc:$line: \$ $first"
		if [ -f "$b.skip" ]; then
			skip "$name ($(cat "$b.skip"))"
			continue
		fi
		if [ ! -f "$b.cmd1" ]; then
			nok "$name: a console block without a \$ command"
			continue
		fi
		if [ -n "${DOCS_FILTER:-}" ] && ! grep -qF -- "$DOCS_FILTER" "$b.cmd1"; then
			skip "$name (DOCS_FILTER)"
			continue
		fi
		# The script: each command's output goes to the transcript, its
		# status to a list; $? is put back for a following `echo $?`.
		script=$tmp/script.sh
		trans=$tmp/transcript
		sts=$tmp/statuses
		: > "$trans"
		: > "$sts"
		{
			echo "cd $(printf '%q' "$work") || exit 99"
			printf 'printf "%%s\\n" %q >> %q\n' "\$ $(cat "$b.cmd1")" "$trans"
			i=1
			while [ -f "$b.cmd$i" ]; do
				echo "{ $(cat "$b.cmd$i")"
				echo "} >> $(printf '%q' "$trans") 2>&1"
				echo "__st=\$?; echo \$__st >> $(printf '%q' "$sts")"
				# the next command's line, then $? back for `echo $?`
				if [ -f "$b.cmd$((i + 1))" ]; then
					printf 'printf "%%s\\n" %q >> %q\n' "\$ $(cat "$b.cmd$((i + 1))")" "$trans"
				fi
				echo "(exit \$__st)"
				i=$((i + 1))
			done
			echo "wait"
		} > "$script"
		ncmd=$((i - 1))
		timeout "$block_timeout" bash "$script" < /dev/null > "$tmp/script.log" 2>&1
		rc=$?
		why=""
		[ $rc = 124 ] || [ $rc = 143 ] && why="timed out after ${block_timeout}s"
		# Expected statuses.
		i=1
		while [ $i -le $ncmd ]; do
			want=0
			next_cmd=$(cat "$b.cmd$((i + 1))" 2>/dev/null)
			if [ "$next_cmd" = 'echo $?' ]; then
				shown=$(awk -F '\t' -v c=$((i + 1)) '$1 == c { print $2; exit }' "$b.out")
				case $shown in ''|*[!0-9]*) ;; *) want=$shown ;; esac
			fi
			got=$(sed -n "${i}p" "$sts")
			if [ "$got" != "$want" ]; then
				why="$why${why:+; }\$ $(head -n 1 "$b.cmd$i") exited ${got:-never}, expected $want"
			fi
			i=$((i + 1))
		done
		# Shown output without digits must be in the transcript.
		norm < "$trans" > "$tmp/actual"
		missing=0
		: > "$tmp/missing"
		cut -f 2- "$b.out" | norm | while IFS= read -r l; do
			case $l in ''|'...'|*[0-9]*) continue ;; esac
			grep -qxF -- "$l" "$tmp/actual" || echo "$l"
		done > "$tmp/missing"
		if [ -s "$tmp/missing" ]; then
			missing=$(wc -l < "$tmp/missing")
			why="$why${why:+; }$missing shown output line(s) not printed"
		fi
		if [ -z "$why" ]; then
			ok "$name"
		else
			nok "$name: $why"
			sed 's/^/# missing: /' "$tmp/missing" | head -n 10
			sed 's/^/# | /' "$trans" | head -n 60
			sed 's/^/# script: /' "$tmp/script.log" | head -n 10
		fi
		if [ "${DOCS_TRANSCRIPT:-}" = 1 ]; then
			echo "# ----- transcript of $name"
			sed 's/^/# /' "$trans"
		fi
	done
done
[ $fails = 0 ]
