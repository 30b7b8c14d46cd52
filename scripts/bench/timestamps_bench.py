#!/usr/bin/python3
"""timestamps_bench.py - what `capture --timestamps` costs against today's
aggregated capture and against `perf record -g`.

1. A 1 s all-CPU capture (-a, 99 Hz, --seconds 1; perf: -a -g -F 99 --
   sleep 1): wall time, CPU (user + system of the profiler and its
   children) and peak RSS (getrusage of the child), aggregated (agg),
   --timestamps (ts) and perf.
2. Slowdown at 999 Hz: a fixed amount of C work (a spin loop, built here
   with gcc) timed by its own CPU time (user + system, which the sampling
   interrupts are charged to) and wall time, alone (base) and under
   profcap -p -F 999 (agg), the same with --timestamps (ts) and
   `perf record -g -F 999 -p` (perf). The profiler attaches before the work
   starts.
3. Output size per 10 000 samples, from the captures of part 2: profcap's
   file (OTLP) and perf.data, over the samples each says it took.
Every round runs every configuration in a new random order; medians over
--rounds rounds (ratios to base per round, then their median).

Usage (root): scripts/bench/timestamps_bench.py [--rounds 5] [--work N]
              [--out FILE.md]
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROFCAP = os.path.join(REPO, "build", "profcap")

WORK = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}
__attribute__((noinline)) static void mid(unsigned long n) { leaf(n); }
int main(int argc, char **argv)
{
	unsigned long n = strtoul(argv[1], NULL, 10);
	struct timespec a, b;
	struct rusage ru;
	char line[16];

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 100; i++)
		mid(n / 100);
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	printf("%f %f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		       ru.ru_stime.tv_usec / 1e6);
	return 0;
}
"""


def run_measured(cmd):
    """Run @cmd; (wall s, CPU s of it and its children, peak RSS KiB, stderr)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {err[-500:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, err


def samples_of(kind, err):
    if kind == "perf":
        m = re.search(r"\((\d+) samples\)", err)
    else:
        m = re.search(r"captured (\d+) samples", err)
    return int(m.group(1)) if m else 0


def capture_1s(kind, d):
    out = os.path.join(d, "cap1." + ("data" if kind == "perf" else "pb"))
    if kind == "perf":
        cmd = ["perf", "record", "-q", "-a", "-g", "-F", "99", "-o", out, "--", "sleep", "1"]
    else:
        cmd = [PROFCAP, "capture", "-a", "-F", "99", "--seconds", "1", "-o", out]
        if kind == "ts":
            cmd.append("--timestamps")
    wall, cpu, rss, _ = run_measured(cmd)
    return {"wall": wall, "cpu": cpu, "rss": rss}


def slowdown(kind, exe, work, d):
    """Run the work under @kind; (wall, cpu) of the work, output bytes, samples."""
    w = subprocess.Popen([exe, str(work)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert w.stdout.readline().startswith("ready")
    prof, out = None, os.path.join(d, "slow." + ("data" if kind == "perf" else "pb"))
    if kind == "perf":
        prof = subprocess.Popen(["perf", "record", "-g", "-F", "999", "-o", out, "-p", str(w.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
    elif kind in ("agg", "ts"):
        cmd = [PROFCAP, "capture", "-F", "999", "-p", str(w.pid), "--seconds", "600", "-o", out]
        if kind == "ts":
            cmd.append("--timestamps")
        prof = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(2.0)  # loaded and attached (BPF load, tables of the workload)
    w.stdin.write("go\n")
    w.stdin.flush()
    wall, cpu = map(float, w.stdout.readline().split())
    w.wait()
    size = nsamp = 0
    if prof:
        prof.send_signal(2)
        err = prof.communicate(timeout=120)[1]
        size = os.path.getsize(out) if os.path.exists(out) else 0
        nsamp = samples_of(kind, err)
    return {"wall": wall, "cpu": cpu, "bytes": size, "samples": nsamp}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", type=int, default=400_000_000)
    ap.add_argument("--out")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="ts-bench-")
    exe = os.path.join(d, "work")
    with open(exe + ".c", "w") as f:
        f.write(WORK)
    subprocess.run(["gcc", "-O1", "-fno-omit-frame-pointer", "-o", exe, exe + ".c"], check=True)
    cap = {k: [] for k in ("agg", "ts", "perf")}
    slow = {k: [] for k in ("base", "agg", "ts", "perf")}
    ratios = {k: {"cpu": [], "wall": []} for k in ("agg", "ts", "perf")}
    for rnd in range(a.rounds):
        order = list(cap)
        random.shuffle(order)
        for k in order:
            cap[k].append(capture_1s(k, d))
        order = list(slow)
        random.shuffle(order)
        got = {}
        for k in order:
            got[k] = slowdown(k, exe, a.work, d)
            slow[k].append(got[k])
        for k in ratios:
            for m in ("cpu", "wall"):
                ratios[k][m].append(got[k][m] / got["base"][m])
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    lines = ["# capture --timestamps: cost", "",
             f"`scripts/bench/timestamps_bench.py --rounds {a.rounds} --work {a.work}` on "
             f"{os.uname().nodename} ({os.cpu_count()} CPUs, Linux {os.uname().release}); "
             "medians over rounds, configurations interleaved in random order.", "",
             "## 1 s all-CPU capture at 99 Hz", "",
             "| profiler | wall s | CPU s | peak RSS MiB |", "|---|---|---|---|"]
    for k, name in (("agg", "profcap (aggregated)"), ("ts", "profcap --timestamps"), ("perf", "perf record -a -g")):
        lines.append(f"| {name} | {med([x['wall'] for x in cap[k]]):.3f} | "
                     f"{med([x['cpu'] for x in cap[k]]):.3f} | {med([x['rss'] for x in cap[k]]) / 1024:.1f} |")
    lines += ["", "## 999 Hz workload slowdown (the work's own time)", "",
              "| profiler | CPU s | wall s | CPU / base | wall / base |", "|---|---|---|---|---|"]
    for k, name in (("base", "none"), ("agg", "profcap (aggregated)"), ("ts", "profcap --timestamps"),
                    ("perf", "perf record -g")):
        row = f"| {name} | {med([x['cpu'] for x in slow[k]]):.3f} | {med([x['wall'] for x in slow[k]]):.3f} |"
        if k == "base":
            row += " 1 | 1 |"
        else:
            row += f" {med(ratios[k]['cpu']):.4f} | {med(ratios[k]['wall']):.4f} |"
        lines.append(row)
    lines += ["", "## Output size per 10 000 samples (the 999 Hz captures)", "",
              "| profiler | samples | bytes | KiB per 10 k samples |", "|---|---|---|---|"]
    for k, name in (("agg", "profcap (aggregated, OTLP)"), ("ts", "profcap --timestamps (OTLP)"),
                    ("perf", "perf record -g (perf.data)")):
        per = [x["bytes"] * 10000 / x["samples"] / 1024 for x in slow[k] if x["samples"]]
        lines.append(f"| {name} | {med([x['samples'] for x in slow[k]]):.0f} | "
                     f"{med([x['bytes'] for x in slow[k]]):.0f} | {med(per):.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
