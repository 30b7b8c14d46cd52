#!/usr/bin/python3
"""unwind_soak.py - `profcap agent` on a host that keeps starting new binaries,
with a row store forced small (PROFCAP_UNWIND_ROWS) so that file tables must
be reclaimed for new ones to get a table.

Load: copies of the no-frame-pointer workload nofp_main, each a distinct file
(new inode: a new table), started one after another (--life seconds each,
--copies distinct files, round-robin, each copy rewritten every round so
its inode changes and the old table is garbage). The agent writes 1 s
windows; each window's JSON status line gives RSS and BPF map memory. At
the end, per window: RSS, BPF memory, and the share of nofp-main samples
complete down to main (ground truth: the workload's known call chains, as
in tests/e2e/test_unwind.py). Flat RSS/BPF and unchanged completeness over
the run show that tables are reclaimed. Reports first/last/peak and the
growth over the second half.

Usage (root): scripts/bench/unwind_soak.py [--windows 60] [--rows 150000]
"""
import argparse
import glob
import json
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
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
from capture_util import PROFCAP, WORKLOADS, decode  # noqa: E402
from test_unwind import chain_of, user_names  # noqa: E402


def churn(tmp, copies, life, stop):
    src = os.path.join(WORKLOADS, "nofp_main")
    i = 0
    while not stop.is_set():
        path = os.path.join(tmp, f"bin{i % copies}")
        tmpf = path + ".new"
        shutil.copy(src, tmpf)
        os.rename(tmpf, path)  # a new inode every time
        subprocess.run([path, "-d", str(life)], stdout=subprocess.DEVNULL,
                       env=dict(os.environ, LD_LIBRARY_PATH=WORKLOADS))  # libnofp.so
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--windows", type=int, default=60)
    ap.add_argument("--rows", type=int, default=150000)
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--life", type=float, default=0.5)
    ap.add_argument("--agent-args", default="", help="extra agent flags, e.g. '--no-unwind'")
    ap.add_argument("--series", action="store_true", help="print RSS per window too")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("unwind_soak.py: run as root")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        env = dict(os.environ, PROFCAP_UNWIND_ROWS=str(a.rows))
        agent = subprocess.Popen([PROFCAP, "agent", "--interval", "1s", "-F", "99", "--json",
                                  "--output-dir", out] + a.agent_args.split(),
                                 stderr=subprocess.PIPE, text=True,
                                 env=env)
        stop = threading.Event()
        t = threading.Thread(target=churn, args=(tmp, a.copies, a.life, stop), daemon=True)
        t.start()
        status = []
        while len(status) < a.windows:
            line = agent.stderr.readline()
            if not line:
                break
            if line.startswith("{"):
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if ev.get("event") == "window":
                    status.append(ev)
        stop.set()
        agent.send_signal(signal.SIGINT)
        agent.wait(timeout=60)
        t.join(timeout=30)
        files = sorted(glob.glob(os.path.join(out, "*")), key=os.path.getmtime)
        comp = []
        for f in files:
            try:
                d = decode(f)
            except Exception:  # noqa: BLE001 (a partial last file)
                continue
            tot = ok = 0
            for r in d["resources"]:
                for s in r["samples"]:
                    if s["attrs"].get("thread.name") != "nofp-main":
                        continue
                    tot += s["value"]
                    ok += s["value"] if chain_of(user_names(s)) else 0
            if tot:
                comp.append(ok / tot)
    rss = [s["rss_kb"] / 1024 for s in status]
    bpf = [s.get("bpf_kb", 0) / 1024 for s in status]
    if not rss:
        sys.exit("no status lines from the agent")
    half = len(rss) // 2
    if a.series:
        print("RSS MB per window: " + " ".join(f"{x:.0f}" for x in rss))
    print(f"{len(status)} windows of 1 s, 99 Hz, row store {a.rows} rows "
          f"({a.rows * 8 / 1048576:.1f} MiB), {a.copies} distinct binaries rewritten "
          f"round-robin, {a.life} s each")
    for name, v in (("RSS MB", rss), ("BPF MiB", bpf)):
        print(f"{name:8} first {v[0]:6.1f} last {v[-1]:6.1f} peak {max(v):6.1f} "
              f"median 2nd half {statistics.median(v[half:]):6.1f} "
              f"growth 2nd half {v[-1] - v[half]:+6.1f}")
    if comp:
        h = len(comp) // 2
        print(f"nofp-main complete: first half median {100 * statistics.median(comp[:h or 1]):.1f}%"
              f", second half median {100 * statistics.median(comp[h:]):.1f}% "
              f"({len(comp)} windows with samples)")


if __name__ == "__main__":
    main()
