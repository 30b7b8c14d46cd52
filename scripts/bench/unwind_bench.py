#!/usr/bin/python3
"""unwind_bench.py - cost of complete stacks for code without frame pointers:
profcap with .eh_frame tables vs profcap with frame pointers only (--no-unwind)
vs `perf record --call-graph dwarf`, side by side in one run.

The workload is build/tests/workloads/nofp_main -n ROUNDS -w (built
-O2 -fomit-frame-pointer, through a no-FP library and Debian's libc): it
starts, waits until the profiler samples it, does a fixed amount of work and
prints how long the work took. Per configuration and rate (99 Hz, 999 Hz):
  work      the workload's wall time for the fixed work; slowdown vs no profiler
  prof CPU  the profiler's own CPU (user + sys from wait4), plus for profcap the
            BPF program's run time (kernel.bpf_stats_enabled, bpftool
            run_time_ns), which the kernel spends in the sampled thread
  bpf/smp   mean BPF run time per sample (run_time_ns / run_cnt)
  bytes     size of the output (OTLP file; perf.data)
  post      perf only: `perf script` CPU to unwind the copied stacks
Runs are interleaved (every config once, then again) and medians reported.

Then start-up: `profcap capture -a` launched with a warm page cache, time
until the BPF program has run once (polling bpftool), and the table-building
figures of its summary line.

Usage (root): scripts/bench/unwind_bench.py [--runs 3] [--rounds 1500] [--startup-only]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.environ.get("PROFCAP_BENCH_BIN") or os.path.join(REPO, "build", "profcap")
WORKLOAD = os.path.join(REPO, "build", "tests", "workloads", "nofp_main")


def prog_list():
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    try:
        return json.loads(r.stdout or "[]")
    except json.JSONDecodeError:
        return []


# The program attached to the perf events: profcap_sample, or with a quick
# start (system-wide) profcap_quick, which tail-calls profcap_sample once it
# is loaded (the run time of both is counted on profcap_quick).
SAMPLERS = ("profcap_sample", "profcap_quick")


def bpf_prog_stats(skip=()):
    """(run_time_ns, run_cnt) of the loaded sampling program whose id is not
    in @skip (programs of earlier runs may linger a moment), or None."""
    for p in prog_list():
        if p.get("name") in SAMPLERS and p.get("id") not in skip and p.get("run_cnt"):
            return p.get("run_time_ns", 0), p.get("run_cnt", 0)
    return None


def old_ids():
    return {p.get("id") for p in prog_list() if p.get("name") in SAMPLERS}


def cpu_of(pid):
    """utime + stime of @pid in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(cfg, hz, rounds, tmp):
    """Returns a dict of measurements for one configuration."""
    w = subprocess.Popen([WORKLOAD, "-n", str(rounds), "-w"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    w.stdout.readline()  # ready
    prof, out, skip = None, None, old_ids()
    if cfg.startswith("profcap"):
        out = os.path.join(tmp, "p.pb")
        args = [PROFCAP, "capture", "-p", str(w.pid), "-F", str(hz), "--seconds", "600",
                "-q", "--no-kernel", "-o", out]
        if cfg == "profcap-fp":
            args.append("--no-unwind")
        prof = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):  # until the program is loaded
            if bpf_prog_stats(skip) is not None:
                break
            time.sleep(0.05)
        time.sleep(0.2)
    elif cfg == "perf-dwarf":
        out = os.path.join(tmp, "perf.data")
        prof = subprocess.Popen(["perf", "record", "-q", "-F", str(hz), "--call-graph", "dwarf",
                                 "-p", str(w.pid), "-o", out],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
    # The profiler's CPU while the workload works: its own (user space)
    # plus the BPF program's (spent in the sampled thread's context).
    ours = cfg.startswith("profcap")
    c0 = cpu_of(prof.pid) if prof else 0.0
    b0 = (bpf_prog_stats(skip) if ours else None) or (0, 0)
    w.stdin.write("go\n")
    w.stdin.flush()
    line = w.stdout.readline()
    c1 = cpu_of(prof.pid) if prof else 0.0
    b1 = (bpf_prog_stats(skip) if ours else None) or (0, 0)
    w.wait()
    work = float(line.split()[1])
    res = {"work": work, "cpu": 0.0, "total": 0.0, "bytes": 0, "bpf_ns": b1[0] - b0[0],
           "bpf_cnt": b1[1] - b0[1], "post": 0.0}
    if prof:
        res["cpu"] = c1 - c0 + res["bpf_ns"] / 1e9
        prof.send_signal(signal.SIGINT)
        _, _, ru = os.wait4(prof.pid, 0)
        res["total"] = ru.ru_utime + ru.ru_stime + res["bpf_ns"] / 1e9
        res["bytes"] = os.path.getsize(out) if os.path.exists(out) else 0
        if cfg == "perf-dwarf":
            p = subprocess.Popen(["sh", "-c", f"perf script -i {out} > {tmp}/perf.txt 2>/dev/null"])
            _, _, ru = os.wait4(p.pid, 0)
            res["post"] = ru.ru_utime + ru.ru_stime
        os.unlink(out)
    return res


def startup(tmp):
    """Launch-to-first-sample of a system-wide capture, and its table line."""
    out = os.path.join(tmp, "s.pb")
    skip = old_ids()
    # Two busy processes, so that user stacks need tables at once.
    busy = [subprocess.Popen([WORKLOAD, "-d", "5"], stdout=subprocess.DEVNULL),
            subprocess.Popen([WORKLOAD.replace("nofp_main", "groundtruth"), "-d", "5"],
                             stdout=subprocess.DEVNULL)]
    time.sleep(0.2)
    t0 = time.monotonic()
    p = subprocess.Popen([PROFCAP, "capture", "-a", "--seconds", "3", "-o", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = None
    while p.poll() is None and time.monotonic() - t0 < 10:
        s = bpf_prog_stats(skip)
        if s and s[1] > 0:
            first = time.monotonic() - t0
            break
        time.sleep(0.005)
    _, err = p.communicate()
    for b in busy:
        b.kill()
        b.wait()
    line = next((x for x in err.splitlines() if "unwind tables:" in x), "")
    return first, line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1500)
    ap.add_argument("--startup-only", action="store_true")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("unwind_bench: needs root (BPF, perf events, kernel.bpf_stats_enabled)")
    for f in (PROFCAP, WORKLOAD):
        if not os.path.exists(f):
            sys.exit(f"unwind_bench: {f} is missing: run make")
    if a.startup_only:
        with tempfile.TemporaryDirectory() as tmp:
            first, line = startup(tmp)
        print(f"start-up (system-wide, -a): first sample {first * 1e3 if first else -1:.0f} ms "
              f"after launch; {re.sub('^profcap: ', '', line)}")
        return
    old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
    cfgs = [("none", 0)] + [(c, hz) for hz in (99, 999)
                            for c in ("profcap-tables", "profcap-fp", "perf-dwarf")]
    results = {c: [] for c in cfgs}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(a.runs):
                for c in cfgs:
                    results[c].append(one_run(c[0], c[1], a.rounds, tmp))
            first, line = startup(tmp)
    finally:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)

    med = lambda c, k: statistics.median(r[k] for r in results[c])
    base = med(("none", 0), "work")
    print(f"workload: nofp_main -n {a.rounds} (no frame pointers), {a.runs} runs, medians; "
          f"{os.cpu_count()} CPUs")
    print("work: workload wall s; window CPU: profiler CPU while the workload ran (BPF "
          "included); total CPU: whole profiler run incl. start-up; post: perf script")
    print(f"{'config':<16}{'Hz':>5}{'work s':>9}{'slowdown':>10}{'window CPU':>11}"
          f"{'total CPU':>10}{'bpf ns/smp':>11}{'samples':>8}{'bytes':>10}{'post CPU':>9}")
    for c in cfgs:
        cnt = sum(r["bpf_cnt"] for r in results[c])
        per = sum(r["bpf_ns"] for r in results[c]) / cnt if cnt else 0
        w = med(c, "work")
        print(f"{c[0]:<16}{c[1] or '-':>5}{w:>9.3f}{100 * (w / base - 1):>9.1f}%"
              f"{med(c, 'cpu'):>11.3f}{med(c, 'total'):>10.3f}{per:>11.0f}"
              f"{int(med(c, 'bpf_cnt')):>8}{int(med(c, 'bytes')):>10}{med(c, 'post'):>9.3f}")
    for hz in (99, 999):
        t, d = med(("profcap-tables", hz), "cpu"), med(("perf-dwarf", hz), "cpu")
        dp = d + med(("perf-dwarf", hz), "post")
        f = med(("profcap-fp", hz), "cpu")
        print(f"{hz} Hz window CPU: profcap-tables / perf-dwarf record = "
              f"{t / d if d else 0:.3f}, / perf-dwarf record+script = {t / dp if dp else 0:.3f}, "
              f"/ profcap-fp = {t / f if f else 0:.2f}")
    print(f"start-up (system-wide, -a): first sample {first * 1e3 if first else -1:.0f} ms "
          f"after launch; {re.sub('^profcap: ', '', line)}")


if __name__ == "__main__":
    main()
