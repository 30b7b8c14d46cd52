#!/usr/bin/python3
"""capture_bench.py - profcap vs perf vs bpftrace, side by side in one run.

Each tool samples all CPUs at 99 Hz with stacks for 1 second and produces its
output (profcap: OTLP file; perf: perf.data + `perf script` text; bpftrace:
aggregated stacks printed at exit). Measured per run, per tool: end-to-end
wall time, CPU time (user + system) and peak RSS (from wait4 rusage; for
perf the max RSS of record and script, their wall and CPU times added), and
the kernel memory of the BPF maps the tool holds (peak over the run, polled
every 100 ms, of the `memlock` of the maps in the fdinfo of the tool's
processes; profcap's per-file row maps are held by an array of maps, not by
a descriptor, so for profcap the peak it reports itself ("memory: ... BPF
maps ... (peak N MiB)", the same fdinfo figures plus each row map's memlock
read when it was created) is taken when larger; perf uses perf ring buffers,
not maps: 0). Runs are interleaved (A B C A B C ...) so
machine noise hits every tool alike; reports medians and ratios.

profcap runs as shipped: a copy of the binary alone in the run's temporary
directory. From build/, profcap finds build/profcap.debug by its debuglink
and, since it samples itself too, reads its own symbols and lines from it:
peak RSS that no installed copy has.

Usage (root): scripts/bench/capture_bench.py [--runs 7] [--seconds 1] [--load] [--alt BIN]
                [--profcap BIN] [--bin NAME=BIN ...] [--tools profcap,perf,bpftrace]
                [--json FILE]
  --load     keep both CPUs busy with a ground-truth workload during the runs
  --alt      also this profcap binary (e.g. main's build), interleaved: an A/B
  --profcap  the profcap binary ratios are taken against (default build/profcap)
  --bin      also this profcap binary, as "profcap NAME" (repeatable: one
             row per build variant, all interleaved)
  --tools    which of the three tools run (profcap always does)
  --json     write every run's figures there, per tool
"""
import argparse
import json
import os
import re
import shutil
import threading
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
WORKLOAD = os.path.join(REPO, "build", "tests", "workloads", "groundtruth")


def tree(pid):
    """@pid and its descendants."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def bpf_maps(pids):
    """{map id: memlock bytes} of the BPF maps open in @pids."""
    maps = {}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fdinfo")
        except OSError:
            continue
        for fd in fds:
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    info = dict(l.split(":", 1) for l in f if ":" in l)
            except OSError:
                continue
            if "map_id" in info:
                maps[int(info["map_id"])] = int(info.get("memlock", "0"))
    return maps


class MapWatch:
    """Peak memlock of the maps held by a process tree, polled every 100 ms."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        while not self.stop.wait(0.1):
            self.peak = max(self.peak, sum(bpf_maps(tree(self.pid)).values()))

    def done(self):
        self.stop.set()
        self.t.join()
        return self.peak


def run(cmd, cwd, stderr=subprocess.DEVNULL):
    """Run cmd; return (wall seconds, peak RSS KiB, exit code, CPU seconds, BPF bytes)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr)
    w = MapWatch(p.pid)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    return (wall, ru.ru_maxrss, os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime,
            w.done())


def bench_profcap(tmp, secs, binary=PROFCAP):
    log = os.path.join(tmp, "p.log")
    with open(log, "w") as err:
        wall, rss, code, cpu, bpf = run([binary, "capture", "-a", "-F", "99", "--seconds",
                                         str(secs), "-o", os.path.join(tmp, "p.pb")], tmp, err)
    with open(log) as f:
        m = re.search(r"BPF maps [0-9.]+ MiB \(peak ([0-9.]+) MiB\)", f.read())
    if m:
        bpf = max(bpf, float(m.group(1)) * 1048576)
    return wall, rss, code, cpu, bpf


def bench_perf(tmp, secs):
    w1, r1, c1, u1, b1 = run(["perf", "record", "-q", "-g", "-a", "-F", "99", "-o",
                              os.path.join(tmp, "perf.data"), "--", "sleep", str(secs)], tmp)
    w2, r2, c2, u2, b2 = run(["sh", "-c", f"perf script -i {tmp}/perf.data > {tmp}/perf.txt"],
                             tmp)
    return w1 + w2, max(r1, r2), c1 or c2, u1 + u2, max(b1, b2)


def bench_bpftrace(tmp, secs):
    prog = ("profile:hz:99 { @[kstack, ustack, comm] = count(); } "
            f"interval:ms:{int(secs * 1000)} {{ exit(); }}")
    return run(["sh", "-c", f"bpftrace -e '{prog}' > {tmp}/bt.txt"], tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--load", action="store_true")
    ap.add_argument("--alt", metavar="BIN", help="also this profcap binary (A/B)")
    ap.add_argument("--profcap", metavar="BIN", default=PROFCAP,
                    help="the profcap binary ratios are taken against")
    ap.add_argument("--bin", metavar="NAME=BIN", action="append", default=[],
                    help="also this profcap binary, as 'profcap NAME' (repeatable)")
    ap.add_argument("--tools", default="profcap,perf,bpftrace",
                    help="tools to run, of profcap,perf,bpftrace")
    ap.add_argument("--json", metavar="FILE", help="write every run's figures there")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("capture_bench.py: run as root (all three tools load BPF or open perf events)")
    want = set(a.tools.split(","))
    bins = {"profcap": a.profcap}  # tool name -> the binary shipped from
    if a.alt:
        bins["profcap --alt"] = a.alt
    for spec in a.bin:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"capture_bench.py: --bin {spec}: want NAME=BIN")
        bins["profcap " + name] = path
    shipped = {}  # tool name -> the copy run (see above)
    tools = {}
    for name in bins:
        tools[name] = lambda tmp, secs, name=name: bench_profcap(tmp, secs, shipped[name])
    if "perf" in want:
        tools["perf record+script"] = bench_perf
    if "bpftrace" in want:
        tools["bpftrace"] = bench_bpftrace
    res = {t: [] for t in tools}
    load = []
    if a.load:
        load = [subprocess.Popen([WORKLOAD, "-t"], stdout=subprocess.DEVNULL)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i, (name, src) in enumerate(bins.items()):
                shipped[name] = os.path.join(tmp, f"profcap-{i}")
                shutil.copy2(src, shipped[name])
            for i in range(a.runs):
                for name, fn in tools.items():
                    wall, rss, code, cpu, bpf = fn(tmp, a.seconds)
                    if code != 0:
                        sys.exit(f"{name} failed (exit {code}) in run {i}")
                    res[name].append((wall, rss, cpu, bpf))
            size = os.path.getsize(os.path.join(tmp, "p.pb"))
    finally:
        for p in load:
            p.kill()
            p.wait()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "seconds": a.seconds, "load": a.load,
                       "binaries": bins,
                       "fields": ["wall_s", "maxrss_kib", "cpu_s", "bpf_bytes"],
                       "results": res}, f, indent=1)
    base_w = statistics.median(r[0] for r in res["profcap"])
    base_r = statistics.median(r[1] for r in res["profcap"])
    base_c = statistics.median(r[2] for r in res["profcap"])
    print(f"{a.runs} interleaved runs, {a.seconds:g} s capture, 99 Hz, all CPUs, "
          f"{'loaded' if a.load else 'idle'} machine ({os.cpu_count()} CPUs)")
    print(f"{'tool':20} {'wall med':>9} {'wall min-max':>14} {'RSS med':>9} {'RSS max':>9} "
          f"{'CPU med':>8} {'BPF med':>9} {'BPF max':>9} {'wall/pc':>8} {'RSS/pc':>7} "
          f"{'CPU/pc':>7}")
    for name, rows in res.items():
        walls = [r[0] for r in rows]
        rss = [r[1] for r in rows]
        cpu = [r[2] for r in rows]
        bpf = [r[3] for r in rows]
        mw, mr, mc = statistics.median(walls), statistics.median(rss), statistics.median(cpu)
        print(f"{name:20} {mw:8.3f}s {min(walls):6.3f}-{max(walls):.3f}s "
              f"{mr / 1024:7.1f}MB {max(rss) / 1024:7.1f}MB {mc:7.3f}s "
              f"{statistics.median(bpf) / 1048576:6.1f}MiB {max(bpf) / 1048576:6.1f}MiB "
              f"{mw / base_w:7.2f}x {mr / base_r:6.2f}x "
              f"{mc / base_c if base_c else 0:6.2f}x")
    print(f"profcap output: {size} bytes; binary: {os.path.getsize(a.profcap)} bytes")


if __name__ == "__main__":
    main()
