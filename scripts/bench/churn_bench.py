#!/usr/bin/python3
"""churn_bench.py - complete stacks of short-lived processes, system-wide,
profcap against perf in one run.

Two workloads, each run for --seconds while a system-wide profiler samples
at --freq Hz:
  nofp   build/tests/workloads/nofp_main -d 0.04 exec'd in a loop: 40 ms
         processes of a binary and library built without frame pointers
         (its stacks end main -> __libc_start_call_main -> ... -> _start)
  cc     gcc -O2 -c of two small C files in a loop: cc1 processes (Debian's
         cc1 has no frame pointers), each living a few tens of ms
Profilers, interleaved round by round (every config once per round):
  profcap      profcap capture -a (table unwinding, the default)
  perf-dwarf   perf record -a --call-graph dwarf, then perf script (it
               copies 8 KiB of stack per sample and unwinds afterwards)
  perf-fp      perf record -a -g, then perf script (frame pointers: the
               CPU reference)
For each: the share of the target's samples with a user stack whose
outermost user frame is _start (complete; samples of a process past
exit_mm() have no user stack and do not count, for either tool), the number of target processes seen, and the profiler's
CPU: record (user + sys of the profiler process, from wait4) and post
(perf script), and its peak RSS (record; wait4's ru_maxrss). Medians over --runs rounds, and record CPU ratios paired
round by round (profcap over each other config).
The length matters: perf's record CPU barely grows with --seconds (the
kernel hands it each process's mappings as events), profcap's grows with
every new process (its /proc reads and descriptions), so quote both a
short (5 s) and a long (30 s) capture.

profcap runs as shipped: a copy alone in the run's temporary directory.

Usage (root): scripts/bench/churn_bench.py [--runs 3] [--seconds 5] [--freq 99]
              [--workloads nofp,cc] [--configs profcap,perf-dwarf,perf-fp]
              [--alt BIN] [--profcap BIN] [--bin NAME=BIN ...] [--json FILE]
  --alt BIN       also config profcap-alt: this profcap binary (e.g. main's
                  build), interleaved with the others: an A/B
  --profcap BIN   the binary of config profcap (default build/profcap)
  --bin NAME=BIN  also config profcap-NAME: this binary (repeatable: one
                  config per build variant, all interleaved)
  --json FILE     write every round's figures there, per workload and config
"""
import argparse
import json
import math
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
NOFP = os.path.join(REPO, "build", "tests", "workloads", "nofp_main")
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

SOURCE = """#include <stdio.h>
#include <string.h>
struct s { int a[64]; };
static int f(struct s *x, int n) { int t = 0; for (int i = 0; i < n; i++) t += x->a[i & 63] * i; return t; }
int main(int c, char **v) { struct s x; memset(&x, c, sizeof x); printf("%d\\n", f(&x, strlen(v[0]))); return 0; }
"""

# (executable names in profcap's capture: the file's, or the comm of a
# process gone before it was looked at; comm in perf script)
# Samples count by their thread's name (the shell's child before exec is
# another program).
TARGET = {"nofp": (("nofp_main", "nofp-main"), "nofp-main"), "cc": (("cc1",), "cc1")}


def loop_cmd(workload, tmp, seconds):
    if workload == "nofp":
        body = f"{NOFP} -d 0.04 >> {tmp}/ready.txt"  # "ready PID": the loop's own
    else:
        a, b = os.path.join(tmp, "a.c"), os.path.join(tmp, "b.c")
        for p in (a, b):
            with open(p, "w") as f:
                f.write(SOURCE)
        body = (f"gcc -O2 -c {a} -o {tmp}/a.o; gcc -O2 -c {b} -o {tmp}/b.o")
    # bash counts whole seconds: a float (--seconds 5 parses as 5.0) is a
    # syntax error there, and the loop would never run.
    secs = int(math.ceil(seconds))
    return ["bash", "-c", f"end=$((SECONDS+{secs})); while [ $SECONDS -lt $end ]; do {body}; done"]


def cpu_of(ru):
    return ru.ru_utime + ru.ru_stime


# Config name -> the binary it runs, for profcap-alt and the --bin configs.
BINS = {}


def run_profiler(cfg, out, seconds, freq):
    """Start the profiler; returns the Popen."""
    if cfg.startswith("profcap"):
        cmd = [BINS.get(cfg, PROFCAP), "capture", "-a", "-q", "-F", str(freq), "--seconds",
               str(seconds), "-o", out]
    elif cfg == "perf-dwarf":
        cmd = ["perf", "record", "-q", "-a", "-F", str(freq), "--call-graph", "dwarf", "-o", out,
               "--", "sleep", str(seconds)]
    else:
        cmd = ["perf", "record", "-q", "-a", "-F", str(freq), "-g", "-o", out, "--", "sleep",
               str(seconds)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def loop_pids(tmp):
    """PIDs the nofp loop started (each prints "ready PID"), else None."""
    try:
        with open(os.path.join(tmp, "ready.txt")) as f:
            return {int(l.split()[1]) for l in f if l.startswith("ready ")}
    except OSError:
        return None


def score_profcap(path, exes, ours):
    from capture_util import decode
    total = ok = 0
    pids = set()
    for r in decode(path)["resources"]:
        # By thread name, not the resource's executable: a process first
        # seen before its exec (the shell's child) and gone before profcap
        # saw the exec keeps the shell's name.
        if ours is not None and r["attrs"].get("process.pid") not in ours:
            continue  # not the loop's (another process of that binary)
        pids.add(r["attrs"].get("process.pid"))
        for s in r["samples"]:
            if s["attrs"].get("thread.name") not in exes:
                continue  # the shell's fork before exec, as perf's comm filter does
            names = [f[0] for f in s["frames"] if f[1] == "native"]
            if not names:
                continue  # no user stack (a process freeing its memory in exit)
            total += s["value"]
            ok += s["value"] if names and names[-1] == "_start" else 0
    return total, ok, len(pids)


def score_perf(text, comm, ours):
    """perf script output: a header line per sample, then frames (leaf
    first: 'addr sym+off (dso)'), then a blank line."""
    total = ok = 0
    pids = set()
    for block in text.split("\n\n"):
        lines = [l for l in block.strip().split("\n") if l.strip()]
        if not lines or not lines[0].split() or lines[0].split()[0] != comm:
            continue
        parts = lines[0].split()
        pid = parts[1].split("/")[0]
        if ours is not None and (not pid.isdigit() or int(pid) not in ours):
            continue
        pids.add(pid)
        frames = [l.split()[1].split("+")[0] for l in lines[1:] if len(l.split()) >= 2]
        user = [f for f, l in zip(frames, lines[1:]) if "[kernel.kallsyms]" not in l]
        if not user:
            continue  # no user stack, as for profcap
        total += 1
        ok += 1 if user and user[-1] == "_start" else 0
    return total, ok, len(pids)


def one(cfg, workload, seconds, freq, tmp):
    exe, comm = TARGET[workload]
    out = os.path.join(tmp, "out.pb" if cfg.startswith("profcap") else "perf.data")
    if os.path.exists(os.path.join(tmp, "ready.txt")):
        os.unlink(os.path.join(tmp, "ready.txt"))
    loop = subprocess.Popen(loop_cmd(workload, tmp, seconds + 2), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    prof = run_profiler(cfg, out, seconds, freq)
    _, status, ru = os.wait4(prof.pid, 0)
    prof.returncode = os.waitstatus_to_exitcode(status)
    rec_cpu = cpu_of(ru)
    loop.wait()
    post = 0.0
    if cfg.startswith("profcap"):
        total, ok, procs = score_profcap(out, exe, loop_pids(tmp))
    else:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(["perf", "script", "-i", out, "-F", "comm,pid,ip,sym,dso"],
                           capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        post = cpu_of(after) - cpu_of(before)
        total, ok, procs = score_perf(r.stdout, comm, loop_pids(tmp))
    return {"total": total, "ok": ok, "procs": procs, "rec": rec_cpu, "post": post,
            "rss": ru.ru_maxrss}


def main():
    global PROFCAP
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--freq", type=int, default=99)
    ap.add_argument("--workloads", default="nofp,cc")
    ap.add_argument("--configs", default="profcap,perf-dwarf,perf-fp")
    ap.add_argument("--alt", metavar="BIN", help="also config profcap-alt: this binary (A/B)")
    ap.add_argument("--profcap", metavar="BIN", default=PROFCAP,
                    help="the binary of config profcap")
    ap.add_argument("--bin", metavar="NAME=BIN", action="append", default=[],
                    help="also config profcap-NAME: this binary (repeatable)")
    ap.add_argument("--json", metavar="FILE", help="write every round's figures there")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("churn_bench.py: run as root")
    cfgs = a.configs.split(",")
    bins = {}
    if a.alt:
        bins["profcap-alt"] = a.alt
    for spec in a.bin:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"churn_bench.py: --bin {spec}: want NAME=BIN")
        bins["profcap-" + name] = path
    cfgs += [c for c in bins if c not in cfgs]
    if not shutil.which("perf"):
        cfgs = [c for c in cfgs if not c.startswith("perf")]
        print("# perf not installed: profcap only")
    works = a.workloads.split(",")
    res = {(w, c): [] for w in works for c in cfgs}
    with tempfile.TemporaryDirectory() as tmp:
        # profcap as shipped, alone (from build/ it would also read its
        # own symbols and lines from build/profcap.debug, as it samples
        # itself: CPU no installed copy spends)
        PROFCAP = shutil.copy2(a.profcap, os.path.join(tmp, "profcap"))
        for i, (c, path) in enumerate(bins.items()):
            BINS[c] = shutil.copy2(path, os.path.join(tmp, f"profcap-{i}"))
        for r in range(a.runs):
            for w in works:
                for c in cfgs:
                    x = one(c, w, a.seconds, a.freq, tmp)
                    res[(w, c)].append(x)
                    print(f"# round {r} {w} {c}: {x['ok']}/{x['total']} complete, "
                          f"{x['procs']} processes, record CPU {x['rec']:.2f} s, "
                          f"post {x['post']:.2f} s, peak RSS {x['rss'] / 1024:.1f} MB, "
                          f"load {os.getloadavg()[0]:.1f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "seconds": a.seconds, "freq": a.freq,
                       "binaries": dict(bins, profcap=a.profcap),
                       "results": {f"{w} {c}": xs for (w, c), xs in res.items()}}, f, indent=1)
    width = max(11, *(len(c) for c in cfgs))
    print(f"{'workload':8} {'profiler':{width}} {'complete':>9} {'samples':>8} {'procs':>6} "
          f"{'record CPU':>11} {'post CPU':>9} {'peak RSS':>9}")
    for w in works:
        for c in cfgs:
            xs = res[(w, c)]
            med = lambda k: statistics.median(x[k] for x in xs)
            share = statistics.median(x["ok"] / x["total"] if x["total"] else 0 for x in xs)
            print(f"{w:8} {c:{width}} {100 * share:8.1f}% {med('total'):8.0f} {med('procs'):6.0f} "
                  f"{med('rec'):10.2f}s {med('post'):8.2f}s {med('rss') / 1024:7.1f}MB")
    # Record CPU paired round by round (the machine's load drifts between
    # rounds more than between the configs of one round): the median of
    # the per-round ratios, with their spread.
    pairs = [(a_, b_) for a_ in ["profcap"] + list(bins) for b_ in cfgs
             if a_ in cfgs and b_ != a_ and b_ != "profcap" and not b_.startswith("profcap-")]
    pairs += [(c, "profcap") for c in bins if c in cfgs and "profcap" in cfgs]
    for w in works:
        for a_, b_ in pairs:
            rs = [x["rec"] / y["rec"] for x, y in zip(res[(w, a_)], res[(w, b_)]) if y["rec"] > 0]
            if rs:
                print(f"{w:8} record CPU {a_} / {b_}: paired median {statistics.median(rs):.2f} "
                      f"(rounds {min(rs):.2f}-{max(rs):.2f})")


if __name__ == "__main__":
    main()
