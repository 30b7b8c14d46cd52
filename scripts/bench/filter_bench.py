#!/usr/bin/python3
"""filter_bench.py - per-sample cost of the BPF program with and without
targeting filters (kernel.bpf_stats_enabled: run_time_ns / run_cnt of
profcap_sample, read with bpftool while the capture runs).

Load: two ground-truth workloads (both CPUs busy). Configurations: no filter,
-p (one PID), --comm, --cgroup (the root group: everything matches, so the
stack walk still runs), --comm matching nothing (the filter's own cost).
Each configuration runs --runs times interleaved; medians are printed.

Usage (root): scripts/bench/filter_bench.py [--runs 5] [--seconds 3] [--freq 999]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
WORKLOAD = os.path.join(REPO, "build", "tests", "workloads", "groundtruth")
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
from capture_util import cgroup2_mount  # noqa: E402


def sample_progs():
    """{id: (run_time_ns, run_cnt)} of every loaded profcap_sample program."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout
    return {p["id"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0))
            for p in json.loads(out or "[]") if p.get("name") == "profcap_sample"}


def one(args, secs, freq):
    """ns per run of the program this capture loads (others may be running:
    it is the one that was not there before)."""
    before = set(sample_progs())
    p = subprocess.Popen([PROFCAP, "capture", "-q", "-F", str(freq), "--seconds", str(secs),
                          "-o", "/tmp/filter-bench.pb"] + args)
    time.sleep(secs - 0.3)
    mine = {k: v for k, v in sample_progs().items() if k not in before}
    p.wait()
    if len(mine) != 1:
        return float("nan"), 0
    ns, cnt = next(iter(mine.values()))
    return ns / cnt if cnt else float("nan"), cnt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--freq", type=int, default=999)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("filter_bench.py: run as root")
    old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
    loads = [subprocess.Popen([WORKLOAD], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    for w in loads:
        w.stdout.readline()
    mnt = cgroup2_mount()
    configs = {"no filter": [], f"-p {loads[0].pid}": ["-p", str(loads[0].pid)],
               "--comm gt-main": ["--comm", "gt-main"],
               "--comm (no match)": ["--comm", "no-such-task"]}
    if mnt:
        configs["--cgroup / (all match)"] = ["--cgroup", "/"]
    res = {k: [] for k in configs}
    try:
        for _ in range(a.runs):
            for k, args in configs.items():
                res[k].append(one(args, a.seconds, a.freq))
    finally:
        for w in loads:
            w.kill()
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)
    def med(v, i):
        ok = [x[i] for x in v if x[1]]
        return statistics.median(ok) if ok else float("nan")

    base = med(res["no filter"], 0)
    print(f"{a.freq} Hz, {a.seconds:g} s, {a.runs} runs, 2 busy CPUs; ns per BPF run (median)")
    for k, v in res.items():
        m = med(v, 0)
        print(f"  {k:28} {m:8.0f} ns  x{m / base:.2f}   BPF runs per capture {med(v, 1):.0f}")


if __name__ == "__main__":
    main()
