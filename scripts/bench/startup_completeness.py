#!/usr/bin/python3
"""startup_completeness.py - what the quick start does to table unwinding
system-wide: a nofp workload (built without frame pointers) runs, profcap
captures -a for a few seconds, and the share of its samples whose chain
is complete is compared with the quick start on and off
(PROFCAP_QUICK_START=0), interleaved round by round. Also the samples of the
workload counted (more is better: the quick start samples sooner).

Usage (root): scripts/bench/startup_completeness.py [--runs 5] [--seconds 2]
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))

from capture_util import Workload, decode, run_profcap  # noqa: E402
from test_unwind import chain_of, user_names  # noqa: E402


def one(tmp, quick, seconds, pid):
    out = os.path.join(tmp, "c.pb")
    env = dict(os.environ, PROFCAP_QUICK_START="1" if quick else "0")
    old = os.environ.copy()
    os.environ.clear()
    os.environ.update(env)
    try:
        r = run_profcap(["capture", "-o", out, "-a", "--seconds", str(seconds), "-F", "499",
                         "--no-kernel"])
    finally:
        os.environ.clear()
        os.environ.update(old)
    if r.returncode:
        sys.exit(f"capture failed: {r.stderr[-400:]}")
    res = [x for x in decode(out)["resources"] if x["attrs"]["process.pid"] == pid]
    total = sum(s["value"] for s in res[0]["samples"]) if res else 0
    ok = sum(s["value"] for s in res[0]["samples"] if chain_of(user_names(s))) if res else 0
    return total, ok


def main():
    import tempfile
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2)
    a = ap.parse_args()
    res = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp, Workload("nofp_main") as w:
        for _ in range(a.runs):
            for quick in (True, False):
                res[quick].append(one(tmp, quick, a.seconds, w.pid))
    print(f"system-wide {a.seconds} s captures of a nofp workload, {a.runs} interleaved runs, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'quick start':12} {'samples':>8} {'complete':>9} {'share':>7}  (medians; shares per run)")
    for quick in (True, False):
        v = res[quick]
        shares = [ok / t if t else 0 for t, ok in v]
        print(f"{'on' if quick else 'off':12} {statistics.median(t for t, _ in v):8.0f} "
              f"{statistics.median(ok for _, ok in v):9.0f} {statistics.median(shares):7.3f}  "
              + " ".join(f"{x:.3f}" for x in shares))


if __name__ == "__main__":
    main()
