# SPDX-License-Identifier: MIT
# A Python program whose self time splits 50/30/20 between three functions
# that run the same loop 5, 3 and 2 times as often, in rounds
# (selftests/vm/interp_split.sh, on the VM's deterministic clock).
import sys


def heavy(n):
    s = 0
    for i in range(5 * n):
        s += i
    return s


def medium(n):
    s = 0
    for i in range(3 * n):
        s += i
    return s


def light(n):
    s = 0
    for i in range(2 * n):
        s += i
    return s


def main(n, rounds):
    for _ in range(rounds):
        heavy(n)
        medium(n)
        light(n)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 100000,
     int(sys.argv[2]) if len(sys.argv) > 2 else 20)
