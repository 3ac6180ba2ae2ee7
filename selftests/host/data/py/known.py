# SPDX-License-Identifier: MIT
# A Python program whose call counts are known (test_py_counts.sh): each
# function's count is written beside it.
import math
import sys
import threading


def fib(n):                       # 1973 calls: fib(15)
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def gen(n):                       # 2 calls: each generator counts once,
    for i in range(n):            # however often it is resumed
        yield i


def boom(k):                      # 20 calls: 5 x boom(3..0)
    if k == 0:
        raise ValueError("down four frames")
    boom(k - 1)


def catcher():                    # 5 calls
    try:
        boom(3)
    except ValueError:
        pass


def deep(k):                      # 901 calls: deep(900)
    return 0 if k == 0 else 1 + deep(k - 1)


def spin(n):                      # 2 calls: one per thread
    s = 0
    for i in range(n):
        s += i
    return s


def worker():                     # 1 call, on the second thread
    spin(WORK)


class Bag(list):
    pass


class Grid:
    def __getitem__(self, k):     # 50 calls, from subscripts
        return k


def subscripts():                 # 1 call: its code warms up in the
    g = Grid()                    # first loop, and CPython 3.11 then runs
    for _ in range(20):           # g[i] inline, past the frame function,
        pass                      # unless __getitem__ is kept from it
    s = 0
    for i in range(50):
        s += g[i]
    return s


def builtins_used():              # 1 call
    for i in range(7):
        math.gcd(i, 12)           # math.gcd: 7 calls
    b = Bag()
    b.append(1)                   # named list.append (the defining type)


def main():                       # 1 call
    fib(15)
    sum(gen(10))
    g = gen(100)
    next(g)
    g.close()                     # a generator closed early
    for _ in range(5):
        catcher()
    sys.setrecursionlimit(5000)
    deep(900)
    builtins_used()
    subscripts()
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    spin(WORK)                    # its stacks end main;spin


WORK = int(sys.argv[1]) if len(sys.argv) > 1 else 2000000
main()
