#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""meter-stat diff of two runs of one build, pair by pair: does a diff of
identical runs mark a change (bench/summarize.py's real programs)."""
import itertools
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def identical_diffs(profiles):
    """meter-stat diff (by default) of every pair of runs of one build:
    (pairs, pairs that mark a change, the largest z, the most shares
    compared); None without meter-stat, two profiles, or any pair's
    diff (a figure over some of the pairs would hide the others)."""
    stat = os.path.join(ROOT, "build", "tools", "meter-stat")
    if len(profiles) < 2 or not os.access(stat, os.X_OK):
        return None
    pairs = flagged = 0
    z, m = 0.0, 0
    for a, b in itertools.combinations(sorted(profiles), 2):
        try:
            r = subprocess.run([stat, "diff", "-f", "json", a, b],
                               capture_output=True, text=True, timeout=600)
            d = json.loads(r.stdout) if r.returncode == 0 else None
            # a meter-stat older than the band for many shares: no figure
            if d is None or "sigmas" not in d:
                return None
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return None
        pairs += 1
        flagged += d.get("changed", 0) > 0
        z = max(z, d["sigmas"])
        m = max(m, d.get("shares_compared", 0))
    return (pairs, flagged, z, m) if pairs else None
