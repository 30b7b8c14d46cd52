"""Off-CPU waits in Python, for tests/e2e/test_python.py: nap() sleeps
(time.sleep), wait_lock() waits on a lock another thread holds. Prints
"ready", runs argv[1] seconds (default 3). Python 2.7 to 3.x."""
import sys
import threading
import time


def nap(stop):
    while time.time() < stop:
        time.sleep(0.02)


def wait_lock(stop, lk):
    while time.time() < stop:
        if lk.acquire():
            lk.release()
        time.sleep(0)


def holder(stop, lk):
    while time.time() < stop:
        with lk:
            time.sleep(0.03)
        time.sleep(0.001)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    stop = time.time() + seconds
    lk = threading.Lock()
    threads = [threading.Thread(target=holder, args=(stop, lk)),
               threading.Thread(target=wait_lock, args=(stop, lk))]
    for t in threads:
        t.start()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    nap(stop)
    for t in threads:
        t.join()


main()
