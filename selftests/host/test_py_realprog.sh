#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Python programs we did not write, from Debian's packages, profiled by
# meter (signal backend) and by cProfile: every function of the package
# that is not a generator or a coroutine has the same call count in both.
#   docutils: rst2html on the reStructuredText specification (docutils-doc)
#   pygments: pygmentize on docutils' largest module, to HTML
#   networkx: centrality, clustering, spanning tree and shortest paths
#             on a seeded random graph (selftests/host/data/py/graphs.py)
# PYTHONHASHSEED=0 keeps both runs on the same path.
set -u

ROOT=${METER_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)}
RUN=$ROOT/build/tools/meter-run
PY=/usr/bin/python3
Q="$PY $ROOT/selftests/host/py_profile.py"
PKGS=/usr/lib/python3/dist-packages
SPEC=/usr/share/doc/docutils-doc/docs/ref/rst/restructuredtext.txt

. "$ROOT/selftests/tools_lib.sh" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_py_realprog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export PYTHONHASHSEED=0

echo "1..3"

both() { # name, package dir, then the program and its arguments
	local name=$1 pkg=$2
	shift 2
	"$PY" -m cProfile -o "$tmp/$name.prof" "$@" > /dev/null 2>&1 &&
	METER_QUIET=1 "$RUN" -b signal -f json -o "$tmp/$name.json" -- \
		"$PY" "$@" > /dev/null 2>&1 &&
	$Q compare "$tmp/$name.json" "$tmp/$name.prof" "$pkg" > "$tmp/$name.cmp"
	local st=$?
	sed 's/^/# /' "$tmp/$name.cmp"
	return $st
}

can() { # module, then files that must exist
	local m=$1 f
	shift
	"$PY" -c "import $m" 2> /dev/null || return 1
	for f; do [ -e "$f" ] || return 1; done
	ls "$ROOT"/build/python/meter/_meter*.so > /dev/null 2>&1
}

if can docutils /usr/bin/rst2html "$SPEC"; then
	check "docutils: rst2html of the reST spec, calls equal cProfile's" \
		both docutils "$PKGS/docutils" /usr/bin/rst2html "$SPEC"
else
	skip "docutils: rst2html of the reST spec" "python3-docutils, docutils-doc or build/python missing"
fi
if can pygments /usr/bin/pygmentize "$PKGS/docutils/parsers/rst/states.py"; then
	check "pygments: states.py to HTML, calls equal cProfile's" \
		both pygments "$PKGS/pygments" /usr/bin/pygmentize -f html -O full \
			-o "$tmp/states.html" "$PKGS/docutils/parsers/rst/states.py"
else
	skip "pygments: states.py to HTML" "python3-pygments, python3-docutils or build/python missing"
fi
if can networkx; then
	check "networkx: five algorithms on a random graph, calls equal cProfile's" \
		both networkx "$PKGS/networkx" "$ROOT/selftests/host/data/py/graphs.py"
else
	skip "networkx: five algorithms on a random graph" "python3-networkx or build/python missing"
fi

exit $((fails > 0))
