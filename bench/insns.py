# SPDX-License-Identifier: MIT
"""The instruction-counted part of `make bench` (bench/run.sh icount_part,
in selftests/vm-run --count-insns --icount): exact guest instructions per
run, read from runs/ID/icount.txt (selftests/icount/vm-icount).  Used by
bench/summarize.py; see Documentation/performance.md.

Each figure is a difference of two runs, so that what does not scale with
the measured quantity (start-up, exit, the tool's set-up) cancels out:
per tick, the runs of SCALE and 2 SCALE; per call, N and 2N calls.
"""
import os
import re
import statistics


def insns(run):
    """(user, kernel) instructions of one run, or None."""
    try:
        with open(os.path.join(run.dir, "icount.txt")) as f:
            m = re.search(r"icount user (\d+) kernel (\d+)", f.read())
    except OSError:
        return None
    return (int(m.group(1)), int(m.group(2))) if m else None


def total(run):
    i = insns(run)
    return i[0] + i[1] if i else None


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def perf_sample_count(run):
    """Samples in a perf run: lines of `perf script -F ip,sym` (one per
    sample without call graphs)."""
    try:
        with open(os.path.join(run.dir, "perf.script"), errors="replace") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return None


def ticks_of(run):
    if run.tool == "perf":
        return perf_sample_count(run)
    p = run.profile
    return p.get("ticks") if p else None


# the tool whose runs are each one's baseline: the same binary without
# sampling (meter's), the plain binary (perf's)
TICK_TOOLS = {"meter": ("meter-kernel", "off"), "floor": ("meter-floor", "off"),
              "signal": ("meter-signal-hr", "off"), "perf": ("perf", "base"),
              "perfclock": ("meter-perfclock", "off"),
              "perfclock_floor": ("meter-perfclock-floor", "off")}

# the two CPU-clock designs, whose context switches are counted: meter.ko's
# own hrtimer (its tick) and perf's task clock (cpu_timer=0)
SWITCH_TOOLS = {"meter": "meter-kernel", "perfclock": "meter-perfclock"}


def tick_insns(runs):
    """{tool: [instructions per tick, one per repetition]}: (the tool's
    extra instructions at 2 SCALE - at SCALE) / (its extra ticks)."""
    out = {k: [] for k in TICK_TOOLS}
    sel = [r for r in runs if r.ok and r.env == "icount" and r.phase == "insns"]
    for rep in sorted({r.rep for r in sel}, key=int):
        by = {}
        for r in sel:
            if r.rep == rep:
                by.setdefault(r.tool, []).append(r)

        def pair(tool):
            rs = sorted(by.get(tool, []), key=lambda r: int(r.scale))
            return (rs[0], rs[-1]) if len(rs) >= 2 else None
        for name, (tool, base) in TICK_TOOLS.items():
            t, b = pair(tool), pair(base)
            if not t or not b:
                continue
            dt = [total(t[1]), total(t[0]), total(b[1]), total(b[0])]
            n1, n0 = ticks_of(t[1]), ticks_of(t[0])
            if None in dt or n1 is None or n0 is None or n1 <= n0:
                continue
            out[name].append(((dt[0] - dt[1]) - (dt[2] - dt[3])) / (n1 - n0))
    return out


def switches_of(run):
    """The process's context switches, as the switch workload prints them."""
    try:
        with open(os.path.join(run.dir, "stdout")) as f:
            m = re.search(r"switches=(\d+)", f.read())
    except OSError:
        return None
    return int(m.group(1)) if m else None


def switch_insns(runs):
    """{design: [instructions a context switch adds, one per repetition]}:
    the tool's instructions per extra switch from SCALE to 2 SCALE, less
    the same for the binary not profiled.  Each side is divided by its own
    switches: the runs differ by a few, and a few base switches are ~2200
    instructions each."""
    out = {k: [] for k in SWITCH_TOOLS}
    sel = [r for r in runs if r.ok and r.env == "icount" and r.phase == "switch"]
    for rep in sorted({r.rep for r in sel}, key=int):
        by = {}
        for r in sel:
            if r.rep == rep:
                by.setdefault(r.tool, []).append(r)

        def pair(tool):
            rs = sorted(by.get(tool, []), key=lambda r: int(r.scale))
            return (rs[0], rs[-1]) if len(rs) >= 2 else None
        b = pair("off")
        for name, tool in SWITCH_TOOLS.items():
            t = pair(tool)
            if not t or not b:
                continue
            dt = [total(t[1]), total(t[0]), total(b[1]), total(b[0])]
            n = [switches_of(x) for x in (t[1], t[0], b[1], b[0])]
            if None in dt or None in n or n[0] <= n[1] or n[2] <= n[3]:
                continue
            out[name].append((dt[0] - dt[1]) / (n[0] - n[1]) -
                             (dt[2] - dt[3]) / (n[2] - n[3]))
    return out


def ticks_per_cpu_s(runs, tool="meter-kernel"):
    """{rate: interrupts taken per CPU-second}: meter's ticks over the
    registered threads' CPU time (samples x period)."""
    out = {}
    for r in runs:
        if not (r.ok and r.env == "icount" and r.phase == "rate" and r.profile
                and r.tool == tool):
            continue
        p = r.profile
        cpu = p.get("samples", 0) * p.get("period_ns", 0) / 1e9
        if cpu > 0 and p.get("ticks") is not None:
            out[int(r.rate)] = p["ticks"] / cpu
    return out


def percall(runs):
    """{variant: user instructions per call over the uninstrumented call}
    in the VM: (user at 2N - at N) / N."""
    per = {}
    for r in runs:
        if not (r.ok and r.env == "icount" and r.phase == "percall"):
            continue
        per.setdefault(r.tool, []).append((int(r.scale), insns(r)))
    calls = {}
    for v, lst in per.items():
        lst = sorted(x for x in lst if x[1])
        if len(lst) >= 2:
            (n0, i0), (n1, i1) = lst[0], lst[-1]
            calls[v] = (i1[0] - i0[0]) / (n1 - n0)
    base = calls.get("baseline")
    return {v: (c, c - base if base is not None else None) for v, c in calls.items()}


def overheads(runs, workloads):
    """{tool@rate: {workload: %}}: instructions of the whole command
    (every process, user and kernel) over the plain build's, minus 1."""
    sel = [r for r in runs if r.ok and r.env == "icount" and r.phase == "ovh"]
    out = {}
    for w in workloads:
        base = [total(r) for r in sel if r.w == w and r.tool == "base"]
        base = _median(base)
        if not base:
            continue
        for r in sel:
            t = total(r)
            if r.w != w or r.tool == "base" or t is None:
                continue
            key = r.tool + ("" if r.rate == "-" else "@" + r.rate)
            out.setdefault(key, {}).setdefault(w, []).append(100.0 * (t / base - 1.0))
    return {k: {w: _median(v) for w, v in d.items()} for k, d in out.items()}


def summary(runs, workloads):
    ti = tick_insns(runs)
    med = {k: _median(v) for k, v in ti.items()}
    m, fl, s = med["meter"], med["floor"], med["signal"]
    c, cf = med["perfclock"], med["perfclock_floor"]
    sw = switch_insns(runs)
    ratios = {
        "meter_over_floor": m / fl if m and fl else None,
        "signal_above_floor_over_meter_above_floor":
            (s - fl) / (m - fl) if s and m and fl and m > fl else None,
        "perfclock_over_meter": c / m if c and m else None,
        "perfclock_floor_over_floor": cf / fl if cf and fl else None,
    }
    return {"tick": med, "tick_reps": ti, "ratios": ratios,
            "switch": {k: _median(v) for k, v in sw.items()}, "switch_reps": sw,
            "ticks_per_cpu_s": ticks_per_cpu_s(runs),
            "ticks_per_cpu_s_perfclock": ticks_per_cpu_s(runs, "meter-perfclock"),
            "percall": percall(runs),
            "overhead": overheads(runs, workloads)}


def _f(x, nd=0):
    return "n/a" if x is None else "%.*f" % (nd, x)


def _r(x, nd=1):
    return None if x is None else round(x, nd)


PERCALL_LABELS = (("manual", "meter manual (METER_FUNCTION)"),
                  ("flat", "meter flat (METER_FUNCTION_FLAT)"),
                  ("plugin", "meter GCC plugin, stacked"),
                  ("plugin_flat", "meter GCC plugin, flat"),
                  ("auto", "meter automatic (-finstrument-functions)"),
                  ("patched", "meter --patch (plain build, patched)"))


def report(p, s, workloads):
    """The table's section (p: print)."""
    t, reps, ra = s["tick"], s["tick_reps"], s["ratios"]
    p("Exact instruction counts, VM under -icount (one vCPU; bench/insns.py,")
    p("selftests/icount): per tick at 10 kHz on spin, (extra instructions at")
    p("2 SCALE - at SCALE) / (extra interrupts); every process, user and kernel:")
    for k, label in (("meter", "meter.ko tick (its own CPU-time hrtimer)"),
                     ("floor", "floor: the same timer, a handler that returns"),
                     ("signal", "SIGPROF to libmeter's handler"),
                     ("perf", "perf record -e task-clock sample"),
                     ("perfclock", "meter.ko tick on perf's task clock"),
                     ("perfclock_floor", "floor: that timer, a handler that returns")):
        p("  %-48s %10s instr  [%s]" % (label, _f(t[k]), " ".join(_f(x) for x in reps[k])))
    p("  meter / floor: %s    (signal - floor) / (meter - floor): %s" % (
        _f(ra["meter_over_floor"], 2), _f(ra["signal_above_floor_over_meter_above_floor"], 1)))
    p("  tick designs: perf's task clock / meter's hrtimer: the tick %s, the floors %s" % (
        _f(ra["perfclock_over_meter"], 3), _f(ra["perfclock_floor_over_floor"], 3)))
    sw, swr = s["switch"], s["switch_reps"]
    for k, label in (("meter", "meter's hrtimer (meter.ko's tick)"),
                     ("perfclock", "perf's task clock (cpu_timer=0)")):
        p("  a context switch of a registered thread, %-37s %6s instr  [%s]" % (
            label, _f(sw.get(k)), " ".join(_f(x) for x in swr.get(k, []))))
    for key, who in (("ticks_per_cpu_s", "meter's"),
                     ("ticks_per_cpu_s_perfclock", "on perf's task clock,")):
        tp = s[key]
        p("  %s interrupts taken per CPU-second: %s" % (who, ", ".join(
            "%d Hz: %s" % (k, _f(tp[k], 1)) for k in sorted(tp)) if tp else "n/a"))
    if s["percall"]:
        p("  per call over the bare call, user instructions (N and 2N calls):")
        for k, label in PERCALL_LABELS:
            c = s["percall"].get(k)
            p("    %-46s %8s" % (label, _f(c[1], 1) if c else "n/a"))
    if s["overhead"]:
        p("  whole-run instruction overhead, % over the plain build (every process:")
        p("  start-up, calibration and the tool's own processes included):")
        p("    %-26s %9s %9s %9s" % ("tool@rate (Hz)", *workloads))
        for k in sorted(s["overhead"]):
            p("    %-26s %9s %9s %9s" % (k, *(_f(s["overhead"][k].get(w), 1) for w in workloads)))
    p("")


def json_keys(s):
    return {
        "tick_insns": {k: _r(v, 0) for k, v in s["tick"].items()},
        "tick_insns_reps": {k: [_r(x, 0) for x in v] for k, v in s["tick_reps"].items()},
        "tick_insns_ratios": {k: _r(v, 3) for k, v in s["ratios"].items()},
        "ticks_per_cpu_s": {str(k): _r(v, 1) for k, v in sorted(s["ticks_per_cpu_s"].items())},
        "ticks_per_cpu_s_perfclock": {str(k): _r(v, 1) for k, v in
                                      sorted(s["ticks_per_cpu_s_perfclock"].items())},
        "switch_insns": {k: _r(v, 0) for k, v in s["switch"].items()},
        "switch_insns_reps": {k: [_r(x, 0) for x in v] for k, v in s["switch_reps"].items()},
        "percall_instr_vm": {k: _r(c[1], 1) for k, c in s["percall"].items() if k != "baseline"},
        "overhead_instr_pct": {k: {w: _r(x) for w, x in d.items()}
                               for k, d in sorted(s["overhead"].items())},
    }
