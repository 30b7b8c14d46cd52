#!/usr/bin/python3
"""perl_bench.py - what reading Perl frames costs in BPF: the sampling
program's time per sample of a perl process with the Perl walker on
and off, and of a native process.

kernel.bpf_stats_enabled=1 while it runs. Configurations, each under
`profcap capture -p PID -F 999`: /usr/bin/perl running
tests/e2e/perl/split.pl with the walker on (perl-on) and off (perl-off,
PROFCAP_PERL=0), and sha256sum /dev/zero (native). Per configuration:
run_time_ns over run_cnt of profcap's sampling program (bpftool's
kernel.bpf_stats figures), over 2 s from half a second after it is loaded: nearly
every run is a sample of the busy process (the 2 CPUs' other runs are
filtered out at once and dilute all configurations alike).
The walker's cost is the paired difference perl-on - perl-off of a round;
each round runs the configurations in a new random order; medians.

Usage (root): scripts/bench/perl_bench.py [--rounds 5] [--out FILE.md]
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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
SPLIT = os.path.join(REPO, "tests", "e2e", "perl", "split.pl")
CONFIGS = ("perl-on", "perl-off", "native")
RUNS = {c: [] for c in CONFIGS}  # program runs per second


def bpftool(*args):
    out = subprocess.run(["bpftool", "--json"] + list(args), capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def fd_ids(pid):
    """IDs of the BPF programs process @pid holds, from its fdinfo."""
    progs = set()
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            for line in open(os.path.join(d, fd)):
                k, _, v = line.partition(":")
                if k == "prog_id":
                    progs.add(int(v))
        except OSError:
            pass
    return progs


def snapshot(pid):
    """(run_time_ns, run_cnt) of profcap @pid's sampling program."""
    progs = fd_ids(pid)
    ps = [p for p in bpftool("prog", "show")
          if p["id"] in progs and p.get("name", "").startswith("profcap_sample")]
    if not ps:
        return None
    return sum(p.get("run_time_ns", 0) for p in ps), sum(p.get("run_cnt", 0) for p in ps)


def ns_per_sample(config):
    if config == "native":
        work = subprocess.Popen(["sha256sum", "/dev/zero"], stdout=subprocess.DEVNULL)
    else:
        work = subprocess.Popen(["/usr/bin/perl", SPLIT, "30"], stdout=subprocess.PIPE,
                                text=True)
        work.stdout.readline()
    env = dict(os.environ, PROFCAP_PERL="0") if config == "perl-off" else None
    cap = subprocess.Popen([PROFCAP, "capture", "-p", str(work.pid), "-F", "999", "--seconds",
                            "7", "-o", "/tmp/perl_bench.pb"], stderr=subprocess.DEVNULL,
                           env=env)
    try:
        a = None
        for _ in range(40):  # until the sampling program is loaded
            time.sleep(0.1)
            a = snapshot(cap.pid)
            if a and a[1]:
                break
        time.sleep(0.5)
        a = snapshot(cap.pid)
        time.sleep(2.0)
        b = snapshot(cap.pid)
    finally:
        cap.send_signal(signal.SIGINT)
        cap.wait()
        work.kill()
        work.wait()
    if not a or not b or b[1] <= a[1]:
        return None
    RUNS[config].append((b[1] - a[1]) / 2.0)
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
    knob = "/proc/sys/kernel/bpf_stats_enabled"
    old = open(knob).read().strip()
    try:
        open(knob, "w").write("1")
        for r in range(args.rounds):
            this = {c: ns_per_sample(c) for c in random.sample(CONFIGS, len(CONFIGS))}
            for c in CONFIGS:
                got[c].append(this[c])
            if this["perl-on"] is not None and this["perl-off"] is not None:
                diffs.append(this["perl-on"] - this["perl-off"])
            print("round %d: %s" % (r, {k: v and round(v) for k, v in this.items()}), flush=True)
    finally:
        open(knob, "w").write(old)
    lines = ["## BPF time per program run (ns, medians of %d rounds, -F 999)\n" % args.rounds,
             "| configuration | ns per run | rounds |", "|---|---|---|"]
    for c in CONFIGS:
        lines.append("| %s | %.0f | %s |" % (c, median(got[c]),
                                             ", ".join("%.0f" % x for x in got[c] if x)))
    lines.append("| perl-on - perl-off (paired) | %.0f | %s |" % (
        median(diffs), ", ".join("%.0f" % x for x in diffs)))
    lines.append("\nProgram runs per second (median; 999 would be the busy process's "
                 "samples alone): %s\n" % ", ".join("%s %.0f" % (c, median(RUNS[c]))
                                                     for c in CONFIGS))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        open(args.out, "w").write(text)


if __name__ == "__main__":
    main()
