#!/usr/bin/python3
"""threadctx_bench.py - per-sample cost of reading the OpenTelemetry thread
context (OTEP 4947) in the BPF program, and the memory of its maps
(kernel.bpf_stats_enabled: run_time_ns / run_cnt of profcap_sample, read with
bpftool while the capture runs; memlock of the maps that program uses).

Workloads: threadctx_writer (2 threads switching spans, the record read at
every sample) and groundtruth (no thread context: one map lookup). Each is
captured with -p by:
  before    /work/main's profcap (or --before BIN), when it exists: the
            program as it was before thread context (smaller key)
  off       this profcap with PROFCAP_NO_THREAD_CTX=1 (no lookup at all)
  on        this profcap (the default)
Configurations run --runs times interleaved; medians are printed.

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


def one(binary, env, pid, secs, freq):
    p = subprocess.Popen([binary, "capture", "-q", "-p", str(pid), "-F", str(freq), "--seconds",
                          str(secs), "-o", "/tmp/threadctx-bench.pb"], env=env)
    time.sleep(secs - 0.3)
    # Others may be capturing too: the program this capture holds open.
    held = held_prog_ids(p.pid)
    mine = [v for k, v in sample_progs().items() if k in held]
    mem = maps_memlock(set(mine[0].get("map_ids", []))) if len(mine) == 1 else {}
    p.wait()
    if len(mine) != 1 or not mine[0].get("run_cnt"):
        return float("nan"), 0, mem
    return mine[0]["run_time_ns"] / mine[0]["run_cnt"], mine[0]["run_cnt"], mem


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
    open(go, "w").close()
    plain = subprocess.Popen([os.path.join(WL, "groundtruth")], stdout=subprocess.PIPE, text=True)
    plain.stdout.readline()
    on = dict(os.environ)
    off = dict(os.environ, PROFCAP_NO_THREAD_CTX="1")
    configs = {}
    for wname, pid in (("writer (thread ctx)", writer.pid), ("groundtruth (none)", plain.pid)):
        if os.path.exists(a.before):
            configs[f"{wname:20} before"] = (a.before, on, pid)
        configs[f"{wname:20} off"] = (PROFCAP, off, pid)
        configs[f"{wname:20} on"] = (PROFCAP, on, pid)
    res = {k: [] for k in configs}
    try:
        for _ in range(a.runs):
            for k, (binary, env, pid) in configs.items():
                res[k].append(one(binary, env, pid, a.seconds, a.freq))
    finally:
        writer.kill()
        plain.kill()
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)
        tmp.cleanup()

    def med(v, i):
        ok = [x[i] for x in v if x[1]]
        return statistics.median(ok) if ok else float("nan")

    print(f"{a.freq} Hz, {a.seconds:g} s, {a.runs} runs interleaved, 2 shared CPUs; "
          "ns per BPF run of profcap_sample (median)")
    base = {}
    for k, v in res.items():
        m = med(v, 0)
        w = k.rsplit(" ", 1)[0]
        base.setdefault(w, m)
        mem = v[-1][2]
        key = {n: b for n, b in mem.items() if n in ("counts0", "counts1", "threadctx_procs")}
        print(f"  {k:30} {m:7.0f} ns  x{m / base[w]:.2f}  runs {med(v, 1):6.0f}  "
              f"memlock {sum(mem.values()) / 1048576:.2f} MiB  "
              + " ".join(f"{n} {b // 1024} KiB" for n, b in sorted(key.items())))


if __name__ == "__main__":
    main()
