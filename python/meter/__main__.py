# SPDX-License-Identifier: MIT
"""python3 -m meter [METER-RUN OPTIONS] [--builtins] (SCRIPT | -m MODULE |
-c COMMAND) [ARGS]: profiles a Python program as ``python3 -m cProfile``
does, through meter-run (which prints the report: meter-run's report
options apply, ``-f html -o report.html`` and the rest).  --builtins gives
builtins records of their own (METER_PYTHON_BUILTINS=1)."""
import getopt
import os
import shutil
import sys

# meter-run's options (meter-run --help); those with "=" take a value
_SHORT = "f:o:F:b:h"
_LONG = ["format=", "output=", "order=", "threshold=", "inclusive",
         "exclusive", "hide-self=", "hide-subs=", "threads", "correct",
         "no-correction", "whole-names", "hide-idle=", "frequency=",
         "period=", "clock=", "backend=", "periodic=", "repeat=",
         "follow-fork", "no-progress", "alloc", "help", "builtins"]


def _meter_run():
    """meter-run beside this package in the build tree, else on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "tools", "meter-run")
    if os.access(tree, os.X_OK):
        return os.path.realpath(tree)
    return shutil.which("meter-run")


def main(argv):
    try:
        opts, rest = getopt.getopt(argv, _SHORT, _LONG)
    except getopt.GetoptError as e:
        sys.stderr.write("python3 -m meter: %s\n" % e)
        return 2
    run_args = []
    for o, v in opts:
        if o == "--builtins":
            os.environ["METER_PYTHON_BUILTINS"] = "1"
            continue
        run_args += [o, v] if v or o.lstrip("-") + "=" in _LONG or \
            (len(o) == 2 and o[1] + ":" in _SHORT) else [o]
    if ("-h", "") in opts or ("--help", "") in opts or not rest:
        sys.stderr.write(__doc__ + "\n")
        return 0 if rest or opts else 2
    run = _meter_run()
    if not run:
        sys.stderr.write("python3 -m meter: meter-run is not on PATH\n")
        return 127
    os.execv(run, [run] + run_args + ["--", sys.executable] + rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
