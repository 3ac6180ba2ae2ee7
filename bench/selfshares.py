#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Self-time shares of one program, meter against perf (make bench).

    selfshares.py PROGRAM PERF_SCRIPT METER_JSON [--min PCT] [--json]

PERF_SCRIPT is `perf script -F ip,sym,dso --inline` of a `perf record
--call-graph dwarf` run of the uninstrumented build of PROGRAM, built with
the same flags (inlining on).  The truth is perf's sample given to the
innermost function by DWARF's inline records, as meter attributes it (an
inlined function keeps its own time): each sample goes to the first frame,
from the leaf outwards, that is one of the program's own functions.  The
program's functions are those of meter's profile and those the plugin
left alone as tiny (PROGRAM's plugin build's .tiny file, when given with
--tiny); other inlined frames (glibc's fortified wrappers, byte swaps)
and frames outside PROGRAM (libc, the kernel on the thread's behalf) pass
their time outwards, as meter charges it to the current function.
Samples with no such frame (the dynamic loader before main) are left out
of both sides' denominators, as are meter's samples with no current
function.  Prints each function at or above --min percent in either
profile, the two shares and their difference, then the largest
difference; --json prints one JSON object.
"""
import argparse
import json
import os
import re

# GCC's clones and split parts carry their origin's name
CLONE = re.compile(r"\.(isra|part|constprop|cold|lto_priv)(\.\d+)*$")


def base_name(sym):
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    while True:
        s = CLONE.sub("", sym)
        if s == sym:
            return s
        sym = s


def perf_samples(path):
    """Each sample's frames, leaf first, as [symbol, dso, srcline], from
    `perf script -F ip,sym,dso --inline` (an inlined frame's dso is
    "inlined") or `-F ip,sym,dso,srcline --inline` (there the line under
    an inlined frame ends in "(inlined)")."""
    frames = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if frames:
                    yield frames
                frames = []
                continue
            # the dso: a path (which may hold parentheses, or end in
            # " (deleted)"), [kernel.kallsyms], [unknown], or "inlined"
            m = re.match(r"^\t\s*[0-9a-f]+\s+(.*?)(?:\s+\((/.*|\[[^\]]*\]|inlined)\))?$", line)
            if m:
                sym, dso = m.group(1), m.group(2) or "inlined"
                if dso != "inlined" and dso.startswith("/"):
                    dso = os.path.realpath(dso)
                frames.append([sym, dso, ""])
            elif frames and line.startswith("  "):
                src = line.strip()
                if src.endswith(" (inlined)"):
                    frames[-1][1], src = "inlined", src[:-len(" (inlined)")]
                frames[-1][2] = src
    if frames:
        yield frames


def meters_own(frames, prog):
    """Whether a sample is meter's own: in libmeter, or, at the first frame
    in the program, on a line of the plugin's "<meter>" (gcc-plugin.md,
    "Lines of its own"; a call to the slow path is on one too) or in one
    of <meter.h>'s inline functions."""
    for sym, dso, src in frames:
        if os.path.basename(dso).startswith("libmeter."):
            return True
        if dso == prog or dso == "inlined":
            return (os.path.basename(src.rsplit(":", 1)[0]) == "<meter>" or
                    sym.startswith("meter__"))
    return False


def perf_counts(program, path, names=None, meter_apart=False):
    """Samples by innermost program function, their total, and (with
    meter_apart) those on meter's own instructions, left out of both."""
    counts, total, meter = {}, 0, 0
    prog = os.path.realpath(program)
    for frames in perf_samples(path):
        if meter_apart and meters_own(frames, prog):
            meter += 1
            continue
        for sym, dso, _ in frames:
            if dso != prog and dso != "inlined":
                continue
            name = base_name(sym)
            if names is not None and name not in names:
                continue
            counts[name] = counts.get(name, 0) + 1
            total += 1
            break
    return counts, total, meter


def perf_shares(program, path, names=None):
    """Shares by innermost program function; names: the program's own
    functions (None: every frame in PROGRAM counts, inlined or not)."""
    counts, total, _ = perf_counts(program, path, names)
    return shares(counts, total), total


def shares(counts, total):
    """Counts as percentages of total."""
    return {k: 100.0 * v / total for k, v in counts.items()} if total else {}


def program_functions(meter_json, tiny_file=None):
    """The names of the program's own functions: meter's records, and
    those the plugin left alone as tiny."""
    with open(meter_json) as f:
        p = json.load(f)
    names = {fn["name"] for fn in p.get("functions", [])}
    if tiny_file and os.path.exists(tiny_file):
        with open(tiny_file) as f:
            names |= {line.strip() for line in f if line.strip()}
    return names


def meter_shares(path):
    with open(path) as f:
        p = json.load(f)
    funcs = p.get("functions") or p.get("funcs") or []
    self_key = "self_samples" if funcs and "self_samples" in funcs[0] else "self"
    tot = sum(fn.get(self_key, 0) for fn in funcs)
    shares = {fn["name"]: 100.0 * fn.get(self_key, 0) / tot for fn in funcs} if tot else {}
    return shares, tot


def main():
    ap = argparse.ArgumentParser(description="meter's self shares against perf's")
    ap.add_argument("program")
    ap.add_argument("perf_script")
    ap.add_argument("meter_json")
    ap.add_argument("--min", type=float, default=5.0)
    ap.add_argument("--tiny", help="the plugin build's .tiny file")
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()
    program, perf_path, meter_path, mn = opts.program, opts.perf_script, opts.meter_json, opts.min
    ps, pn = perf_shares(program, perf_path,
                         program_functions(meter_path, opts.tiny))
    ms, mnn = meter_shares(meter_path)
    rows = []
    for name in sorted(set(ps) | set(ms), key=lambda k: -max(ps.get(k, 0), ms.get(k, 0))):
        a, b = ps.get(name, 0.0), ms.get(name, 0.0)
        if max(a, b) >= mn:
            rows.append((name, a, b, b - a))
    worst = max((abs(r[3]) for r in rows), default=None)
    if opts.json:
        print(json.dumps({"perf_samples": pn, "meter_samples": mnn,
                          "max_diff_pp": round(worst, 2) if worst is not None else None,
                          "functions": {r[0]: {"perf": round(r[1], 2), "meter": round(r[2], 2)}
                                        for r in rows}}, separators=(",", ":")))
        return
    print("  %-28s %8s %8s %8s" % ("function (>= %g %%)" % mn, "perf %", "meter %", "diff pp"))
    for name, a, b, d in rows:
        print("  %-28s %8.2f %8.2f %+8.2f" % (name[:28], a, b, d))
    print("  largest difference: %s pp (perf %d samples, meter %d)" %
          ("%.2f" % worst if worst is not None else "n/a", pn, mnn))


if __name__ == "__main__":
    main()
