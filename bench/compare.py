#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/compare.py A B: do two `make bench` runs agree on their exact
figures?  A and B are their outputs (the JSON object is the last line) or
the JSON alone.  Every instruction figure of A is set beside B's, with the
difference relative to A; the exit status is 1 when one differs by more
than --tolerance percent (default 1), 2 when a figure is missing on one
side.  Time figures are not compared: they move with the host's load.

Whole-run overheads (`overhead_instr_pct`) are compared as the instruction
counts they are made of, 100 + overhead (the run's instructions over the
plain build's): a 10.0 % overhead printed as 10.1 is a 0.1 % difference
in counts, and a relative difference of two small percentages would say
1 %.  Interrupts per CPU-second are compared as they are.
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        lines = [ln for ln in f.read().splitlines() if ln.startswith("{")]
    if not lines:
        sys.exit("compare: %s: no JSON line" % path)
    return json.loads(lines[-1])


def flatten(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from flatten(v, prefix + "." + k if prefix else k)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield prefix, float(obj)


# the exact figures: counts of instructions and of interrupts
EXACT = ("tick_insns", "tick_insns_ratios", "switch_insns", "percall_instr",
         "percall_instr_vm", "startup_instr", "startup_instr_first_run",
         "startup_instr_without_meter",
         "ticks_per_cpu_s", "ticks_per_cpu_s_perfclock", "overhead_instr_pct")


def figures(doc):
    out = {}
    for key in EXACT:
        if key not in doc:
            continue
        for name, v in flatten(doc[key], key):
            out[name] = 100.0 + v if key == "overhead_instr_pct" else v
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tolerance", type=float, default=1.0,
                    help="largest difference allowed, in percent")
    args = ap.parse_args()
    fa, fb = figures(load(args.a)), figures(load(args.b))
    missing = sorted(set(fa) ^ set(fb))
    worst, bad = 0.0, 0
    print("%-52s %12s %12s %8s" % ("figure", "A", "B", "diff %"))
    for name in sorted(set(fa) & set(fb)):
        a, b = fa[name], fb[name]
        d = 0.0 if a == b else abs(b - a) / abs(a) * 100 if a else float("inf")
        worst = max(worst, d)
        flag = ""
        if d > args.tolerance:
            bad += 1
            flag = "  over"
        print("%-52s %12g %12g %8.2f%s" % (name, a, b, d, flag))
    for name in missing:
        print("%-52s missing in %s" % (name, "B" if name in fa else "A"))
    print("%d figures, largest difference %.2f %%, %d over %.1f %%, %d missing"
          % (len(set(fa) & set(fb)), worst, bad, args.tolerance, len(missing)))
    sys.exit(2 if missing else 1 if bad else 0)


if __name__ == "__main__":
    main()
