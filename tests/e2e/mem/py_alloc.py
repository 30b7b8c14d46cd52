"""py_alloc.py - Python allocations for test_memory.py: bytearrays of 64 KiB
(above pymalloc's 512-byte limit, so from malloc) made in keep_some (half
kept) and churn (all dropped). Prints the truth as one JSON line."""
import json
import os
import sys
import time


def keep_some(n, kept):
    for i in range(n):
        b = bytearray(65536)
        if i % 2 == 0:
            kept.append(b)


def churn(n):
    for _ in range(n):
        b = bytearray(65536)
        del b


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    time.sleep(float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.5)
    n = mib * 16 // 2
    kept = []
    keep_some(n, kept)
    churn(n)
    print(json.dumps({"keep_bytes": n * 65536, "churn_bytes": n * 65536,
                      "kept_bytes": len(kept) * 65536}), flush=True)
    # Out without the interpreter's clean-up: the kept objects are what
    # the process holds at its exit.
    os._exit(0)


main()
