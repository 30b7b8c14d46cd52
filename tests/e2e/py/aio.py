"""Two asyncio coroutines taking turns on the CPU, for
tests/e2e/test_python.py: task_a() spins in spin_a(), task_b() in spin_b(),
each yielding to the loop between spins. Prints "ready", runs argv[1]
seconds (default 3). Python 3.6+."""
import asyncio
import sys
import time


def spin_a(ms):
    end = time.time() + ms / 1000.0
    while time.time() < end:
        pass


def spin_b(ms):
    end = time.time() + ms / 1000.0
    while time.time() < end:
        pass


async def task_a(stop):
    while time.time() < stop:
        spin_a(3)
        await asyncio.sleep(0)


async def task_b(stop):
    while time.time() < stop:
        spin_b(2)
        await asyncio.sleep(0)


async def both(stop):
    await asyncio.gather(task_a(stop), task_b(stop))


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    loop = asyncio.new_event_loop()
    loop.run_until_complete(both(time.time() + seconds))


main()
