#!/usr/bin/python3
"""opener_bench.py - two profcap binaries side by side (before/after a change
to how files of profiled processes are opened and read, or to start-up):
interleaved runs (A B A B ...), medians and ratios B/A.

Per run and binary: a system-wide capture of --seconds (default 5) at 99 Hz
and a `capture -- true` (start-up: BPF load, fork hook, kernel symbols).
Measured from wait4: wall, CPU (user + sys), peak RSS; from the -v lines:
BPF load, kernel symbols, unwind tables built, final drain + symbolization.

Usage (root): scripts/bench/opener_bench.py BEFORE AFTER [--runs 5] [--seconds 5]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

PATTERNS = {
    "bpf_load_ms": r"BPF program loaded and perf events opened in ([\d.]+) ms",
    "ksyms_ms": r"kernel symbols loaded in ([\d.]+) ms",
    "unwind_ms": r"unwind tables: .* built in (\d+) ms",
    "final_sym_ms": r"final drain and symbolization took ([\d.]+) ms",
}


def run(cmd, cwd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    r = {"wall_s": time.monotonic() - t0, "cpu_s": ru.ru_utime + ru.ru_stime,
         "rss_mib": ru.ru_maxrss / 1024}
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"{cmd[0]} failed: {err}")
    for k, pat in PATTERNS.items():
        m = re.search(pat, err)
        if m:
            r[k] = float(m.group(1))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5.0)
    a = ap.parse_args()
    a.before, a.after = os.path.abspath(a.before), os.path.abspath(a.after)
    if os.geteuid() != 0:
        sys.exit("needs root")
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            for name, binary in (("before", a.before), ("after", a.after)):
                out = os.path.join(tmp, "o.pb")
                res.setdefault((name, "system-wide"), []).append(
                    run([binary, "capture", "-v", "-a", "-F", "99", "--seconds",
                         str(a.seconds), "-o", out], tmp))
                res.setdefault((name, "-- true"), []).append(
                    run([binary, "capture", "-v", "-o", out, "--", "true"], tmp))
            print(f"round {i + 1}/{a.runs} done", file=sys.stderr)
    for mode in ("system-wide", "-- true"):
        print(f"{mode} ({a.runs} interleaved runs each, medians)")
        keys = [k for k in ["wall_s", "cpu_s", "rss_mib"] + list(PATTERNS)
                if all(k in r for r in res[("before", mode)] + res[("after", mode)])]
        for k in keys:
            b = statistics.median(r[k] for r in res[("before", mode)])
            f = statistics.median(r[k] for r in res[("after", mode)])
            ratio = f / b if b else float("nan")
            print(f"  {k:14s} before {b:9.2f}  after {f:9.2f}  after/before {ratio:5.2f}")


if __name__ == "__main__":
    main()
