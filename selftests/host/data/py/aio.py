# SPDX-License-Identifier: MIT
# Two asyncio tasks interleaving on one thread (test_py_counts.sh): each
# coroutine is one call however often it is resumed, and crunch's time is
# charged under the task that runs it, never under the other.
import asyncio


def crunch(n):                    # 60 calls
    s = 0
    for i in range(n):
        s += i
    return s


async def task_a():               # 1 call, resumed 30 times
    for _ in range(30):
        crunch(60000)
        await asyncio.sleep(0)


async def task_b():               # 1 call, resumed 30 times
    for _ in range(30):
        crunch(120000)
        await asyncio.sleep(0)


async def both():
    await asyncio.gather(task_a(), task_b())


asyncio.run(both())
