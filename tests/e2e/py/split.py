"""CPU split across three nested functions, for tests/e2e/test_python.py:
a() spins 20 % of the CPU time, Worker.b() (a method) 30 %, c() 50 % in
zlib.compress (a C extension). Each share is timed by CPU time
(process_time), so a busy machine does not bend it. Runs for argv[1]
seconds (default 3) after printing "ready"; Python 2.7 to 3.x.

The lines marked HOT_A, HOT_B, HOT_C are where each function spends its
time (a() and b() in reading the clock): the test reads their numbers from
this file."""
import os
import sys
import time
import zlib

clock = getattr(time, "process_time", None) or time.clock
DATA = os.urandom(4096)
MS = 0.001


def c(ms):
    end = clock() + ms * MS
    while clock() < end:
        zlib.compress(DATA, 9)  # HOT_C


class Worker(object):
    def b(self, ms):
        end = clock() + ms * MS
        x = 0
        while clock() < end:  # HOT_B
            x += 1
        c(5 * ms / 3.0)


def a(w, ms):
    end = clock() + ms * MS
    x = 0
    while clock() < end:  # HOT_A
        x += 1
    w.b(3 * ms / 2.0)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    w = Worker()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    stop = time.time() + seconds
    while time.time() < stop:
        a(w, 2)


main()
