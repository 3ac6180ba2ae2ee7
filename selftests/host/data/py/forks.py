# SPDX-License-Identifier: MIT
# A parent and two os.fork() children each call f (test_py_counts.sh, with
# meter-run --follow-fork): 3 calls in the parent, 4 in a child that ends
# with sys.exit(), 5 in one that ends with os._exit().
import os
import sys


def f():
    return 1


def child(n, leave):              # 2 calls, one in each child
    for _ in range(n):
        f()
    leave(0)


pids = []
for n, leave in ((4, sys.exit), (5, os._exit)):
    pid = os.fork()
    if pid == 0:
        child(n, leave)
    pids.append(pid)
for _ in range(3):
    f()
for pid in pids:
    os.waitpid(pid, 0)
