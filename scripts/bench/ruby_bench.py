#!/usr/bin/python3
"""ruby_bench.py - what reading Ruby frames costs in BPF: the sampling
program's time per sample of a ruby process with the Ruby walker on and
off, and of a native process.

kernel.bpf_stats_enabled=1 while it runs. Configurations: ruby running
tests/e2e/ruby/split.rb (no flags) under `profcap capture -p PID -F 999`
with the walker on (rb-on) and off (rb-off, PROFCAP_RUBY=0), and a native
process (native: sha256sum /dev/zero) under the same command. For each:
run_time_ns of profcap's sampling program over the samples it kept (entry
0 of its stats map), between 1 s and 2.5 s into the capture. The walker's
cost is the paired difference rb-on - rb-off of the same round; each round
runs the configurations in a new random order; medians over --rounds.

Usage (root): scripts/bench/ruby_bench.py [--rounds 5]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROFCAP = os.path.join(REPO, "build", "profcap")
SPLIT = os.path.join(REPO, "tests", "e2e", "ruby", "split.rb")
CONFIGS = ("rb-on", "rb-off", "native")


def bpftool(*args):
    r = subprocess.run(["bpftool", "--json"] + list(args), capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout)


def held(pid, key):
    """IDs (@key: prog_id or map_id) process @pid holds (its fdinfo)."""
    ids = set()
    base = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(base):
        try:
            with open(os.path.join(base, fd)) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k == key:
                        ids.add(int(v))
        except OSError:
            pass
    return ids


def reading(pid):
    """(run_time_ns of the sampling program, samples it kept) now."""
    progs, maps = held(pid, "prog_id"), held(pid, "map_id")
    ns = sum(p.get("run_time_ns", 0) for p in bpftool("prog", "show")
             if p["id"] in progs and p.get("name", "").startswith("profcap_sample"))
    kept = 0
    for m in bpftool("map", "show"):
        if m["id"] not in maps or m.get("name") != "stats":
            continue
        for e in bpftool("map", "dump", "id", str(m["id"])):
            f = e.get("formatted", e)
            if f.get("key") not in (0, ["0x00", "0x00", "0x00", "0x00"]):
                continue
            for v in f.get("values", []):
                x = v["value"]
                kept += x if isinstance(x, int) else int.from_bytes(
                    bytes(int(b, 16) for b in x), "little")
    return ns, kept


def one(config):
    """ns per kept sample of one capture of @config."""
    if config == "native":
        work = subprocess.Popen(["sha256sum", "/dev/zero"], stdout=subprocess.DEVNULL)
    else:
        work = subprocess.Popen(["ruby", SPLIT, "30"], stdout=subprocess.PIPE, text=True)
        work.stdout.readline()
    env = dict(os.environ)
    if config == "rb-off":
        env["PROFCAP_RUBY"] = "0"
    cap = subprocess.Popen([PROFCAP, "capture", "-q", "-p", str(work.pid), "-F", "999",
                            "--seconds", "3.5", "-o", "/tmp/ruby_bench.pb"], env=env)
    try:
        time.sleep(1.0)
        ns0, k0 = reading(cap.pid)
        time.sleep(1.5)
        ns1, k1 = reading(cap.pid)
        cap.wait(timeout=60)
    finally:
        work.kill()
        work.wait()
    return (ns1 - ns0) / float(k1 - k0) if k1 > k0 else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=True)
    res = {c: [] for c in CONFIGS}
    diff = []
    try:
        for _ in range(a.rounds):
            order = list(CONFIGS)
            random.shuffle(order)
            got = {c: one(c) for c in order}
            for c in CONFIGS:
                res[c].append(got[c])
            diff.append(got["rb-on"] - got["rb-off"])
    finally:
        subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=0"])
    print("| configuration | ns per sample | rounds |")
    print("|---|---|---|")
    for c in CONFIGS:
        print("| %s | %.0f | %s |" % (c, statistics.median(res[c]),
                                      ", ".join("%.0f" % v for v in res[c])))
    print("| rb-on - rb-off (paired) | %.0f | %s |" % (statistics.median(diff),
                                                      ", ".join("%.0f" % v for v in diff)))


if __name__ == "__main__":
    main()
