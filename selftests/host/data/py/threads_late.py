# SPDX-License-Identifier: MIT
# Threads meter did not see start (test_py_counts.sh): one running before
# meter.start(), one made by C; their calls after start() are counted.
import threading

import meter
import meter_native as nat


def early():                      # called 10 times after start()
    return 1


def from_c():                     # 6 calls, on a thread made by C
    return 2


go = threading.Event()
done = threading.Event()


def already_running():
    go.wait()
    for _ in range(10):
        early()
    done.set()


t = threading.Thread(target=already_running)
t.start()
meter.start()
go.set()
done.wait()
nat.in_c_thread(from_c, 6)
t.join()
meter.stop()
