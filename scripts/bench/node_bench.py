#!/usr/bin/python3
"""node_bench.py - what reading JavaScript frames costs in BPF: the sampling
program's time per sample of a node process with the V8 walker on and off,
and of a native process.

kernel.bpf_stats_enabled=1 while it runs. Configurations: node running
tests/e2e/js/split.js (no flags) under `profcap capture -p PID -F 999`
with the walker on (js-on) and off (js-off, PROFCAP_V8=0), and a native
process (native: sha256sum /dev/zero) under the same command. For each:
run_time_ns of profcap's sampling program over the samples it kept (its
stats map), between 1 s and 2.5 s into the capture. The walker's cost is
the paired difference js-on - js-off of the same round. Every round runs
the configurations in a new random order; medians over --rounds rounds.

Usage (root): scripts/bench/node_bench.py [--rounds 5] [--out FILE.md]
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROFCAP = os.path.join(REPO, "build", "profcap")
SPLIT = os.path.join(REPO, "tests", "e2e", "js", "split.js")
CONFIGS = ("js-on", "js-off", "native")


def bpftool(*args):
    r = subprocess.run(["bpftool", "--json"] + list(args), capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout)


def held(pid):
    """IDs of the BPF programs and maps process @pid holds (its fdinfo)."""
    progs, maps = set(), set()
    base = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(base):
        try:
            with open(os.path.join(base, fd)) as f:
                for line in f:
                    key, _, val = line.partition(":")
                    if key == "prog_id":
                        progs.add(int(val))
                    elif key == "map_id":
                        maps.add(int(val))
        except OSError:
            pass
    return progs, maps


def kept_samples(map_id):
    """STAT_SAMPLES (entry 0 of the per-CPU stats map), summed."""
    for e in bpftool("map", "dump", "id", str(map_id)):
        f = e.get("formatted", e)
        if f.get("key") in (0, ["0x00", "0x00", "0x00", "0x00"]):
            total = 0
            for v in f.get("values", []):
                x = v["value"]
                total += x if isinstance(x, int) else int.from_bytes(
                    bytes(int(b, 16) for b in x), "little")
            return total
    return 0


def program_time(pid):
    """(run_time_ns, samples kept) of profcap @pid's sampling program."""
    pids, mids = held(pid)
    progs = [p for p in bpftool("prog", "show")
             if p["id"] in pids and p.get("name", "").startswith("profcap_sample")]
    stats = [m for m in bpftool("map", "show") if m["id"] in mids and m.get("name") == "stats"]
    if not progs or not stats:
        return None
    return sum(p.get("run_time_ns", 0) for p in progs), kept_samples(stats[0]["id"])


def ns_per_sample(config):
    if config == "native":
        work = subprocess.Popen(["sha256sum", "/dev/zero"], stdout=subprocess.DEVNULL)
    else:
        work = subprocess.Popen(["/usr/bin/node", SPLIT, "30"], stdout=subprocess.PIPE, text=True)
        work.stdout.readline()
    env = dict(os.environ, PROFCAP_V8="0") if config == "js-off" else None
    cap = subprocess.Popen([PROFCAP, "capture", "-p", str(work.pid), "-F", "999", "--seconds",
                            "4", "-o", "/tmp/node_bench.pb"], stderr=subprocess.DEVNULL, env=env)
    try:
        time.sleep(1.0)
        a = program_time(cap.pid)
        time.sleep(1.5)
        b = program_time(cap.pid)
    finally:
        cap.send_signal(signal.SIGINT)
        cap.wait()
        work.kill()
        work.wait()
    if not a or not b or b[1] <= a[1]:
        return None
    return (b[0] - a[0]) / float(b[1] - a[1])


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", help="write the result as Markdown here")
    args = ap.parse_args()
    if os.geteuid():
        sys.exit("needs root")
    got = {c: [] for c in CONFIGS}
    diffs = []
    old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    try:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
        for r in range(args.rounds):
            this = {}
            for c in random.sample(CONFIGS, len(CONFIGS)):
                this[c] = ns_per_sample(c)
                got[c].append(this[c])
            if this["js-on"] is not None and this["js-off"] is not None:
                diffs.append(this["js-on"] - this["js-off"])
            print("round %d: %s" % (r, {k: v and round(v) for k, v in this.items()}), flush=True)
    finally:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)
    lines = ["## BPF time per kept sample (ns, medians of %d rounds, -F 999)\n" % args.rounds,
             "| configuration | ns per sample | rounds |", "|---|---|---|"]
    for c in CONFIGS:
        lines.append("| %s | %.0f | %s |" % (c, median(got[c]),
                                             ", ".join("%.0f" % x for x in got[c] if x)))
    lines.append("| js-on - js-off (paired) | %.0f | %s |" % (
        median(diffs), ", ".join("%.0f" % x for x in diffs)))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
