#!/usr/bin/python3
"""threadctx_bench.py - per-sample cost of reading the OpenTelemetry thread
context (OTEP 4947) in the BPF program, and the memory of its maps
(kernel.bpf_stats_enabled: run_time_ns / run_cnt of profcap_sample, read with
bpftool while the capture runs; memlock of the maps that program uses).

Workloads: threadctx_writer (2 threads switching spans, the record read at
every sample), threadctx_writer_gd (the same with the variable in a
general-dynamic library: the record found through the thread's dtv, two more
reads) and groundtruth (no thread context: no lookup, as no profiled
process has an entry). Each is captured with -p, by all of these AT ONCE
(paired: the same samples under the same load; the attach order rotates):
  before    /work/main's profcap (or --before BIN), when it exists: the
            program as it was before thread context (smaller key)
  on        this profcap
Per workload, --runs rounds; medians of ns and of per-round ratios to the
same configuration's groundtruth run of that round (no lookup).

Usage (root): scripts/bench/threadctx_bench.py [--runs 5] [--seconds 3] [--freq 999]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
WL = os.path.join(REPO, "build", "tests", "workloads")


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j"] + list(args), capture_output=True, text=True).stdout
    return json.loads(out or "[]")


def sample_progs():
    return {p["id"]: p for p in bpftool("prog", "show") if p.get("name") == "profcap_sample"}


def held_prog_ids(pid):
    """prog_id of every BPF program fd process @pid holds (its fdinfo)."""
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(d) if os.path.isdir(d) else []:
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def maps_memlock(ids):
    """{name: memlock bytes} of maps @ids."""
    out = {}
    for m in bpftool("map", "show"):
        if m.get("id") in ids:
            out[m.get("name", "?")] = out.get(m.get("name", "?"), 0) + int(m.get("bytes_memlock", 0))
    return out


def together(confs, pid, secs, freq, outdir):
    """Capture @pid with every (name, binary, env) of @confs at the same time:
    each program runs on the same samples under the same load, so their
    ratio is free of the host's noise. {name: (ns per run, runs, memlock)}."""
    procs = []
    for name, binary, env in confs:
        procs.append((name, subprocess.Popen(
            [binary, "capture", "-q", "-p", str(pid), "-F", str(freq), "--seconds", str(secs),
             "-o", os.path.join(outdir, name.replace(" ", "_") + ".pb")], env=env)))
    time.sleep(secs - 0.3)
    progs = sample_progs()
    out = {}
    for name, p in procs:
        held = held_prog_ids(p.pid)
        mine = [v for k, v in progs.items() if k in held]
        mem = maps_memlock(set(mine[0].get("map_ids", []))) if len(mine) == 1 else {}
        if len(mine) == 1 and mine[0].get("run_cnt"):
            out[name] = (mine[0]["run_time_ns"] / mine[0]["run_cnt"], mine[0]["run_cnt"], mem)
        else:
            out[name] = (float("nan"), 0, mem)
    for _, p in procs:
        p.wait()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--freq", type=int, default=999)
    ap.add_argument("--before", default="/work/main/build/profcap")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("threadctx_bench.py: run as root")
    old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
    tmp = tempfile.TemporaryDirectory()
    go = os.path.join(tmp.name, "go")
    writer = subprocess.Popen([os.path.join(WL, "threadctx_writer"), "-g", go, "-d", "100000",
                               "-o", os.path.join(tmp.name, "truth.json"), "-t", "2"],
                              stdout=subprocess.PIPE, text=True)
    writer.stdout.readline()
    gd = subprocess.Popen([os.path.join(WL, "threadctx_writer_gd"), "-g", go, "-d", "100000",
                           "-o", os.path.join(tmp.name, "truth_gd.json"), "-t", "2"],
                          stdout=subprocess.PIPE, text=True)
    gd.stdout.readline()
    open(go, "w").close()
    plain = subprocess.Popen([os.path.join(WL, "groundtruth")], stdout=subprocess.PIPE, text=True)
    plain.stdout.readline()
    on = dict(os.environ)
    confs = [("on", PROFCAP, on)]
    if os.path.exists(a.before):
        confs.append(("before", a.before, on))
    work = (("writer (thread ctx)", writer.pid), ("writer, library (dtv)", gd.pid),
            ("groundtruth (none)", plain.pid))
    res = {w: [] for w, _ in work}
    try:
        for r in range(a.runs):
            for w, pid in work:
                # Rotate the attach order: the program attached first runs first.
                c = confs[r % len(confs):] + confs[:r % len(confs)]
                res[w].append(together(c, pid, a.seconds, a.freq, tmp.name))
    finally:
        writer.kill()
        gd.kill()
        plain.kill()
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)
        tmp.cleanup()

    print(f"{a.freq} Hz, {a.seconds:g} s, {a.runs} runs, the configurations of a workload "
          "captured at the same time (paired); ns per BPF run of profcap_sample: median, and "
          "median of the per-run ratios to groundtruth (no lookup)")
    base = res["groundtruth (none)"]
    for w, runs in res.items():
        for name, _, _ in confs:
            ns = [r[name][0] for r in runs if r[name][1]]
            ratio = [r[name][0] / b[name][0] for r, b in zip(runs, base)
                     if r[name][1] and b[name][1]]
            mem = runs[-1][name][2]
            key = {n: b for n, b in mem.items() if n in ("counts0", "counts1", "threadctx_procs")}
            print(f"  {w:22} {name:7} {statistics.median(ns) if ns else float('nan'):7.0f} ns  "
                  f"x{statistics.median(ratio) if ratio else float('nan'):.2f} vs none  "
                  f"memlock {sum(mem.values()) / 1048576:.2f} MiB  "
                  + " ".join(f"{n} {b // 1024} KiB" for n, b in sorted(key.items())))


if __name__ == "__main__":
    main()
