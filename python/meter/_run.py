# SPDX-License-Identifier: MIT
"""What meter-run puts before a Python program: ``python3 [OPTIONS] -m
meter._run (SCRIPT | -m MODULE | -c COMMAND | -) [ARGS]``.  It starts the
profile hook on every thread, then runs the program as the interpreter
would have (sys.argv, __main__ and sys.path[0] as without it)."""
import os
import runpy
import sys

from . import _meter

# METER_PYTHON_BUILTINS=1: builtins get records too (the profile hook)
_BUILTINS = os.environ.get("METER_PYTHON_BUILTINS", "") == "1"


def _start():
    # os._exit() would end a forked child past libmeter: its profile lost
    os._exit = _meter._exit
    _meter.start(builtins=_BUILTINS)


def _usage():
    sys.stderr.write("usage: python3 -m meter._run "
                     "(SCRIPT | -m MODULE | -c COMMAND | -) [ARGS]\n")
    sys.exit(2)


def main(argv):
    if not argv:
        _usage()
    if argv[0] == "-c":
        if len(argv) < 2:
            _usage()
        sys.argv = ["-c"] + argv[2:]
        sys.path[0] = ""
        code = compile(argv[1], "<string>", "exec")
        main_mod = sys.modules["__main__"]
        _start()
        exec(code, main_mod.__dict__)
    elif argv[0] == "-m":
        if len(argv) < 2:
            _usage()
        sys.argv = [argv[1]] + argv[2:]
        sys.path[0] = os.getcwd()
        _start()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-":
        sys.argv = ["-"] + argv[1:]
        sys.path[0] = ""
        code = compile(sys.stdin.read(), "<stdin>", "exec")
        _start()
        exec(code, sys.modules["__main__"].__dict__)
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        _start()
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
