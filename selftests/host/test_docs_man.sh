#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The man pages render without a single groff or man warning, and they
# cannot drift from the code: every long and short option that
# `meter-run --help` and `meter-stat --help` print is in the tool's page,
# every meter-stat command is, every module parameter of kmod/*.c is in
# meter.4 with its access (rw or read-only) and no parameter is documented
# that the module does not have, and libmeter.3 names every public function
# of include/meter.h and every METER_* variable libmeter reads, each of which
# has a .so link page (man 3 meter_enter).
set -u

ROOT=${METER_ROOT:-$(d=$(dirname "$(readlink -f "$0")"); while [ "$d" != / ] && [ ! -d "$d/man" ]; do d=$(dirname "$d"); done; echo "$d")}
. "$ROOT/selftests/tools_lib.sh" || exit 1
MAN=$ROOT/man
RUN=$ROOT/build/tools/meter-run
STAT=$ROOT/build/tools/meter-stat


tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_docs_man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pages=(meter-run.1 meter-stat.1 libmeter.3 meter.4)
echo "TAP version 13"

# In roff source an option is written with escaped hyphens: \-\-period.
in_page() { # page, literal text as roff writes it
	grep -qF -- "$2" "$MAN/$1"
}
roff_opt() { printf '%s' "$1" | sed 's/-/\\-/g'; }

for p in "${pages[@]}"; do
	if [ ! -f "$MAN/$p" ]; then
		nok "man/$p exists"
		continue
	fi
	if command -v groff >/dev/null; then
		groff -ww -man -Tutf8 "$MAN/$p" > /dev/null 2> "$tmp/groff.err"
		rc=$?
		if [ $rc = 0 ] && [ ! -s "$tmp/groff.err" ]; then
			ok "$p: groff -ww -man -Tutf8 renders it without a warning"
		else
			nok "$p: groff -ww -man -Tutf8 renders it without a warning (status $rc)"
			diag "$tmp/groff.err"
		fi
	else
		skip "$p: groff is not installed"
	fi
	if command -v man >/dev/null; then
		MANROFFOPT=-ww MANWIDTH=80 man -l "$MAN/$p" > "$tmp/man.out" 2> "$tmp/man.err"
		rc=$?
		if [ $rc = 0 ] && [ ! -s "$tmp/man.err" ] && [ -s "$tmp/man.out" ]; then
			ok "$p: man -l shows it without a warning"
		else
			nok "$p: man -l shows it without a warning (status $rc)"
			diag "$tmp/man.err"
		fi
	else
		skip "$p: man is not installed"
	fi
done

# Options: what --help prints must be in the page.
for tool in meter-run meter-stat; do
	bin=$ROOT/build/tools/$tool
	if [ ! -x "$bin" ]; then
		nok "$tool is built ($bin)"
		continue
	fi
	"$bin" --help > "$tmp/help" 2>&1
	longs=$(grep -oE -- '--[a-z][a-z-]*' "$tmp/help" | sort -u)
	shorts=$(grep -oE -- '^ +-[A-Za-z],' "$tmp/help" | tr -d ' ,' | sort -u)
	missing=""
	for o in $longs $shorts; do
		in_page "$tool.1" "$(roff_opt "$o")" || missing="$missing $o"
	done
	count=$(echo $longs $shorts | wc -w)
	if [ "$count" -gt 5 ] && [ -z "$missing" ]; then
		ok "$tool.1 documents all $count options of $tool --help"
	else
		nok "$tool.1 documents all options of $tool --help (missing:${missing:- none}; $count found)"
	fi
	# ... and the page documents no long option the tool lacks.
	extra=""
	for o in $(grep -oE -- '\\-\\-[a-z][a-z\\-]*' "$MAN/$tool.1" | sed 's/\\//g' | sort -u); do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$tmp/help" || extra="$extra $o"
	done
	if [ -z "$extra" ]; then
		ok "$tool.1 documents no option that $tool --help lacks"
	else
		nok "$tool.1 documents no option that $tool --help lacks (extra:$extra)"
	fi
done

missing=""
for c in list show watch reset delete merge; do
	grep -qE "^\.B(I)? $c( |$)|^\.B meter\\\\-stat $c" "$MAN/meter-stat.1" || missing="$missing $c"
done
if [ -z "$missing" ]; then
	ok "meter-stat.1 documents every command (list show watch reset delete merge)"
else
	nok "meter-stat.1 documents every command (missing:$missing)"
fi

# Module parameters: name and access, from module_param_named(name, var,
# type, perm) in kmod/*.c, against ".BR name " (type, rw|read-only, ...).
params=$(cat "$ROOT"/kmod/*.c | tr '\n\t' '  ' |
	grep -oE 'module_param(_named)?\([^)]*\)' |
	sed -E 's/module_param(_named)?\(//; s/\)$//; s/ //g')
missing=""
wrong=""
np=0
for p in $params; do
	IFS=, read -r -a f <<< "$p"
	name=${f[0]}
	perm=${f[${#f[@]} - 1]}
	np=$((np + 1))
	line=$(grep -E "^\.BR $name \"" "$MAN/meter.4" | head -n 1)
	if [ -z "$line" ]; then
		missing="$missing $name"
		continue
	fi
	case $perm in
	0444|0440|0400|S_IRUGO|S_IRUSR) want=', read\-only,' ;;
	*) want=', rw,' ;;
	esac
	case $line in *"$want"*) ;; *) wrong="$wrong $name($perm)" ;; esac
done
if [ "$np" -gt 0 ] && [ -z "$missing" ]; then
	ok "meter.4 documents all $np module parameters of kmod/*.c"
else
	nok "meter.4 documents all module parameters of kmod/*.c (missing:${missing:- none}; $np found)"
fi
if [ -z "$wrong" ]; then
	ok "meter.4 gives each parameter's access (rw or read-only) as the code does"
else
	nok "meter.4 gives each parameter's access as the code does (wrong:$wrong)"
fi
extra=""
for name in $(sed -nE 's/^\.BR ([a-z_]+) "\((bool|uint|int|ulong|charp).*/\1/p' "$MAN/meter.4"); do
	echo "$params" | grep -qE "^$name," || extra="$extra $name"
done
if [ -z "$extra" ]; then
	ok "meter.4 documents no parameter the module lacks"
else
	nok "meter.4 documents no parameter the module lacks (extra:$extra)"
fi
if in_page meter.4 "rmmod \\-f"; then
	ok "meter.4 warns that rmmod -f cannot be made safe"
else
	nok "meter.4 warns that rmmod -f cannot be made safe"
fi

# libmeter: public functions of include/meter.h, METER_* variables read.
funcs=$( (grep -oE '^[a-z_ *]+[ *](meter_[a-z_]+)\(' "$ROOT/include/meter.h" |
	grep -oE 'meter_[a-z_]+\($' | tr -d '(' | grep -v '^meter__'
	sed -nE 's/^#define (METER_[A-Z_]*[A-Z])\(\).*/\1/p' "$ROOT/include/meter.h" |
	grep -v '^METER__') | sort -u)
vars=$(cat "$ROOT"/lib/*.c | grep -oE 'getenv\("METER_[A-Z_]+"\)|"METER_[A-Z_]+"' |
	grep -oE 'METER_[A-Z_]+' | sort -u)
missing=""
for f in $funcs; do
	grep -qE "(^|[^a-z_])$f([^a-z_]|$)" "$MAN/libmeter.3" || missing="$missing $f"
done
if [ -n "$funcs" ] && [ -z "$missing" ]; then
	ok "libmeter.3 documents the macros and functions of include/meter.h ($(echo $funcs))"
else
	nok "libmeter.3 documents the API of include/meter.h (missing:${missing:- none})"
fi
missing=""
for v in $vars; do
	grep -qE "^\.B $v$" "$MAN/libmeter.3" || missing="$missing $v"
done
if [ -n "$vars" ] && [ -z "$missing" ]; then
	ok "libmeter.3 documents every variable libmeter reads ($(echo $vars))"
else
	nok "libmeter.3 documents every variable libmeter reads (missing:${missing:- none})"
fi

# Each API name has a page of its own: a .so link to libmeter.3, which man
# follows (man 3 meter_enter).
bad=""
for f in $funcs; do
	page=$MAN/$f.3
	if [ ! -f "$page" ] || [ "$(cat "$page")" != ".so man3/libmeter.3" ]; then
		bad="$bad $f"
	fi
done
for stub in "$MAN"/*.[1-9]; do
	target=$(sed -n '1s/^\.so //p' "$stub")
	[ -z "$target" ] || [ -f "$MAN/$(basename "$target")" ] || bad="$bad $(basename "$stub")->$target"
done
if [ -z "$bad" ]; then
	ok "man/<name>.3 links every API name to libmeter.3 (.so), and every link resolves"
else
	nok "man/<name>.3 links every API name to libmeter.3 (wrong or missing:$bad)"
fi

echo "1..$n"
[ $fails = 0 ]
