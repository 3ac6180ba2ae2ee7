# SPDX-License-Identifier: MIT
# A program that does what a profiler must survive (test_py_counts.sh):
# it deletes a function that has run and makes another of the same name
# from source at run time, raises from __del__, replaces the profile hook
# and the frame function's neighbours, and goes on.
import gc
import sys


def before():
    pass


def victim():
    return 1


class Noisy:
    def __del__(self):
        raise RuntimeError("from __del__")


for _ in range(3):
    before()
victim()
del victim
gc.collect()
exec("def victim():\n    return 2\n", globals())
victim()
n = Noisy()
del n                 # "Exception ignored in ... __del__"
gc.collect()
sys.setprofile(lambda *a: None)
sys.settrace(lambda *a: None)
sys.setprofile(None)
sys.settrace(None)
print("hostile: done")
