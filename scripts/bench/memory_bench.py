#!/usr/bin/python3
"""memory_bench.py - cost of memory profiling (capture --memory) on
allocation-heavy workloads, side by side with other tools, interleaved round
by round (configurations in a new order every round; medians).

Workloads:
  loop   malloc(64) then free, N times (compiled here): the worst case, every
         call traps
  xz     xz -9 -T1 of a file of mixed text and random bytes: a real program's
         allocation rate
Configurations:
  base       the workload alone
  cpu        profcap capture -- CMD (CPU profile only): the reference of the
             two below, which adds profcap's start and end to the workload
  memory     profcap capture --memory -- CMD (allocator uprobes, default rate)
  usdt       the loop built against the otel_memory test sampler
             (tests/e2e/mem/otel_sampler.c) under capture --memory: the
             probes fire only for the sampled calls (loop only; skipped when
             the sampler source or sys/sdt.h is missing)
  memleak    bcc's memleak-bpfcc -c CMD (every call, frame-pointer stacks)
  heaptrack  heaptrack CMD (LD_PRELOAD, every call)
For each: the workload's wall time (median), the slowdown against base and,
for the loop, the cost per call pair (malloc + free) against base (memory
and usdt: against cpu, so profcap's own start and end are not counted). Then, from one more
run of the loop under capture -p with kernel.bpf_stats_enabled=1: BPF ns per
program run of profcap_mem_alloc / _ret / _free at the default rate
(almost all unsampled) and at --memory-rate 1 (every call sampled: the walk),
profcap's peak RSS and its BPF map memory (its own summary line).

Usage (root): scripts/bench/memory_bench.py [--runs 3] [--calls 2000000]
              [--configs base,memory,...] [--out FILE.md]
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
MEM = os.path.join(REPO, "tests", "e2e", "mem")

LOOP_C = r"""
#include <stdlib.h>
#include <unistd.h>
#ifdef USDT
void *otel_sampler_malloc(size_t n);
void otel_sampler_free(void *p);
#define MALLOC otel_sampler_malloc
#define FREE otel_sampler_free
#else
#define MALLOC malloc
#define FREE free
#endif
int main(int argc, char **argv)
{
	long n = atol(argv[1]), i;
	if (argc > 2)
		usleep(atoi(argv[2]) * 1000);
	for (i = 0; i < n; i++) {
		char *volatile p = MALLOC(64);
		p[0] = 1;
		FREE(p);
	}
	return 0;
}
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(tmp):
    """The loop (and its USDT variant when the sampler builds)."""
    src = os.path.join(tmp, "loop.c")
    with open(src, "w") as f:
        f.write(LOOP_C)
    sh(["gcc", "-O2", "-o", os.path.join(tmp, "loop"), src])
    sampler = os.path.join(MEM, "otel_sampler.c")
    if os.path.exists(sampler) and os.path.exists("/usr/include/x86_64-linux-gnu/sys/sdt.h"):
        sh(["gcc", "-O2", "-fPIC", "-shared", "-o", os.path.join(tmp, "libotel_sampler.so"),
            sampler, "-lm"])
        sh(["gcc", "-O2", "-DUSDT", "-o", os.path.join(tmp, "loop_usdt"), src,
            "-L" + tmp, "-Wl,-rpath," + tmp, "-lotel_sampler"])
    data = os.path.join(tmp, "data")
    rnd = random.Random(1)
    with open(data, "wb") as f:
        for _ in range(150):
            f.write(open(__file__, "rb").read())
            f.write(bytes(rnd.getrandbits(8) for _ in range(20000)))
    return data


def workload_cmd(tmp, name, calls, usdt=False):
    if name == "loop":
        return [os.path.join(tmp, "loop_usdt" if usdt else "loop"), str(calls)]
    return ["xz", "-9", "-T1", "-c", os.path.join(tmp, "data")]


def run_config(cfg, cmd, tmp):
    """Wall seconds of @cmd under @cfg; None when the tool cannot run."""
    out = os.path.join(tmp, "out.pb")
    if cfg == "base":
        full = cmd
    elif cfg == "cpu":
        full = [PROFCAP, "capture", "-q", "-o", out, "--"] + cmd
    elif cfg in ("memory", "usdt"):
        full = [PROFCAP, "capture", "--memory", "-q", "-o", out, "--"] + cmd
    elif cfg == "memleak":
        tool = shutil.which("memleak-bpfcc")
        if not tool:
            return None
        full = [tool, "-c", " ".join(cmd), "10"]
    elif cfg == "heaptrack":
        tool = shutil.which("heaptrack")
        if not tool:
            return None
        full = [tool, "-o", os.path.join(tmp, "ht")] + cmd
    t0 = time.monotonic()
    r = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       errors="replace")
    dt = time.monotonic() - t0
    if r.returncode != 0:
        sys.stderr.write("%s failed: %s\n" % (cfg, r.stderr[-500:]))
        return None
    return dt


def bpf_prog_stats():
    """{name: (run_cnt, run_time_ns)} of profcap's memory programs now."""
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    out = {}
    for p in json.loads(r.stdout or "[]"):
        name = p.get("name", "")
        if name.startswith("profcap_mem"):
            cnt, ns = out.get(name, (0, 0))
            out[name] = (cnt + p.get("run_cnt", 0), ns + p.get("run_time_ns", 0))
    return out


def per_run_ns(tmp, calls, rate):
    """BPF ns per run of each memory program, and profcap's summary lines,
    from capture -p of the loop with bpf_stats on."""
    w = subprocess.Popen([os.path.join(tmp, "loop"), str(calls), "1500"])
    args = [PROFCAP, "capture", "--memory", "-p", str(w.pid), "--seconds", "600", "-o",
            os.path.join(tmp, "stats.pb")]
    if rate:
        args[3:3] = ["--memory-rate", str(rate)]
    old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    try:
        p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        w.wait()
        stats = bpf_prog_stats()
        p.send_signal(2)
        _, err = p.communicate(timeout=300)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(old)
    ns = {k: (v[1] / v[0] if v[0] else 0.0, v[0]) for k, v in stats.items()}
    summary = [l for l in err.splitlines() if "memory" in l or "peak rss" in l]
    return ns, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--calls", type=int, default=2000000)
    ap.add_argument("--configs", default="base,cpu,memory,usdt,memleak,heaptrack")
    ap.add_argument("--workloads", default="loop,xz")
    ap.add_argument("--out")
    a = ap.parse_args()
    configs = a.configs.split(",")
    tmp = tempfile.mkdtemp(prefix="memory_bench.")
    build(tmp)
    times = {}
    for rnd in range(a.runs):
        order = [(w, c) for w in a.workloads.split(",") for c in configs
                 if not (c == "usdt" and (w != "loop" or
                                          not os.path.exists(os.path.join(tmp, "loop_usdt"))))]
        random.shuffle(order)
        for w, c in order:
            dt = run_config(c, workload_cmd(tmp, w, a.calls, usdt=c == "usdt"), tmp)
            times.setdefault((w, c), []).append(dt)
            print("round %d %s %s: %s" % (rnd, w, c, "%.2f s" % dt if dt else "n/a"),
                  flush=True)
    lines = ["# memory_bench: %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "",
             "Host: %s, %d CPUs, kernel %s; %d interleaved rounds, medians; loop = %d "
             "malloc(64)+free pairs." % (os.uname().nodename, os.cpu_count(),
                                         os.uname().release, a.runs, a.calls), "",
             "| workload | config | wall s | slowdown | per call pair |", "|---|---|---|---|---|"]
    def med(w, c):
        ts = [t for t in times.get((w, c), []) if t]
        return statistics.median(ts) if ts else None

    for w in a.workloads.split(","):
        b = med(w, "base")
        for c in configs:
            m = med(w, c)
            if m is None:
                lines.append("| %s | %s | n/a | | |" % (w, c))
                continue
            ref = med(w, "cpu") if c in ("memory", "usdt") and med(w, "cpu") else b
            slow = "%.2fx" % (m / b) if b else ""
            per = ("%.2f us" % ((m - ref) / a.calls * 1e6)) \
                if ref and w == "loop" and c != "base" else ""
            lines.append("| %s | %s | %.2f | %s | %s |" % (w, c, m, slow, per))
    for rate in (0, 1):
        ns, summary = per_run_ns(tmp, a.calls // 4, rate)
        lines += ["", "BPF ns per program run, capture -p of the loop at %s "
                  "(bpf_stats_enabled=1):" % ("the default rate" if not rate else
                                              "--memory-rate 1 (every call sampled)"), ""]
        for k in sorted(ns):
            lines.append("- %s: %.0f ns over %d runs" % (k, ns[k][0], ns[k][1]))
        lines += ["", "profcap's own lines:", ""] + ["    " + l for l in summary]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
