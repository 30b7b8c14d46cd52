#!/usr/bin/python3
"""startup_bench.py - time from launch to the first sample, system-wide at 99 Hz,
profcap vs perf record vs bpftrace, interleaved round by round.

The launch instant is CLOCK_MONOTONIC read here right before the tool is
spawned; the first sample's instant is CLOCK_MONOTONIC as the kernel saw it:
profcap's BPF program stores bpf_ktime_get_ns() of its first sample (printed
with -v), `perf record -k CLOCK_MONOTONIC` stamps samples with that clock
(first line of `perf script -F time`), and bpftrace prints `nsecs` (the same
clock) from its first profile probe. At 99 Hz per CPU the first tick comes up
to ~10 ms after sampling is enabled, alike for every tool.

profcap starts sampling with a small frame-pointer program and hands over
to the table unwinder loaded in the background (issue 13); "--no-quick" adds
a row with that off (PROFCAP_QUICK_START=0: the unwinder, then sampling),
"--baseline BIN" one for another profcap binary (e.g. before a change).

Usage (root): scripts/bench/startup_bench.py [--runs 7] [--no-quick] [--baseline BIN]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")


def profcap(tmp, binary=PROFCAP, env=None):
    t0 = time.monotonic_ns()
    r = subprocess.run([binary, "capture", "-a", "-v", "-F", "99", "--seconds", "0.2", "-o",
                        os.path.join(tmp, "p.pb")], capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    m = re.search(r"first sample at CLOCK_MONOTONIC (\d+) ns", r.stderr)
    if r.returncode or not m or m.group(1) == "0":
        sys.exit(f"profcap failed: {r.stderr[-500:]}")
    return (int(m.group(1)) - t0) / 1e6


def perf(tmp):
    data = os.path.join(tmp, "perf.data")
    t0 = time.monotonic_ns()
    r = subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-a", "-g", "-F", "99",
                        "-o", data, "--", "sleep", "0.3"], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"perf record failed: {r.stderr[-500:]}")
    out = subprocess.run(["perf", "script", "-F", "time", "-i", data], capture_output=True,
                         text=True).stdout
    first = min(float(l.strip().rstrip(":")) for l in out.splitlines() if l.strip())
    return (first * 1e9 - t0) / 1e6


def bpftrace(tmp):
    t0 = time.monotonic_ns()
    r = subprocess.run(["bpftrace", "-e", 'profile:hz:99 { printf("%llu\\n", nsecs); exit(); }'],
                       capture_output=True, text=True, cwd=tmp)
    nums = [int(l) for l in r.stdout.split() if l.isdigit() and len(l) > 6]
    if not nums:
        sys.exit(f"bpftrace failed: {r.stderr[-500:]}")
    return (nums[0] - t0) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-quick", action="store_true", help="also profcap without quick start")
    ap.add_argument("--baseline", metavar="BIN", help="also this profcap binary")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("startup_bench.py: run as root")
    tools = {"profcap": profcap}
    if a.no_quick:
        tools["profcap, no quick start"] = lambda tmp: profcap(tmp, env={"PROFCAP_QUICK_START": "0"})
    if a.baseline:
        tools["profcap baseline"] = lambda tmp: profcap(tmp, binary=a.baseline)
    tools.update({"perf record -a -g": perf, "bpftrace": bpftrace})
    res = {t: [] for t in tools}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.runs):
            for name, fn in tools.items():
                res[name].append(fn(tmp))
    base = statistics.median(res["profcap"])
    print(f"launch to first sample, system-wide, 99 Hz, {a.runs} interleaved runs, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'tool':24} {'median':>9} {'min':>9} {'max':>9} {'vs profcap':>11}")
    for name, v in res.items():
        m = statistics.median(v)
        print(f"{name:24} {m:7.1f}ms {min(v):7.1f}ms {max(v):7.1f}ms {m / base:10.2f}x")


if __name__ == "__main__":
    main()
