# SPDX-License-Identifier: MIT
# Python calling a C extension built with meter's plugin, which calls back
# into Python (test_py_counts.sh): one stack through both.
import meter_native as nat


def spin(n):
    s = 0
    for i in range(n):
        s += i
    return s


def cb():
    spin(400000)


def main():
    nat.call_back(cb, 3)
    nat.native_spin(100000000)


main()
