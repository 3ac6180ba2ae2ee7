# SPDX-License-Identifier: MIT
"""Reads meter's JSON profiles of Python and Lua programs for the shell tests.

  py_profile.py calls PROFILE NAME...     each NAME's call count (0: none)
  py_profile.py tails PROFILE LEAF N      the last N frames of each stack
                                          whose leaf is LEAF, with samples
  py_profile.py source PROFILE NAME       NAME's file:line
  py_profile.py compare PROFILE PSTATS DIR
      meter's call counts against cProfile's (a pstats file) for every
      function defined in a file under DIR that is not a generator or a
      coroutine (cProfile counts each resume as a call); prints the
      functions compared and every difference, exits 1 on any difference.
  py_profile.py refcount PROFILE COUNTS DIR
      the same against a Lua run's reference counts ("FILE<TAB>LINE<TAB>N"
      lines of selftests/host/data/lua/refcount.lua), every Lua function
      defined under DIR.
"""
import json
import marshal
import os
import sys

GEN = 0x20 | 0x80 | 0x200   # CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR


def load(path):
    with open(path) as f:
        return json.load(f)


def calls(prof, names):
    by = {}
    for f in prof["functions"]:
        by[f["name"]] = by.get(f["name"], 0) + f.get("calls", 0)
    for n in names:
        print(by.get(n, 0))


def tails(prof, leaf, n):
    ids = {f["id"]: f["name"] for f in prof["functions"]}
    for s in prof["stacks"]:
        fr = [ids[i] for i in s["frames"]]
        if fr and fr[-1] == leaf:
            print(";".join(fr[-n:]), s["samples"])


def source(prof, name):
    for f in prof["functions"]:
        if f["name"] == name:
            print("%s:%s" % (f.get("file", "?"), f.get("line", 0)))


def generator_lines(path, cache={}):
    """(file, line) of the generator and coroutine code objects in path."""
    if path in cache:
        return cache[path]
    found = set()
    try:
        with open(path, "rb") as f:
            todo = [compile(f.read(), path, "exec")]
    except (OSError, SyntaxError, ValueError):
        todo = []
    while todo:
        co = todo.pop()
        if co.co_flags & GEN:
            found.add(co.co_firstlineno)
        todo.extend(c for c in co.co_consts if hasattr(c, "co_code"))
    cache[path] = found
    return found


def compare(prof, pstats_path, root):
    root = os.path.realpath(root) + "/"
    with open(pstats_path, "rb") as f:
        stats = marshal.load(f)
    theirs = {}
    for (file, line, _name), st in stats.items():
        rf = os.path.realpath(file)
        if not file.startswith("<") and rf.startswith(root) and line not in generator_lines(file):
            theirs[(rf, line)] = theirs.get((rf, line), 0) + st[1]
    ours = {}
    names = {}
    for f in prof["functions"]:
        file = f.get("file")
        if not file or file.startswith("<"):
            continue
        rf = os.path.realpath(file)
        line = f.get("line", 0)
        if rf.startswith(root) and line not in generator_lines(file):
            ours[(rf, line)] = ours.get((rf, line), 0) + f.get("calls", 0)
            names[(rf, line)] = f["name"]
    return report(ours, theirs, names, "cProfile")


def refcount(prof, counts_path, root):
    # by the paths Lua names (Debian links 5.4's modules to 5.1's files)
    root = os.path.abspath(root) + "/"
    theirs = {}
    with open(counts_path) as f:
        for line in f:
            file, ln, n = line.rstrip("\n").split("\t")
            af = os.path.abspath(file)
            if af.startswith(root):
                k = (af, int(ln) if int(ln) > 0 else 0)
                theirs[k] = theirs.get(k, 0) + int(n)
    ours, names = {}, {}
    for f in prof["functions"]:
        file = f.get("file")
        if not file:
            continue
        af = os.path.abspath(file)
        if af.startswith(root):
            k = (af, f.get("line", 0))
            ours[k] = ours.get(k, 0) + f.get("calls", 0)
            names[k] = f["name"]
    return report(ours, theirs, names, "reference")


def report(ours, theirs, names, them):
    bad = 0
    for k in sorted(set(ours) | set(theirs)):
        a, b = ours.get(k, 0), theirs.get(k, 0)
        if a != b:
            bad += 1
            if bad <= 20:
                print("# %s (%s:%d): meter %d, %s %d"
                      % (names.get(k, "?"), k[0], k[1], a, them, b))
    compared = len(set(ours) | set(theirs))
    print("%d functions compared (%d calls), %d differ"
          % (compared, sum(theirs.values()), bad))
    return 1 if bad or not compared else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "calls":
        calls(load(argv[1]), argv[2:])
    elif len(argv) == 4 and argv[0] == "tails":
        tails(load(argv[1]), argv[2], int(argv[3]))
    elif len(argv) == 3 and argv[0] == "source":
        source(load(argv[1]), argv[2])
    elif len(argv) == 4 and argv[0] == "compare":
        return compare(load(argv[1]), argv[2], argv[3])
    elif len(argv) == 4 and argv[0] == "refcount":
        return refcount(load(argv[1]), argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
