# SPDX-License-Identifier: MIT
"""bench/python_summary.py OUT "PROGS": the tables and the JSON line of
bench/python.sh, from OUT/figures and the profiles beside it."""
import json
import marshal
import os
import statistics
import sys


def figures(path):
    per, whole, cpu = {}, {}, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "per" and len(w) == 3 and w[2]:
                per[w[1]] = int(w[2])
            elif w[0] == "whole" and len(w) == 4 and w[3]:
                whole[(w[1], w[2])] = int(w[3])
            elif w[0] == "cpu" and len(w) == 5 and w[4]:
                cpu.setdefault((w[1], w[2]), []).append(float(w[4]))
    return per, whole, cpu


def shares_meter(path):
    """(file, line) -> (name, % of self samples) of a meter JSON profile."""
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError):
        return {}
    total = sum(f.get("self_samples", 0) for f in p["functions"])
    total += p.get("no_current", 0)
    out = {}
    for f in p["functions"]:
        if f.get("file") and total:
            k = (os.path.realpath(f["file"]), f.get("line", 0))
            name, pct = out.get(k, (f["name"], 0.0))
            out[k] = (name, pct + 100.0 * f.get("self_samples", 0) / total)
    return out


def shares_pstats(path):
    """(file, line) -> % of tottime of a pstats file (cProfile, yappi)."""
    try:
        with open(path, "rb") as f:
            st = marshal.load(f)
    except (OSError, ValueError, EOFError):
        return {}
    total = sum(v[2] for v in st.values())
    out = {}
    for (file, line, _name), v in st.items():
        if total and not file.startswith("~"):
            k = (os.path.realpath(file), line)
            out[k] = out.get(k, 0.0) + 100.0 * v[2] / total
    return out


def ovh(tool, plain):
    return None if tool is None or not plain else 100.0 * (tool / plain - 1)


def fmt(x, unit=""):
    return "-" if x is None else "%.1f%s" % (x, unit)


def main(out, progs):
    per, whole, cpu = figures(os.path.join(out, "figures"))
    res = {"percall_instr": {}, "whole_instr_overhead_pct": {},
           "whole_cpu_overhead_pct": {}, "meter_over_cprofile": {},
           "self_pct": {}}
    base = per.get("plain")
    print("Python, per call (callgrind, instructions; over the plain call):")
    for t, v in per.items():
        over = None if base is None else v - base
        res["percall_instr"][t] = over
        print("  %-16s %8d instr  %8s over plain" % (t, v, over))
    print()
    print("Python, whole run: overhead over the plain run "
          "(instructions; CPU time, median of interleaved rounds):")
    print("  %-10s %-10s %12s %12s" % ("program", "tool", "instr", "cpu"))
    for p in progs:
        pw = whole.get((p, "plain"))
        pc = statistics.median(cpu.get((p, "plain"), [0])) or None
        for t in ("meter", "cprofile", "yappi"):
            oi = ovh(whole.get((p, t)), pw)
            c = cpu.get((p, t))
            oc = ovh(statistics.median(c), pc) if c else None
            if oi is None and oc is None:
                continue
            res["whole_instr_overhead_pct"].setdefault(p, {})[t] = \
                None if oi is None else round(oi, 1)
            res["whole_cpu_overhead_pct"].setdefault(p, {})[t] = \
                None if oc is None else round(oc, 1)
            print("  %-10s %-10s %12s %12s" % (p, t, fmt(oi, " %"),
                                                fmt(oc, " %")))
        wi = res["whole_instr_overhead_pct"].get(p, {})
        wc = res["whole_cpu_overhead_pct"].get(p, {})
        res["meter_over_cprofile"][p] = {
            k: (round(d["meter"] / d["cprofile"], 3)
                if d.get("meter") is not None and d.get("cprofile") else None)
            for k, d in (("instr", wi), ("cpu", wc))}
        print("  %-10s meter's overhead / cProfile's: instr %s, cpu %s" % (
            p, res["meter_over_cprofile"][p]["instr"],
            res["meter_over_cprofile"][p]["cpu"]))
    print()
    print("Python, self shares >= 5 % in meter's profile (10 kHz, signal "
          "backend), beside meter's with builtins, cProfile's (builtins "
          "on) and yappi's (off) tottime shares:")
    for p in progs:
        m = shares_meter(os.path.join(out, p + ".meter.json"))
        mb = shares_meter(os.path.join(out, p + ".meter-builtins.json"))
        c = shares_pstats(os.path.join(out, p + ".cprofile.prof"))
        y = shares_pstats(os.path.join(out, p + ".yappi.prof"))
        rows = sorted(((pct, name, k) for k, (name, pct) in m.items()
                       if pct >= 5), reverse=True)
        res["self_pct"][p] = {}
        for pct, name, k in rows:
            res["self_pct"][p][name] = {
                "meter": round(pct, 2),
                "meter_builtins": round(mb[k][1], 2) if k in mb else None,
                "cprofile": round(c[k], 2) if k in c else None,
                "yappi": round(y[k], 2) if k in y else None}
            print("  %-10s %-45s meter %5.1f  +builtins %5s  cProfile %5s"
                  "  yappi %5s" % (p, name[-45:], pct,
                                   fmt(mb[k][1] if k in mb else None),
                                   fmt(c.get(k)), fmt(y.get(k))))
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split())
