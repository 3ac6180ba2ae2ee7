# SPDX-License-Identifier: MIT
# A parent and an os.fork() child each call f (test_py_counts.sh, with
# meter-run --follow-fork): 3 calls in the parent, 4 in the child.
import os
import sys


def f():
    return 1


def child():                      # 1 call, in the child
    for _ in range(4):
        f()
    sys.exit(0)


pid = os.fork()
if pid == 0:
    child()
for _ in range(3):
    f()
os.waitpid(pid, 0)
