#!/usr/bin/python3
"""agent_bench.py - continuous profiling under process churn: `profcap agent`
vs `perf record --switch-output` vs a bpftrace script that prints and clears
its map every window, all three running at the same time on the same load.

Load: a steady CPU burner (groundtruth, one thread) plus a churn of
short-lived processes (by default 20 per second, each running a different
command line, some of them threads-heavy) for the whole run.

Every --sample seconds the script reads each tool's RSS (VmRSS) and CPU time
(utime+stime of the tool and its reaped children, from /proc/PID/stat) and at
the end prints: RSS at start (after the first window), at the end, the peak,
the RSS growth over the last half of the run (flatness), and the CPU used as
a percentage of one core, plus bytes written. Medians/ratios are over the
samples of one run.

Usage (root): scripts/bench/agent_bench.py [--minutes 10] [--interval 10]
              [--churn 20] [--freq 99] [--no-peers]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
WORKLOAD = os.path.join(REPO, "build", "tests", "workloads", "groundtruth")
HZ = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """CPU seconds of @pid including its reaped children."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ut, st, cut, cst = (int(fields[i]) for i in (11, 12, 13, 14))
    return (ut + st + cut + cst) / HZ


def proc_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def tree_pids(pid):
    """@pid and its descendants (perf forks helpers; sh wraps bpftrace)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(x) for x in f.read().split())
        except OSError:
            pass
    return out


def churn(stop, rate):
    """Start @rate short-lived processes per second until @stop is set."""
    cmds = [["sh", "-c", "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done"],
            ["sha1sum", "/etc/services"], ["ls", "-R", "/usr/share/doc"],
            ["python3", "-c", "sum(range(200000))"], ["gzip", "-c", "/etc/services"],
            ["sort", "/etc/services"], ["awk", "BEGIN{for(i=0;i<100000;i++)s+=i}"]]
    n = 0
    period = 1.0 / rate
    nxt = time.monotonic()
    while not stop.is_set():
        c = cmds[n % len(cmds)]
        p = subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        threading.Thread(target=p.wait, daemon=True).start()
        n += 1
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
    return n


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--interval", type=int, default=10)
    ap.add_argument("--churn", type=float, default=20)
    ap.add_argument("--freq", type=int, default=99)
    ap.add_argument("--sample", type=float, default=5)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--series", action="store_true", help="print every RSS sample (MB)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("agent_bench.py: run as root")
    tmp = tempfile.mkdtemp(prefix="agent-bench-")
    tools = {}
    try:
        burner = subprocess.Popen([WORKLOAD], stdout=subprocess.DEVNULL)
        pdir = os.path.join(tmp, "profcap")
        tools["profcap agent"] = (subprocess.Popen(
            [PROFCAP, "agent", "--interval", f"{a.interval}s", "-F", str(a.freq),
             "--output-dir", pdir, "-q"]), pdir)
        if not a.no_peers and shutil.which("perf"):
            perfdir = os.path.join(tmp, "perf")
            os.mkdir(perfdir)
            tools["perf --switch-output"] = (subprocess.Popen(
                ["perf", "record", "-q", "-g", "-a", "-F", str(a.freq),
                 f"--switch-output={a.interval}s", "-o", os.path.join(perfdir, "perf.data")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), perfdir)
        if not a.no_peers and shutil.which("bpftrace"):
            btdir = os.path.join(tmp, "bt")
            os.mkdir(btdir)
            prog = (f"profile:hz:{a.freq} {{ @[kstack, ustack, comm] = count(); }} "
                    f"interval:s:{a.interval} {{ print(@); clear(@); }}")
            out = open(os.path.join(btdir, "bt.txt"), "w")
            tools["bpftrace print/clear"] = (subprocess.Popen(
                ["bpftrace", "-e", prog], stdout=out, stderr=subprocess.DEVNULL), btdir)
        stop = threading.Event()
        th = threading.Thread(target=churn, args=(stop, a.churn), daemon=True)
        th.start()
        t_end = time.monotonic() + a.minutes * 60
        series = {t: [] for t in tools}
        t0 = time.monotonic()
        cpu0 = {}
        while time.monotonic() < t_end:
            time.sleep(a.sample)
            for name, (p, _) in tools.items():
                if p.poll() is not None:
                    sys.exit(f"{name} exited early ({p.returncode})")
                pids = tree_pids(p.pid)
                cpu = sum(proc_cpu(x) for x in pids if os.path.exists(f"/proc/{x}"))
                rss = sum(proc_rss_kb(x) for x in pids if os.path.exists(f"/proc/{x}"))
                series[name].append((time.monotonic() - t0, cpu, rss))
                cpu0.setdefault(name, (time.monotonic() - t0, cpu))
        stop.set()
        for name, (p, _) in tools.items():
            p.send_signal(signal.SIGINT if "perf" in name or "bpftrace" in name
                          else signal.SIGTERM)
        for name, (p, _) in tools.items():
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        burner.kill()
        print(f"{a.minutes:g} min, {a.interval} s windows, {a.freq} Hz all CPUs, "
              f"churn {a.churn:g} processes/s, {os.cpu_count()} CPUs")
        print(f"{'tool':24} {'CPU % of 1 core':>15} {'RSS first MB':>13} {'RSS last MB':>12} "
              f"{'RSS peak MB':>12} {'2nd-half growth MB':>19} {'written MB':>11}")
        base = None
        for name, s in series.items():
            tw0, c0 = cpu0[name]
            tw1, c1 = s[-1][0], s[-1][1]
            cpu_pct = 100.0 * (c1 - c0) / (tw1 - tw0) if tw1 > tw0 else 0
            rss = [x[2] for x in s]
            half = len(rss) // 2
            growth = statistics.median(rss[-3:]) - statistics.median(rss[half:half + 3])
            written = dir_bytes(tools[name][1]) / 1e6
            if base is None:
                base = cpu_pct
            print(f"{name:24} {cpu_pct:15.2f} {rss[0] / 1024:13.1f} {rss[-1] / 1024:12.1f} "
                  f"{max(rss) / 1024:12.1f} {growth / 1024:19.2f} {written:11.2f}"
                  + (f"   (CPU x{cpu_pct / base:.2f} of profcap)" if base and name !=
                     "profcap agent" else ""))
        if a.series:
            for name, s in series.items():
                print(f"{name} RSS MB every {a.sample:g} s: " +
                      " ".join(f"{x[2] / 1024:.1f}" for x in s))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
