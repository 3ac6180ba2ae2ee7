#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/summarize.py OUT: the table and the JSON line of `make bench`.

OUT is what bench/run.sh wrote: OUT/host and OUT/vm, each with an index
("ID PHASE TOOL RATE WORKLOAD REP STATUS") and runs/ID/ directories, and
OUT/host/callcost.txt.  Prints the tables, then as the last line one JSON
object (see Documentation/performance.md for the keys).  Missing pieces
come out as null, never as an error: a benchmark prints what it has.
"""
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insns  # noqa: E402
from tool_reports import (  # noqa: E402
    gprof_callers, gprof_flat, meter_callers, meter_self, meter_ticks,
    perf_callers, perf_flat, pprof_flat, uftrace_callers, uftrace_flat)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SPLIT_TRUTH = {"heavy": 50.0, "medium": 30.0, "light": 20.0}
WORKLOADS = ("tree", "matrix", "threads")


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def kv(text, prefix=""):
    """key=value pairs of the last line that has prefix's keys."""
    out = {}
    for line in text.splitlines():
        if prefix and prefix not in line:
            continue
        for k, v in re.findall(r"(\w+)=([-\w.]+)", line):
            out[k] = v
    return out


class Run:
    def __init__(self, env, base, fields):
        self.env = env
        self.id, self.phase, self.tool, self.rate, self.w, self.rep = fields[:6]
        # a row without a status is a run that did not say it went well
        self.ok = len(fields) >= 7 and fields[6] == "ok"
        self.scale = fields[7] if len(fields) > 7 else None
        self.dir = os.path.join(base, "runs", self.id)
        self.out = kv(read(os.path.join(self.dir, "stdout")), "workload=")
        self.timeit = kv(read(os.path.join(self.dir, "stderr")), "timeit ")
        self._profile = False

    def num(self, d, k):
        try:
            return float(d[k])
        except (KeyError, ValueError):
            return None

    @property
    def work_cpu(self):
        return self.num(self.out, "work_cpu_ns")

    @property
    def proc_cpu(self):
        return self.num(self.out, "cpu_ns")

    @property
    def tree_cpu(self):
        return self.num(self.timeit, "cpu_ns")

    @property
    def profile(self):
        if self._profile is False:
            try:
                with open(os.path.join(self.dir, "profile.json")) as f:
                    self._profile = json.load(f)
            except (OSError, ValueError):
                self._profile = None
        return self._profile

    def file(self, name):
        return read(os.path.join(self.dir, name))


def load(out):
    runs = []
    for env in ("host", "vm", "icount"):
        base = os.path.join(out, env)
        for line in read(os.path.join(base, "index")).splitlines():
            fields = line.split()
            if len(fields) >= 6:
                runs.append(Run(env, base, fields))
    return runs


def pick(runs, **want):
    return [r for r in runs if r.ok and all(getattr(r, k) == v for k, v in want.items())]


def split_error(selfs):
    vals = {k: selfs.get(k) for k in SPLIT_TRUTH}
    if any(v is None for v in vals.values()):
        return None, None
    tot = sum(vals.values())
    if tot <= 0:
        return None, None
    shares = {k: 100.0 * v / tot for k, v in vals.items()}
    return max(abs(shares[k] - SPLIT_TRUTH[k]) for k in SPLIT_TRUTH), shares


def f_share(callers):
    """Share of the leaf's time charged to f among all its callers (a tool
    that names another caller, e.g. perf's frame-pointer unwinding, which
    skips the caller of a leaf without a frame, charges f nothing)."""
    tot = sum(callers.values())
    return 100.0 * callers.get("f", 0) / tot if tot > 0 else None


def tool_accuracy(r):
    """(self times by function, callers of is_prime) of an accuracy run."""
    t = r.tool
    if t.startswith("meter"):
        return meter_self(r.profile), meter_callers(r.profile, "is_prime")
    if t.startswith("perf"):
        s = r.file("perf.script")
        return perf_flat(s), perf_callers(s, "is_prime")
    if t == "gprof":
        return gprof_flat(r.file("gprof.flat")), gprof_callers(r.file("gprof.graph"), "is_prime")
    if t == "gperftools":
        return pprof_flat(r.file("pprof.txt"))[0], None
    if t == "uftrace":
        return uftrace_flat(r.file("uftrace.report")), uftrace_callers(r.file("uftrace.graph"), "is_prime")
    return {}, None


# --- the figures ---------------------------------------------------------------

def fmt(x, nd=1, unit=""):
    if x is None:
        return "n/a"
    return ("%%.%df%%s" % nd) % (x, unit)


def rnd(x, nd=1):
    return None if x is None else round(x, nd)


def tick_costs(runs, env="vm"):
    """Per-tick costs from the interleaved spin runs: for each repetition
    (extra CPU time of the work) / (ticks), then the median."""
    res = {"kernel": [], "signal": [], "perf": [], "perf_total": []}
    detail = {"kernel": [], "signal": [], "perf": []}
    reps = sorted({r.rep for r in pick(runs, env=env, phase="tick")}, key=int)
    for rep in reps:
        one = {r.tool: r for r in pick(runs, env=env, phase="tick", rep=rep)}
        off, base = one.get("off"), one.get("base")
        k, s, p = one.get("meter-kernel"), one.get("meter-signal-hr"), one.get("perf")
        if off and off.work_cpu:
            for name, r in (("kernel", k), ("signal", s)):
                if not r or not r.work_cpu:
                    continue
                ticks, samples = meter_ticks(r.profile)
                n = ticks if ticks else samples
                if n:
                    res[name].append((r.work_cpu - off.work_cpu) / n)
                    detail[name].append(n)
        if base and p and base.work_cpu and p.work_cpu:
            flat = perf_flat(p.file("perf.script"))
            n = flat.get("spin", 0) + flat.get("run_spin", 0)
            if n:
                res["perf"].append((p.work_cpu - base.work_cpu) / n)
                detail["perf"].append(n)
            tot = sum(flat.values())
            if tot and p.tree_cpu and base.tree_cpu:
                res["perf_total"].append((p.tree_cpu - base.tree_cpu) / tot)
    return {k: median(v) for k, v in res.items()}, {k: median(v) for k, v in detail.items()}, res


def resolution(runs):
    out = {}
    for r in pick(runs, env="vm", phase="res"):
        rate = r.rate
        if r.tool in ("meter-kernel", "meter-signal") and r.work_cpu:
            ticks, samples = meter_ticks(r.profile)
            sec = r.work_cpu / 1e9
            if samples is not None:
                out[r.tool + "_samples@" + rate] = samples / sec
            if ticks is not None:
                out[r.tool + "_ticks@" + rate] = ticks / sec
        elif r.tool == "perf" and r.work_cpu:
            flat = perf_flat(r.file("perf.script"))
            n = flat.get("spin", 0) + flat.get("run_spin", 0)
            out["perf@" + rate] = n / (r.work_cpu / 1e9)
        elif r.tool == "gperftools" and r.proc_cpu:
            m = re.search(r"PROFILE: interrupts/evictions/bytes = (\d+)/", r.file("stderr"))
            if m:
                out["gperftools@" + rate] = int(m.group(1)) / (r.proc_cpu / 1e9)
    return out


def overheads(runs, metric="work_cpu"):
    """{env: {tool@rate: {workload: pct}}}: median over repetitions of
    (CPU time with the tool / that of the plain build) - 1.  metric
    work_cpu: the process's CPU time from main to the end of the work (what
    the tool costs the work); tree_cpu: the whole command tree, the tool's
    start-up, exit and own processes included."""
    out = {}
    for env in ("host", "vm", "icount"):
        ovh = pick(runs, env=env, phase="ovh")
        if not ovh:
            continue
        per = {}
        for w in WORKLOADS:
            base = {r.rep: getattr(r, metric) for r in ovh
                    if r.w == w and r.tool == "base" and getattr(r, metric)}
            for r in ovh:
                v = getattr(r, metric)
                if r.w != w or r.tool == "base" or not v or not base.get(r.rep):
                    continue
                key = r.tool + ("" if r.rate == "-" else "@" + r.rate)
                per.setdefault(key, {}).setdefault(w, []).append(
                    100.0 * (v / base[r.rep] - 1.0))
        out[env] = {k: {w: median(v) for w, v in d.items()} for k, d in per.items()}
    return out


def accuracy(runs):
    """Median over repetitions of each tool's split error (with the shares
    of that repetition) and of its share of is_prime charged to f."""
    errs, callers, truth = {}, {}, None
    for r in pick(runs, phase="acc"):
        name = r.tool + ("" if r.rate in ("-", "default") else "@" + r.rate)
        name = r.env + ":" + name
        selfs, cl = tool_accuracy(r)
        if r.w == "split":
            errs.setdefault(name, []).append(split_error(selfs))
        elif r.w == "appel":
            callers.setdefault(name, []).append(f_share(cl) if cl is not None else None)
            t = r.num(r.out, "truth_f_share")
            if t is not None:
                truth = t
    split = {}
    for name, lst in errs.items():
        ok = sorted((e for e in lst if e[0] is not None), key=lambda e: e[0])
        split[name] = ok[(len(ok) - 1) // 2] if ok else (None, None)
        split[name] = split[name] + ([e[0] for e in lst],)
    caller = {k: median(v) for k, v in callers.items()}
    return split, caller, truth


def flat_shares(path):
    """%time by function from a flat report (meter-stat -f flat)."""
    rows, on = {}, False
    for line in read(path).splitlines():
        if re.match(r"^\s*time\s+seconds", line):
            on = True
            continue
        if on and not line.strip():
            break
        f = line.split()
        # a row with calls has calls and two per-call columns before the
        # name; one without (a function inlined without a record, which
        # the reading by address gives its own row) has none
        if on and len(f) >= 7 and f[3].isdigit():
            rows[" ".join(f[6:])] = float(f[0])
        elif on and len(f) >= 4 and not f[3].startswith("<"):
            rows[" ".join(f[3:])] = float(f[0])
    return rows


def insn_ratio(real, prog):
    """Median guest instructions of meter's runs of prog's plugin build
    over those of its plain build alone (the counted VM's runs only)."""
    def med(tool):
        xs = [insns.total(r) for r in real
              if r.tool == tool and os.path.basename(r.w) == prog]
        xs = [x for x in xs if x]
        return statistics.median(xs) if xs else None
    m, p = med("real-meter"), med("real-plain")
    return m / p if m and p else None


def real_programs(runs, env="vm"):
    """Per real program: mean self shares of perf (plain build, each sample
    given to its innermost program function by DWARF's inline records) and
    of meter (plugin build: as reported by default, with --correct, and
    as taken)
    over the repetitions, and meter's slow-path entries per call."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from selfshares import perf_shares, program_functions
    from pairdiffs import identical_diffs
    progs = {}
    real = pick(runs, env=env, phase="real")
    for r in real:
        prog = os.path.basename(r.w)
        d = progs.setdefault(prog, {"perf": [], "meter": [], "corr": [], "taken": [],
                                    "samples": [0, 0], "profiles": [],
                                    "names": set(), "slow": 0, "calls": 0})
        j = os.path.join(r.dir, "profile.json")
        if r.tool == "real-meter" and os.path.exists(j):
            tiny = os.path.join(ROOT, "build", "realprogs", prog, "plugin", prog + ".tiny")
            d["names"] |= program_functions(j, tiny)
            d["profiles"].append(j)
            with open(j) as f:
                p = json.load(f)
            d["slow"] += p.get("slow_entries", 0)
            d["calls"] += sum(fn.get("calls", 0) for fn in p.get("functions", []))
    for r in real:
        prog = os.path.basename(r.w)
        d = progs[prog]
        if r.tool == "real-perf":
            binary = os.path.join(ROOT, "build", "realprogs", prog, "plain", prog)
            sh, n = perf_shares(binary, os.path.join(r.dir, "perf.script"),
                                d["names"] or None)
            if sh:
                d["perf"].append(sh)
                d["samples"][0] += n
        elif r.tool == "real-meter":
            c = flat_shares(os.path.join(r.dir, "flat.txt"))
            if c:
                d["meter"].append(c)
                d["corr"].append(flat_shares(os.path.join(r.dir, "flat-corrected.txt")))
                d["taken"].append(flat_shares(os.path.join(r.dir, "flat-taken.txt")))
                m = re.search(r"^(\d+) samples", read(os.path.join(r.dir, "flat.txt")), re.M)
                d["samples"][1] += int(m.group(1)) if m else 0

    def mean(lst):
        keys = set().union(*lst) if lst else set()
        return {k: sum(x.get(k, 0.0) for x in lst) / len(lst) for k in keys}
    out = {}
    for prog, d in sorted(progs.items()):
        ps, ms, rs = mean(d["perf"]), mean(d["meter"]), mean(d["corr"])
        ts = mean(d["taken"])
        names = sorted((k for k in set(ps) | set(ms) | set(rs) | set(ts)
                        if max(ps.get(k, 0), ms.get(k, 0), rs.get(k, 0),
                               ts.get(k, 0)) >= 5.0),
                       key=lambda k: -ps.get(k, 0))
        rows = {k: (ps.get(k, 0.0), ms.get(k, 0.0), rs.get(k, 0.0), ts.get(k, 0.0))
                for k in names}
        out[prog] = {
            "rows": rows,
            "max_diff": max((abs(b - a) for a, b, _, _ in rows.values()), default=None),
            "max_diff_corrected": max((abs(c - a) for a, _, c, _ in rows.values()),
                                      default=None),
            "max_diff_taken": (max((abs(t - a) for a, _, _, t in rows.values()), default=None)
                               if d["taken"] and any(d["taken"]) else None),
            # the bar: the functions above 5 % in perf's profile
            "max_diff_perf5": max((abs(b - a) for a, b, _, _ in rows.values() if a >= 5.0),
                                  default=None),
            "max_diff_corrected_perf5": max((abs(c - a) for a, _, c, _ in rows.values()
                                             if a >= 5.0), default=None),
            "reps": (len(d["perf"]), len(d["meter"])),
            "samples": d["samples"],
            "slow_per_call": d["slow"] / d["calls"] if d["calls"] else None,
            # guest instructions (counted VM): meter's run over the plain one
            "insn_ratio": insn_ratio(real, prog),
            "slow": d["slow"],
            "identical": identical_diffs(d["profiles"]),
        }
    return out


def real_json(real):
    return {prog: {
        "max_diff_pp": rnd(d["max_diff"], 2),
        "max_diff_corrected_pp": rnd(d["max_diff_corrected"], 2),
        "max_diff_perf5_pp": rnd(d["max_diff_perf5"], 2),
        "max_diff_corrected_perf5_pp": rnd(d["max_diff_corrected_perf5"], 2),
        "max_diff_as_taken_pp": rnd(d["max_diff_taken"], 2),
        "slow_entries": d["slow"],
        "insn_ratio": rnd(d["insn_ratio"], 3),
        "slow_entries_per_call": d["slow_per_call"],
        # meter-stat diff of each pair of runs: pairs, pairs marking a change
        "identical_pairs": d["identical"][0] if d["identical"] else None,
        "identical_pairs_flagged": d["identical"][1] if d["identical"] else None,
        "self_pct": {k: {"perf": rnd(a, 2), "meter": rnd(b, 2), "meter_corrected": rnd(c, 2),
                         "meter_as_taken": rnd(t, 2)}
                     for k, (a, b, c, t) in d["rows"].items()},
    } for prog, d in real.items()}


def startup(out):
    """The start-up line of bench/callcost.sh: (first run, later runs, plain)."""
    m = re.search(r"^startup: .*meter first run (\d+), meter later runs (\d+), without meter (\d+)",
                  read(os.path.join(out, "host", "callcost.txt")), re.M)
    return tuple(int(x) for x in m.groups()) if m else (None, None, None)


def percall(out):
    rows = {}
    for line in read(os.path.join(out, "host", "callcost.txt")).splitlines():
        if line.startswith("startup:"):
            continue
        m = re.match(r"^(.*?)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", line)
        if not m or m.group(1).strip() == "variant":
            continue

        def num(s):
            try:
                return float(s)
            except ValueError:
                return None
        rows[m.group(1).strip()] = (num(m.group(2)), num(m.group(3)), num(m.group(4)))
    return rows


def last_json(path):
    """The JSON object on the last line of a phase's output, or None."""
    lines = read(path).strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None


def lua_figures(path):
    """bench/lua.sh's lines: instructions per call over the plain call,
    and whole-run overhead percentages."""
    per, whole = {}, {}
    for line in read(path).splitlines():
        m = re.match(r"\s+(plain|meter|hook)\s+\d+ instr\s+(-?\d+) over plain", line)
        if m:
            per[m.group(1)] = int(m.group(2))
        m = re.match(r"\s+(\w+)\s+(meter|hook)\s+(-?[\d.]+) %", line)
        if m:
            whole.setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
    return {"percall_instr": per, "whole_instr_overhead_pct": whole} if per else None


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bench/out"
    runs = load(out)
    failed = [r for r in runs if not r.ok]
    ticks, tick_n, tick_all = tick_costs(runs)
    hticks, htick_n, htick_all = tick_costs(runs, "host")
    loadavg = [read(os.path.join(out, f)).strip() for f in ("loadavg.before", "loadavg.after")]
    res = resolution(runs)
    ovh = overheads(runs)
    ovh_whole = overheads(runs, "tree_cpu")
    split, caller, truth = accuracy(runs)
    pc = percall(out)
    su = startup(out)
    real = real_programs(runs)
    real_ic = real_programs(runs, "icount")
    real_host = real_programs(runs, "host")
    counted = insns.summary(runs, WORKLOADS)
    wall = kv(read(os.path.join(out, "wall"))).get("wall_s")

    p = print
    p("")
    p("meter benchmarks (Documentation/performance.md)")
    p("")
    p("Per-tick cost, VM (QEMU TCG, Debian 6.1 cloud), spin workload at 10 kHz,")
    p("median of %d interleaved repetitions; CPU time of the profiled process:" %
      len(tick_all["kernel"] or tick_all["signal"] or [0]))
    p("  %-44s %12s %10s" % ("", "ns/tick", "ticks/run"))
    p("  %-44s %12s %10s" % ("meter.ko tick (kernel backend)", fmt(ticks["kernel"], 0), fmt(tick_n["kernel"], 0)))
    p("  %-44s %12s %10s" % ("SIGPROF to libmeter's handler (signal backend)", fmt(ticks["signal"], 0), fmt(tick_n["signal"], 0)))
    p("  %-44s %12s %10s" % ("perf record -e task-clock sample (in task)", fmt(ticks["perf"], 0), fmt(tick_n["perf"], 0)))
    p("  %-44s %12s" % ("perf sample, perf's own process included", fmt(ticks["perf_total"], 0)))
    ratio = ticks["signal"] / ticks["kernel"] if ticks["signal"] and ticks["kernel"] and ticks["kernel"] > 0 else None
    p("  signal / kernel: %s    perf / kernel: %s" % (
        fmt(ratio, 1, "x"),
        fmt(ticks["perf"] / ticks["kernel"] if ticks["perf"] and ticks["kernel"] and ticks["kernel"] > 0 else None, 1, "x")))
    p("  per repetition (ns): kernel %s; signal %s; perf %s" % tuple(
        " ".join(fmt(x, 0) for x in tick_all[k]) or "n/a" for k in ("kernel", "signal", "perf")))
    p("")
    p("The same on the host (real CPU, no meter.ko: signal backend and perf only):")
    p("  %-44s %12s %10s" % ("SIGPROF to libmeter's handler (signal backend)", fmt(hticks["signal"], 0), fmt(htick_n["signal"], 0)))
    p("  %-44s %12s %10s" % ("perf record -e task-clock sample (in task)", fmt(hticks["perf"], 0), fmt(htick_n["perf"], 0)))
    p("  %-44s %12s" % ("perf sample, perf's own process included", fmt(hticks["perf_total"], 0)))
    p("  per repetition (ns): signal %s; perf %s" % tuple(
        " ".join(fmt(x, 0) for x in htick_all[k]) or "n/a" for k in ("signal", "perf")))
    p("")
    insns.report(p, counted, WORKLOADS)
    p("Per-call cost (host, bench/callcost.sh: callgrind instructions, ns/call noisy):")
    for k, (ins, ov, ns) in pc.items():
        p("  %-44s %8s instr %8s over baseline %8s ns" % (k, fmt(ins), fmt(ov), fmt(ns, 2)))
    p("")
    p("Start-up (host, callgrind, an empty main built with -finstrument-functions):")
    p("  meter, later runs (calibration kept) %s instr; first run on the machine %s;" % (
        fmt(su[1], 0), fmt(su[0], 0)))
    p("  without meter %s" % fmt(su[2], 0))
    p("")
    for title, rp, backend in (("VM", real, "kernel"),
                               ("VM under -icount (deterministic clock)", real_ic, "kernel"),
                               ("host (real CPU)", real_host, "signal")):
        if not rp:
            continue
        p("Real programs, %s (bench/realprogs.sh, built with Debian's flags:" % title)
        p("  dpkg-buildflags, -O2, inlining on): self share per function >= 5 %,")
        p("  meter (GCC plugin, %s backend, 4 kHz; as reported by default (by" % backend)
        p("  address where the profile has addresses), with --correct, and as taken)")
        p("  beside perf record on the plain build (4 kHz; each sample given to its")
        p("  innermost program function by DWARF's inline records, time in libc and")
        p("  the kernel to the calling program function):")
        if backend == "signal":
            p("  (the signal backend's ticks come at the scheduler tick, about 250 a")
            p("  second, each sample weighted by the periods it stands for)")
        for prog, d in rp.items():
            p("  %s (%d perf runs, %d meter runs; %d and %d samples):" % (
                prog, d["reps"][0], d["reps"][1], d["samples"][0], d["samples"][1]))
            p("    %-28s %8s %8s %8s %8s %8s" % ("function", "perf %", "meter %", "diff pp",
                                             "corr %", "taken %"))
            for k, (a, b, c, t) in d["rows"].items():
                p("    %-28s %8.2f %8.2f %+8.2f %8.2f %8.2f" % (k[:28], a, b, b - a, c, t))
            p("    largest difference: %s pp as reported, %s pp with --correct, %s pp as taken" % (
                fmt(d["max_diff"], 2), fmt(d["max_diff_corrected"], 2),
                fmt(d["max_diff_taken"], 2)))
            p("    among the functions above 5 %% in perf: %s pp as reported, %s pp with --correct" % (
                fmt(d["max_diff_perf5"], 2), fmt(d["max_diff_corrected_perf5"], 2)))
            if d["insn_ratio"] is not None:
                p("    guest instructions, meter's run over the plain build's: %.3f" % d["insn_ratio"])
            p("    slow-path entries: %d, %s per call" % (
                d["slow"], "%.2g" % d["slow_per_call"] if d["slow_per_call"] is not None else "n/a"))
            if d["identical"]:
                p("    meter-stat diff of the runs, pair by pair: %d of %d pairs mark a change"
                  % (d["identical"][1], d["identical"][0]))
                p("      (band up to %.2f sigma, for up to %d shares compared)"
                  % (d["identical"][2], d["identical"][3]))
        p("")
    p("Resolution, VM: samples per CPU-second delivered (spin workload):")
    p("  %-44s %10s %10s" % ("", "1 kHz", "10 kHz"))
    for label, key in (("meter kernel, ticks (interrupts)", "meter-kernel_ticks"),
                       ("meter kernel, samples (weighted periods)", "meter-kernel_samples"),
                       ("meter signal, ticks (signals)", "meter-signal_ticks"),
                       ("meter signal, samples (weighted)", "meter-signal_samples"),
                       ("gperftools (CPUPROFILE_FREQUENCY)", "gperftools"),
                       ("perf record -F", "perf")):
        p("  %-44s %10s %10s" % (label, fmt(res.get(key + "@1000"), 0), fmt(res.get(key + "@10000"), 0)))
    p("")
    for env in ("vm", "icount", "host"):
        if env not in ovh:
            continue
        p("Overhead, %s: %% more CPU time than the uninstrumented build, median of" % env)
        p("  interleaved repetitions; work: the process from main to the end of the")
        p("  work; whole: the command tree (start-up, exit, the tool's processes):")
        p("  %-26s %9s %9s %9s  | %9s %9s %9s" % ("tool@rate (Hz)", *WORKLOADS, *WORKLOADS))
        for k in sorted(ovh[env]):
            p("  %-26s %9s %9s %9s  | %9s %9s %9s" % (
                k, *(fmt(ovh[env][k].get(w), 1) for w in WORKLOADS),
                *(fmt(ovh_whole.get(env, {}).get(k, {}).get(w), 1) for w in WORKLOADS)))
        p("")
    p("Accuracy (median of repetitions): split 50/30/20, largest error of the")
    p("self-time shares in pp (every repetition's in brackets); Appel's f/g:")
    p("share of is_prime's time charged to f (truth %s %%):" % fmt(truth, 2))
    p("  %-34s %14s %18s %14s" % ("tool", "split err (pp)", "shares h/m/l", "is_prime <- f"))
    for k in sorted(set(split) | set(caller)):
        err, shares, _ = split.get(k, (None, None, []))
        sh = "/".join(fmt(shares[x], 1) for x in ("heavy", "medium", "light")) if shares else "n/a"
        reps = split.get(k, (None, None, []))[2]
        p("  %-34s %14s %18s %14s  [%s]" % (k, fmt(err, 2), sh, fmt(caller.get(k), 1),
                                          " ".join(fmt(e, 1) for e in reps)))
    if failed:
        p("")
        p("Runs that failed: " + ", ".join("%s:%s@%s/%s" % (r.env, r.tool, r.rate, r.w) for r in failed))
    if wall:
        p("")
        p("wall time of the whole run: %s s; host load average before/after: %s" %
          (wall, " / ".join(x or "?" for x in loadavg)))

    meter_acc = [split[k][0] for k in ("vm:meter-kernel@10000", "vm:meter-auto@10000")
                 if k in split and split[k][0] is not None]

    def peer_acc(prefix):
        v = [e for k, (e, _, _) in split.items() if k.startswith(prefix) and e is not None]
        return rnd(max(v), 2) if v else None

    def pcv(label, i):
        for k, v in pc.items():
            if k.startswith(label):
                return v[i]
        return None

    summary = {
        "kernel_tick_ns": rnd(ticks["kernel"]),
        "signal_tick_ns": rnd(ticks["signal"]),
        "perf_sample_ns": rnd(ticks["perf"]),
        "perf_sample_total_ns": rnd(ticks["perf_total"]),
        "signal_over_kernel": rnd(ratio, 2),
        "host_signal_tick_ns": rnd(hticks["signal"]),
        "host_perf_sample_ns": rnd(hticks["perf"]),
        "tick_env": "QEMU TCG (one thread), 2 vCPUs, Linux 6.1 cloud, 10 kHz, CPU time",
        "accuracy_max_error_pp": rnd(max(meter_acc), 2) if meter_acc else None,
        "accuracy_peers_max_error_pp": {
            "meter_signal": peer_acc("host:meter-signal"),
            "gprof": peer_acc("host:gprof"),
            "gperftools": peer_acc("host:gperftools"),
            "uftrace": peer_acc("host:uftrace"),
            "perf": peer_acc("vm:perf"),
        },
        "caller_share_f_pct": dict({"truth": rnd(truth, 2)},
                                   **{k: rnd(v, 1) for k, v in sorted(caller.items())}),
        "resolution_per_cpu_s": {k: rnd(v, 0) for k, v in sorted(res.items())},
        "startup_instr": su[1],
        "startup_instr_first_run": su[0],
        "startup_instr_without_meter": su[2],
        "percall_instr": {
            "appel_by_hand": pcv("Appel increment", 1),
            "meter_flat": pcv("meter flat", 1),
            "meter_manual": pcv("meter manual", 1),
            "meter_plugin": pcv("meter GCC plugin, stacked", 1),
            "meter_plugin_flat": pcv("meter GCC plugin, flat", 1),
            "meter_patched": pcv("meter --patch", 1),
            "meter_auto": pcv("meter automatic (", 1),
            "gprof": pcv("gprof", 1),
            "uftrace": pcv("uftrace record (gcc -pg)", 1),
            "uftrace_dynamic": pcv("uftrace record -P", 1),
        },
        "percall_ns": {
            "appel_by_hand": pcv("Appel increment", 2),
            "meter_flat": pcv("meter flat", 2),
            "meter_manual": pcv("meter manual", 2),
            "meter_plugin": pcv("meter GCC plugin, stacked", 2),
            "meter_plugin_flat": pcv("meter GCC plugin, flat", 2),
            "meter_patched": pcv("meter --patch", 2),
            "meter_auto": pcv("meter automatic (", 2),
            "gprof": pcv("gprof", 2),
            "uftrace": pcv("uftrace record (gcc -pg)", 2),
            "uftrace_dynamic": pcv("uftrace record -P", 2),
        },
        "real_programs": real_json(real),
        "real_programs_icount": real_json(real_ic),
        "real_programs_host": real_json(real_host),
        "accuracy_icount_max_error_pp": rnd(split["icount:meter-kernel@10000"][0], 2)
        if split.get("icount:meter-kernel@10000", (None,))[0] is not None else None,
        "overhead_pct": {env: {k: {w: rnd(x) for w, x in d.items()} for k, d in sorted(v.items())}
                         for env, v in ovh.items()},
        "overhead_whole_pct": {env: {k: {w: rnd(x) for w, x in d.items()} for k, d in sorted(v.items())}
                               for env, v in ovh_whole.items()},
        **insns.json_keys(counted),
        "python": last_json(os.path.join(out, "host", "python.txt")),
        "lua": lua_figures(os.path.join(out, "host", "lua.txt")),
        "patch_overhead": last_json(os.path.join(out, "host", "patch_overhead.txt")),
        "peers": ["gprof", "perf", "gperftools", "uftrace"],
        "failed_runs": len(failed),
        "wall_s": int(wall) if wall else None,
        "host_loadavg": loadavg,
    }
    for name in ("python.txt", "lua.txt", "patch_overhead.txt"):
        text = [line for line in read(os.path.join(out, "host", name)).splitlines()
                if not line.startswith("{")]
        if text:
            p("")
            for line in text:
                p(line)
    p(json.dumps(summary, sort_keys=False, separators=(",", ":")))


if __name__ == "__main__":
    main()
