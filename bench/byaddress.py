#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Self shares of a plugin build by address, against the plain build's.

    byaddress.py PLAIN PLAIN_SCRIPT PLUGIN PLUGIN_SCRIPT METER_JSON
                 [--tiny FILE] [--min PCT] [--json]

Both scripts are `perf script -F ip,sym,dso,srcline --inline` of perf
record runs of one program's plain and plugin builds (the same flags).
Each sample goes to its innermost program function (selfshares.py); in
the plugin build a sample on one of meter's own instructions (a line of
"<meter>", gcc-plugin.md) is counted apart and left out.  What is left is
what meter's profile would show if it took each sample's address as perf
does: the instrumentation's own time out, tiny inlined functions given
theirs (performance.md, "Meter's own samples, by address").  Prints the
functions at or above --min percent in either profile, the largest
difference, and meter's own samples.
"""
import argparse
import json

from selfshares import perf_counts, program_functions, shares


def main():
    ap = argparse.ArgumentParser(description="a plugin build's shares by address")
    ap.add_argument("plain")
    ap.add_argument("plain_script")
    ap.add_argument("plugin")
    ap.add_argument("plugin_script")
    ap.add_argument("meter_json")
    ap.add_argument("--tiny", help="the plugin build's .tiny file")
    ap.add_argument("--min", type=float, default=5.0)
    ap.add_argument("--json", action="store_true")
    o = ap.parse_args()
    names = program_functions(o.meter_json, o.tiny)
    pc, pn, _ = perf_counts(o.plain, o.plain_script, names)
    mc, mn, own = perf_counts(o.plugin, o.plugin_script, names, meter_apart=True)
    a, b = shares(pc, pn), shares(mc, mn)
    rows = [(k, a.get(k, 0.0), b.get(k, 0.0))
            for k in sorted(set(a) | set(b), key=lambda k: -max(a.get(k, 0), b.get(k, 0)))
            if max(a.get(k, 0), b.get(k, 0)) >= o.min]
    worst = max((abs(y - x) for _, x, y in rows), default=None)
    own_pct = 100.0 * own / (own + mn) if own + mn else None
    if o.json:
        print(json.dumps({"plain_samples": pn, "plugin_samples": mn, "meter_own_samples": own,
                          "max_diff_pp": round(worst, 2) if worst is not None else None,
                          "functions": {k: {"plain": round(x, 2), "by_address": round(y, 2)}
                                        for k, x, y in rows}}, separators=(",", ":")))
        return
    print("  %-32s %8s %8s %8s" % ("function (>= %g %%)" % o.min, "plain %", "plugin %", "diff pp"))
    for k, x, y in rows:
        print("  %-32s %8.2f %8.2f %+8.2f" % (k[:32], x, y, y - x))
    print("  largest difference: %s pp; samples: plain %d, plugin %d, of which meter's own %d (%s %%)" %
          ("%.2f" % worst if worst is not None else "n/a", pn, own + mn, own,
           "%.1f" % own_pct if own_pct is not None else "n/a"))


if __name__ == "__main__":
    main()
