# SPDX-License-Identifier: MIT
"""meter for Python: exact call counts and CPU time sampled without signals.

Every Python function called gets a record (module.qualname, with its file
and first line) and every builtin one (builtins.sorted, str.join); a call
is counted when a function is entered (resuming a generator or coroutine
is not a call), and meter.ko (or libmeter's signal backend) samples which
one is running.  The profile is libmeter's: run the program under
``meter-run -- python3 app.py`` (or ``python3 -m meter app.py``) to get it
reported; with ``import meter`` alone it goes where libmeter's environment
says (METER_BACKEND, METER_OUTPUT; Documentation/python.md).

    import meter
    with meter.profile():
        work()
"""
from . import _meter

__all__ = ["start", "stop", "profile", "backend", "hooks_taken"]


def start(builtins=False):
    """Profile every thread from here on; False if already started.

    builtins=True counts builtins (builtins.sorted, str.join) too, through
    CPython's profile hook, which costs about ten times as much a call."""
    return _meter.start(builtins=builtins)


def stop():
    """Stop counting calls on every thread; False if not started."""
    return _meter.stop()


def backend():
    """libmeter's backend: "kernel", "signal" or "off"."""
    return _meter.backend()


def hooks_taken():
    """How often another tool (sys.setprofile, cProfile) took the hook."""
    return _meter.hooks_taken()


class profile:
    """A context manager: profiles the block it encloses."""

    def __init__(self, builtins=False):
        self.builtins = builtins

    def __enter__(self):
        self.started = start(builtins=self.builtins)
        return self

    def __exit__(self, *exc):
        if self.started:
            stop()
        return False
