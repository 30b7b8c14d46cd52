#!/usr/bin/python3
"""capture_bench.py - profcap vs perf vs bpftrace, side by side in one run.

Each tool samples all CPUs at 99 Hz with stacks for 1 second and produces its
output (profcap: OTLP file; perf: perf.data + `perf script` text; bpftrace:
aggregated stacks printed at exit). Measured per run, per tool: end-to-end
wall time and peak RSS (from wait4 rusage; for perf the max of record and
script, with their wall times added). Runs are interleaved (A B C A B C ...)
so machine noise hits every tool alike; reports medians and ratios.

Usage (root): scripts/bench/capture_bench.py [--runs 7] [--seconds 1] [--load]
  --load   keep both CPUs busy with a ground-truth workload during the runs
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
WORKLOAD = os.path.join(REPO, "build", "tests", "workloads", "groundtruth")


def run(cmd, cwd):
    """Run cmd; return (wall seconds, peak RSS KiB, exit code)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    return wall, ru.ru_maxrss, os.waitstatus_to_exitcode(status)


def bench_profcap(tmp, secs):
    return run([PROFCAP, "capture", "-a", "-F", "99", "--seconds", str(secs), "-q",
                "-o", os.path.join(tmp, "p.pb")], tmp)


def bench_perf(tmp, secs):
    w1, r1, c1 = run(["perf", "record", "-q", "-g", "-a", "-F", "99", "-o",
                      os.path.join(tmp, "perf.data"), "--", "sleep", str(secs)], tmp)
    w2, r2, c2 = run(["sh", "-c", f"perf script -i {tmp}/perf.data > {tmp}/perf.txt"], tmp)
    return w1 + w2, max(r1, r2), c1 or c2


def bench_bpftrace(tmp, secs):
    prog = ("profile:hz:99 { @[kstack, ustack, comm] = count(); } "
            f"interval:ms:{int(secs * 1000)} {{ exit(); }}")
    return run(["sh", "-c", f"bpftrace -e '{prog}' > {tmp}/bt.txt"], tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--load", action="store_true")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("capture_bench.py: run as root (all three tools load BPF or open perf events)")
    tools = {"profcap": bench_profcap, "perf record+script": bench_perf,
             "bpftrace": bench_bpftrace}
    res = {t: [] for t in tools}
    load = []
    if a.load:
        load = [subprocess.Popen([WORKLOAD, "-t"], stdout=subprocess.DEVNULL)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(a.runs):
                for name, fn in tools.items():
                    wall, rss, code = fn(tmp, a.seconds)
                    if code != 0:
                        sys.exit(f"{name} failed (exit {code}) in run {i}")
                    res[name].append((wall, rss))
            size = os.path.getsize(os.path.join(tmp, "p.pb"))
    finally:
        for p in load:
            p.kill()
            p.wait()
    base_w = statistics.median(w for w, _ in res["profcap"])
    base_r = statistics.median(r for _, r in res["profcap"])
    print(f"{a.runs} interleaved runs, {a.seconds:g} s capture, 99 Hz, all CPUs, "
          f"{'loaded' if a.load else 'idle'} machine ({os.cpu_count()} CPUs)")
    print(f"{'tool':22} {'wall median':>12} {'wall min-max':>16} {'peak RSS median':>16} "
          f"{'wall/profcap':>13} {'RSS/profcap':>12}")
    for name, rows in res.items():
        walls = [w for w, _ in rows]
        rss = [r for _, r in rows]
        mw, mr = statistics.median(walls), statistics.median(rss)
        print(f"{name:22} {mw:11.3f}s {min(walls):7.3f}-{max(walls):.3f}s {mr / 1024:14.1f}MB "
              f"{mw / base_w:12.2f}x {mr / base_r:11.2f}x")
    print(f"profcap output: {size} bytes; binary: {os.path.getsize(PROFCAP)} bytes")


if __name__ == "__main__":
    main()
