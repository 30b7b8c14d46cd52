"""Four threads, each spinning in a function of its own (work_0 .. work_3),
for tests/e2e/test_python.py: each sampled thread must show its own
function. Prints "ready" then one line "TID work_N" per thread, and runs
for argv[1] seconds (default 3). Python 2.7 to 3.x."""
import ctypes
import sys
import threading
import time

SYS_GETTID = 186  # x86_64
libc = ctypes.CDLL(None)
lines = []
lock = threading.Lock()


def spin(stop):
    x = 0
    while time.time() < stop:
        x += 1
    return x


def work_0(stop):
    return spin(stop)


def work_1(stop):
    return spin(stop)


def work_2(stop):
    return spin(stop)


def work_3(stop):
    return spin(stop)


def run(fn, stop, started):
    with lock:
        lines.append("%d %s" % (libc.syscall(SYS_GETTID), fn.__name__))
    started.set()
    fn(stop)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    stop = time.time() + seconds + 0.5
    threads = []
    for fn in (work_0, work_1, work_2, work_3):
        started = threading.Event()
        t = threading.Thread(target=run, args=(fn, stop, started))
        t.start()
        started.wait()
        threads.append(t)
    sys.stdout.write("ready\n" + "\n".join(lines) + "\n")
    sys.stdout.flush()
    for t in threads:
        t.join()


main()
