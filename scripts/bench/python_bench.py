#!/usr/bin/python3
"""python_bench.py - what reading Python frames costs: the BPF walker's time
per sample, the slowdown of a Python workload under profcap against perf and
against profcap with the walker off, and profcap's peak RSS.

1. BPF ns per sample (kernel.bpf_stats_enabled=1 for this part only): a
   Python process spinning in 5 nested frames (tests/e2e/py/split.py) under
   `profcap capture -p PID -F 999` with the walker on and off
   (PROFCAP_PYTHON=0), and a native process (sha256sum /dev/zero). For each:
   run_time_ns of the profcap's sampling program over the samples it kept
   (its stats map), between 1 s and 2.5 s into the capture. The walker's
   cost is the paired difference on - off of the same round; native is the
   reference of a process without Python.
2. Slowdown: a fixed amount of Python work (recursive fib, ~25 frames deep,
   N times) timed by its own CPU time (user + system, which the sampling
   interrupts are charged to) and wall time, alone (base) and under
   profcap -p (walker on), profcap -p with PROFCAP_PYTHON=0 (off) and
   `perf record -g -p` (perf), at 99 and 999 Hz. The profiler attaches
   before the work starts.
3. Peak RSS of profcap (its own "memory: peak rss" line) in the -p
   captures of part 2 with the walker on.
Every round runs every configuration in a new random order; medians over
--rounds rounds, and the per-round ratios to base.

Usage (root): scripts/bench/python_bench.py [--rounds 5] [--python PATH]
              [--work N] [--out FILE.md]
"""
import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROFCAP = os.path.join(REPO, "build", "profcap")
SPLIT = os.path.join(REPO, "tests", "e2e", "py", "split.py")

WORK = r"""
import os, sys, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def nest(d, n):
    return fib(n) if d == 0 else nest(d - 1, n)
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
t0, c0 = time.time(), os.times()
for _ in range(int(sys.argv[1])):
    nest(5, 20)
c1 = os.times()
sys.stdout.write("%f %f\n" % (time.time() - t0, c1[0] + c1[1] - c0[0] - c0[1]))
"""


def bpftool(*args):
    return json.loads(subprocess.run(["bpftool", "--json"] + list(args), capture_output=True,
                                     text=True, check=True).stdout)


def owned_ids(pid):
    """The IDs of the BPF programs and maps process @pid holds (fdinfo)."""
    progs, maps = set(), set()
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k == "prog_id":
                        progs.add(int(v))
                    elif k == "map_id":
                        maps.add(int(v))
        except OSError:
            pass
    return progs, maps


def sample_stats(pid):
    """(run_time_ns, samples kept) of profcap @pid's sampling program."""
    pids, mids = owned_ids(pid)
    progs = [p for p in bpftool("prog", "show") if p["id"] in pids and
             p.get("name", "").startswith("profcap_sample")]
    maps = [m for m in bpftool("map", "show") if m["id"] in mids and m.get("name") == "stats"]
    if not progs or not maps:
        return None
    kept = 0
    for e in bpftool("map", "dump", "id", str(maps[0]["id"])):
        if e.get("key") in (0, ["0x00", "0x00", "0x00", "0x00"]) or e.get("formatted", {}).get("key") == 0:
            vals = e.get("formatted", e).get("values", [])
            kept = sum(v["value"] if isinstance(v["value"], int) else
                       int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little") for v in vals)
            break
    return sum(p.get("run_time_ns", 0) for p in progs), kept


def bpf_ns(python, config):
    """ns of the sampling program per kept sample, for @config."""
    if config == "native":
        w = subprocess.Popen(["sha256sum", "/dev/zero"], stdout=subprocess.DEVNULL)
    else:
        w = subprocess.Popen([python, SPLIT, "6"], stdout=subprocess.PIPE, text=True)
        w.stdout.readline()
    env = dict(os.environ, PROFCAP_PYTHON="0") if config == "py-off" else None
    cap = subprocess.Popen([PROFCAP, "capture", "-p", str(w.pid), "-F", "999", "--seconds", "4",
                            "-o", "/tmp/python_bench.pb"], stderr=subprocess.DEVNULL, env=env)
    try:
        time.sleep(1.0)
        a = sample_stats(cap.pid)
        time.sleep(1.5)
        b = sample_stats(cap.pid)
    finally:
        cap.send_signal(signal.SIGINT)
        cap.wait()
        w.kill()
        w.wait()
    if not a or not b or b[1] <= a[1]:
        return None
    return (b[0] - a[0]) / float(b[1] - a[1])


def slowdown_run(python, config, hz, work):
    """(wall s, CPU s, profcap peak RSS MB or None) of the fixed work."""
    w = subprocess.Popen([python, "-c", WORK, str(work)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    w.stdout.readline()
    prof, rss = None, None
    if config in ("on", "off"):
        env = dict(os.environ, PROFCAP_PYTHON="0") if config == "off" else None
        prof = subprocess.Popen([PROFCAP, "capture", "-p", str(w.pid), "-F", str(hz), "--seconds",
                                 "120", "-o", "/tmp/python_bench.pb"], stderr=subprocess.PIPE,
                                text=True, env=env)
    elif config == "perf":
        prof = subprocess.Popen(["perf", "record", "-g", "-F", str(hz), "-p", str(w.pid), "-o",
                                 "/tmp/python_bench.perf"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    if prof:
        time.sleep(1.5)  # attached (BPF loaded, tables built) before the work
    w.stdin.write("go\n")
    w.stdin.flush()
    wall, cpu = (float(x) for x in w.stdout.readline().split())
    w.wait()
    if prof:
        prof.send_signal(signal.SIGINT)
        _, err = prof.communicate(timeout=60)
        m = re.search(r"peak rss ([0-9.]+) MB", err or "")
        rss = float(m.group(1)) if m else None
    return wall, cpu, rss


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--work", type=int, default=4000, help="nest(5, 20) calls of the fixed work")
    ap.add_argument("--out", help="write the result as Markdown here")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("needs root")

    ns = {"py-on": [], "py-off": [], "native": []}
    diffs = []
    old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    try:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
        for r in range(a.rounds):
            got = {}
            for c in random.sample(list(ns), len(ns)):
                got[c] = bpf_ns(a.python, c)
                ns[c].append(got[c])
            if got["py-on"] is not None and got["py-off"] is not None:
                diffs.append(got["py-on"] - got["py-off"])
            print("bpf round %d: %s" % (r, {k: None if v is None else round(v) for k, v in got.items()}),
                  flush=True)
    finally:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)

    configs = [(c, hz) for hz in (99, 999) for c in ("on", "off", "perf")] + [("base", 0)]
    res = {k: [] for k in configs}
    rss = []
    for r in range(a.rounds):
        for k in random.sample(configs, len(configs)):
            wall, cpu, m = slowdown_run(a.python, k[0], k[1], a.work)
            res[k].append((wall, cpu))
            if k[0] == "on" and m is not None:
                rss.append(m)
        print("slowdown round %d done" % r, flush=True)

    base = res[("base", 0)]
    lines = []
    lines.append("## BPF time per sample (ns, medians of %d rounds, -F 999)\n" % a.rounds)
    lines.append("| process | ns per sample |")
    lines.append("|---|---|")
    lines.append("| Python, walker on | %.0f |" % med(ns["py-on"]))
    lines.append("| Python, walker off (PROFCAP_PYTHON=0) | %.0f |" % med(ns["py-off"]))
    lines.append("| native (sha256sum) | %.0f |" % med(ns["native"]))
    lines.append("| walker's own cost: on - off, paired per round | %.0f |" % med(diffs))
    lines.append("")
    lines.append("## Workload slowdown (medians of %d rounds; ratio: per-round CPU time over "
                 "base of the same round)\n" % a.rounds)
    lines.append("| config | Hz | wall s | CPU s | CPU / base |")
    lines.append("|---|---|---|---|---|")
    for k in configs:
        ratios = [x[1] / b[1] for x, b in zip(res[k], base)]
        lines.append("| %s | %s | %.3f | %.3f | %.3f |" % (
            {"on": "profcap -p", "off": "profcap -p, PROFCAP_PYTHON=0", "perf": "perf record -g -p",
             "base": "alone"}[k[0]], k[1] or "-", med([x[0] for x in res[k]]),
            med([x[1] for x in res[k]]), med(ratios)))
    lines.append("")
    lines.append("## Peak RSS of profcap capture -p (walker on): median %.1f MB, max %.1f MB "
                 "(%d captures)" % (med(rss), max(rss) if rss else float("nan"), len(rss)))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# python_bench\n\n`scripts/bench/python_bench.py %s` on %s (%s, %d CPUs)\n\n" % (
                " ".join(sys.argv[1:]), os.uname().nodename, os.uname().release, os.cpu_count()))
            f.write(text)


if __name__ == "__main__":
    main()
