"""Python called back from C, for tests/e2e/test_python.py: outer() calls
the builtin sorted(), whose comparisons call key() back in Python; key()
spins. The stack must read outer -> sorted's native frames -> key. Prints
"ready", runs argv[1] seconds (default 3). Python 2.7 to 3.x."""
import sys
import time


def key(x):
    end = time.time() + 0.0002
    while time.time() < end:
        pass
    return -x


def outer(data):
    return sorted(data, key=key)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    stop = time.time() + seconds
    data = list(range(200))
    while time.time() < stop:
        outer(data)


main()
