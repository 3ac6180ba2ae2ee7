# SPDX-License-Identifier: MIT
"""What each tool reported, read back for bench/summarize.py: meter's JSON
profile, perf script, gprof, google-pprof and uftrace report, each as the
self time per function and the callers of one leaf."""
import re


def meter_ticks(p):
    """(ticks, samples) of a meter profile; ticks is None when not written."""
    if not p:
        return None, None
    # "ticks": 0 with samples is a writer that does not fill it in
    return p.get("ticks") or None, p.get("samples")


def meter_self(p):
    if not p:
        return {}
    return {f["name"]: f.get("self_samples", 0) for f in p.get("functions", [])}


def meter_callers(p, leaf):
    if not p:
        return {}
    names = {f["id"]: f["name"] for f in p.get("functions", [])}
    out = {}
    for s in p.get("stacks", []):
        fr = s.get("frames", [])
        if len(fr) >= 2 and names.get(fr[-1]) == leaf:
            c = names.get(fr[-2], "?")
            out[c] = out.get(c, 0) + s.get("samples", 0)
    return out


def perf_samples(text):
    """[(leaf, caller)] from `perf script -F ip,sym`: one line per sample
    without -g; with -g one block per sample (frames indented by a tab,
    leaf first), blocks separated by blank lines."""
    def sym(line):
        parts = line.split(None, 1)
        return parts[1].strip() if len(parts) > 1 else "[unknown]"

    lines = text.splitlines()
    if not any(line.startswith("\t") for line in lines):
        return [(sym(line), None) for line in lines if line.strip()]
    # the user-space part of each chain: a sample taken in the kernel
    # (interrupt, system call) is charged to the user function under it
    samples, block = [], []
    for line in lines + [""]:
        if line.strip():
            if not line.split()[0].startswith("ffffffff"):
                block.append(sym(line))
        else:
            if block:
                samples.append((block[0], block[1] if len(block) > 1 else None))
            block = []
    return samples


def perf_flat(text):
    out = {}
    for leaf, _ in perf_samples(text):
        out[leaf] = out.get(leaf, 0) + 1
    return out


def perf_callers(text, leaf):
    out = {}
    for lf, caller in perf_samples(text):
        if lf == leaf and caller:
            out[caller] = out.get(caller, 0) + 1
    return out


def gprof_flat(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+.*?(\S+)\s*$", line)
        if m:
            out[m.group(2)] = out.get(m.group(2), 0.0) + float(m.group(1))
    return out


def gprof_callers(text, leaf):
    """Parents' 'self' in leaf's call-graph entry: gprof's apportioning."""
    out = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^\[\d+\]", line) and re.search(r"\s%s \[\d+\]\s*$" % re.escape(leaf), line):
            j = i - 1
            while j >= 0 and not lines[j].startswith("-----") and lines[j].strip():
                m = re.match(r"^\s+([\d.]+)\s+([\d.]+)\s+\S+\s+(\S+) \[\d+\]", lines[j])
                if m:
                    out[m.group(3)] = float(m.group(1))
                j -= 1
            break
    return out


def pprof_flat(text):
    out = {}
    total = None
    for line in text.splitlines():
        m = re.match(r"^Total: (\d+) samples", line)
        if m:
            total = int(m.group(1))
        m = re.match(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(\S+)", line)
        if m:
            out[m.group(2)] = int(m.group(1))
    return out, total


UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def uftrace_flat(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d.]+) (\w+)\s+([\d.]+) (\w+)\s+(\d+)\s+(\S.*?)\s*$", line)
        if m and m.group(4) in UNITS:
            out[m.group(6)] = float(m.group(3)) * UNITS[m.group(4)]
    return out


def uftrace_callers(text, leaf):
    out = {}
    t = None
    frames = []

    def flush():
        if t is not None and len(frames) >= 2 and frames[-1] == leaf:
            out[frames[-2]] = out.get(frames[-2], 0.0) + t

    for line in text.splitlines():
        m = re.match(r"^\s*backtrace #\d+: hit \d+, time\s+([\d.]+) (\w+)", line)
        if m:
            flush()
            t = float(m.group(1)) * UNITS.get(m.group(2), 0)
            frames = []
            continue
        m = re.match(r"^\s*\[\d+\] (\S+)", line)
        if m and t is not None:
            frames.append(m.group(1))
        elif line.startswith("=") and "CALL GRAPH" in line:
            flush()
            t = None
    flush()
    return out
