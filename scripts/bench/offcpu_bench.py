#!/usr/bin/python3
"""offcpu_bench.py - cost of off-CPU profiling on a context-switch-heavy
workload (tests/workloads/offcpu_pingpong.c: two threads ping-ponging a byte
over two pipes), side by side with other tools, interleaved round by round.

Configurations (each round runs all, in turn; medians over --runs rounds):
  base         the workload alone
  cpu          profcap capture -a (CPU profile only)
  cpu-p        profcap capture -p PID (CPU profile only): what --off-cpu adds to
               -p is offcpu-p against this
  offcpu       profcap capture -a --off-cpu (default threshold)
  offcpu-p     profcap capture -p PID --off-cpu (only the workload tracked;
               waits completed by task works on Linux >= 6.18)
  offcpu-p-rseq  the same with PROFCAP_OFFCPU_TASKWORK=0: waits completed at
               rseq_update, the route of older kernels (the A/B of task works)
  offcpu-0     profcap capture -a --off-cpu --off-cpu-threshold 0 (every wait walked)
  floor        an empty BTF tracepoint program on sched_switch
               (scripts/bench/switch_floor.sh builds it): what any program
               there costs on this host, the floor of the off-CPU overhead
  bpftrace     bpftrace -e 'tracepoint:sched:sched_switch { @ = count(); }'
               (needs tracefs: this script mounts it for that run, then unmounts)
  perf         perf record --off-cpu -a (when this perf was built with BPF
               skeletons; else reported as unsupported; --perf PATH picks it)
  perf-p       perf record -F 99 -g -p PID (perf's CPU profile of the target)
  perf-offcpu-p  perf record -F 99 -g --off-cpu -p PID: what --off-cpu adds
               to perf -p is this against perf-p
The workload is pinned to one CPU (--cpu), so every hop is a context switch
on that CPU, as many per second as the machine does. For every
configuration: the workload's wall time and CPU time (user + system of its
two threads, which the tracepoint programs run on; steadier than wall time
on a shared machine), medians of --runs rounds (configurations in a new
order every round) with kernel.bpf_stats_enabled=0 (stats cost two clock
reads per program run), and from one more round
with bpf_stats_enabled=1 the BPF ns per context switch: run_time_ns summed
over the tool's programs divided by the run count of its sched_switch
program (every switch on the machine). The off-CPU profile's own cost is
also given paired: each off-CPU configuration over the CPU profile of the
same target (cpu or cpu-p) in the same round, median and quartiles of the
per-round ratios. Also the memlock of profcap's maps
(bpftool map show).

A/B of builds: --alt NAME=PATH adds, for every profcap configuration chosen,
the same configuration run with the binary PATH (shown as CONFIG:NAME), in
the same rounds.

With --adjacent, every round also runs each off-CPU configuration right
beside a run of its reference (which of the two first: random), and pairs
those: on a machine whose speed drifts within a round, the fairer pair.

Usage (root): scripts/bench/offcpu_bench.py [--runs 5] [--rounds 50000] [--cpu 1]
              [--configs a,b] [--alt NAME=PATH ...] [--adjacent]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFCAP = os.path.join(REPO, "build", "profcap")
PINGPONG = os.path.join(REPO, "build", "tests", "workloads", "offcpu_pingpong")
GO = "/tmp/offcpu-bench.go"
FLOOR = os.path.join(REPO, "build", "bench", "switch_floor")
TRACEFS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")


def progs():
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout
    return {p["id"]: p for p in json.loads(out or "[]")}


def maps_memlock(names, pid):
    out = subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True).stdout
    mine = owned_ids(pid, "map_id")
    return {m["name"]: m.get("bytes_memlock", 0) for m in json.loads(out or "[]")
            if m.get("name") in names and m.get("id") in mine}


def owned_ids(pid, key):
    """IDs (key "prog_id" or "map_id") of the BPF objects process @pid holds fds
    of: other tools running meanwhile on a shared machine are left out."""
    ids = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        ids.add(int(line.split()[1]))
        except (OSError, ValueError):
            pass
    return ids


def wait_new_prog(before, name_part, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        new = {i: p for i, p in progs().items() if i not in before}
        if any(name_part in p.get("name", "") for p in new.values()):
            return set(new)
        time.sleep(0.1)
    return set()


def mounted_tracefs():
    with open("/proc/mounts") as f:
        return [m for m in (line.split()[1] for line in f) if m in TRACEFS]


ALT = {}
PERF = ["perf"]


def tool_cmd(cfg, pid):
    if ":" in cfg:
        base, name = cfg.split(":", 1)
        cmd = tool_cmd(base, pid)
        return [ALT[name]] + cmd[1:] if cmd else None
    if cfg == "cpu":
        return [PROFCAP, "capture", "-a", "-q", "--seconds", "600", "-o", "/tmp/offcpu-bench.pb"]
    if cfg == "cpu-p":
        return [PROFCAP, "capture", "-p", str(pid), "-q", "--seconds", "600", "-o",
                "/tmp/offcpu-bench.pb"]
    if cfg == "offcpu":
        return [PROFCAP, "capture", "-a", "-q", "--off-cpu", "--seconds", "600", "-o",
                "/tmp/offcpu-bench.pb"]
    if cfg in ("offcpu-p", "offcpu-p-rseq"):
        return [PROFCAP, "capture", "-p", str(pid), "-q", "--off-cpu", "--seconds", "600", "-o",
                "/tmp/offcpu-bench.pb"]
    if cfg == "offcpu-0":
        return [PROFCAP, "capture", "-a", "-q", "--off-cpu", "--off-cpu-threshold", "0",
                "--seconds", "600", "-o", "/tmp/offcpu-bench.pb"]
    if cfg == "floor":
        return [FLOOR, FLOOR + ".bpf.o"]
    if cfg == "bpftrace":
        return ["bpftrace", "-e", "tracepoint:sched:sched_switch { @ = count(); }"]
    # perf at profcap's frequency with frame-pointer stacks, -p as profcap's.
    if cfg == "perf":
        return [PERF[0], "record", "--off-cpu", "-a", "-q", "-o", "/tmp/offcpu-bench.perf"]
    if cfg == "perf-p":
        return [PERF[0], "record", "-F", "99", "-g", "-p", str(pid), "-q", "-o",
                "/tmp/offcpu-bench.perf"]
    if cfg == "perf-offcpu-p":
        return [PERF[0], "record", "-F", "99", "-g", "--off-cpu", "-p", str(pid), "-q", "-o",
                "/tmp/offcpu-bench.perf"]
    return None


def reference(c, res):
    """The CPU-only configuration off-CPU configuration @c is measured
    against (the same target, the same binary), or None."""
    name, _, alt = c.partition(":")
    ref = {"perf-offcpu-p": "perf-p"}.get(name) or \
        ("cpu-p" if name.startswith("offcpu-p") else
         "cpu" if name.startswith("offcpu") else None)
    if ref and alt and f"{ref}:{alt}" in res:
        ref += ":" + alt  # an alternative binary against itself
    return ref


def one(cfg, rounds, cpu):
    """(workload seconds, CPU seconds, BPF ns per switch, switches, memlock dict,
    {program: (run ns, runs)}) of one run."""
    if os.path.exists(GO):
        os.unlink(GO)
    mounted = False
    if cfg == "bpftrace" and not mounted_tracefs():
        mounted = subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS[0]]).returncode == 0
    w = subprocess.Popen(["taskset", "-c", str(cpu), PINGPONG, "-n", str(rounds), "-g", GO],
                         stdout=subprocess.PIPE, text=True)
    pid = int(w.stdout.readline().split()[1])
    before = progs()
    tool, new, mem = None, set(), {}
    cmd = tool_cmd(cfg, pid)
    if cmd:
        env = dict(os.environ)
        if cfg.split(":")[0] == "offcpu-p-rseq":
            env["PROFCAP_OFFCPU_TASKWORK"] = "0"
        tool = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        part = {"bpftrace": "sched_switch", "perf": "on_switch", "perf-offcpu-p": "on_switch",
                "perf-p": "", "floor": "floor_switch"}.get(cfg, "profcap_")
        # profcap_switch, or profcap_switch_tw: attached after the others
        part = "profcap_switch" if cfg.startswith("offcpu") else part
        if not part:
            time.sleep(2)  # no BPF program to wait for
        else:
            new = wait_new_prog(before, part)
            time.sleep(0.5)
    if tool and part:
        # The tool's own programs: those it holds fds of, else (bpftrace keeps
        # only perf event fds) the new ones named like its programs.
        owned = owned_ids(tool.pid, "prog_id")
        now = progs()
        new = new & owned if owned else {i for i in new if part in now.get(i, {}).get("name", "")}
    base_stats = {i: (p.get("run_time_ns", 0), p.get("run_cnt", 0)) for i, p in progs().items()
                  if i in new}
    open(GO, "w").close()
    line = w.stdout.readline().split()
    w.wait()
    secs = float(line[1])
    cpu_s = float(line[5])
    after = progs()
    ns = runs = 0
    per_prog = {}
    for i in new:
        if i in after and i in base_stats:
            d_ns = after[i].get("run_time_ns", 0) - base_stats[i][0]
            d_runs = after[i].get("run_cnt", 0) - base_stats[i][1]
            ns += d_ns
            if d_runs:
                name = after[i].get("name", "") or str(i)
                per_prog[name] = (d_ns, d_runs)
            # Switches: runs of the program on sched_switch's switch-out side.
            if after[i].get("name", "") in ("profcap_switch", "profcap_switch_tw", "floor_switch",
                                            "profcap_switch_out", "on_switch") or \
                    "sched_switch" in after[i].get("name", ""):
                runs += after[i].get("run_cnt", 0) - base_stats[i][1]
    if cfg.startswith("offcpu"):
        mem = maps_memlock({"offcpu_counts0", "offcpu_counts1", "offcpu_start", "offcpu_stats",
                            "offcpu_task", "offcpu_slots", "offcpu_cur", "offcpu_work", "counts0", "counts1", "stacks0",
                            "stacks1"}, tool.pid)
    if tool:
        tool.send_signal(2)
        try:
            tool.wait(timeout=60)
        except subprocess.TimeoutExpired:
            tool.kill()
            tool.wait()
    if mounted:
        subprocess.run(["umount", TRACEFS[0]])
    return secs, cpu_s, (ns / runs if runs else 0.0), runs, mem, per_prog


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=50000)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--configs", default="", help="comma-separated subset (base is always run)")
    ap.add_argument("--adjacent", action="store_true",
                    help="also run each off-CPU configuration right next to a run of its "
                    "CPU-only reference (which first: random), and pair those: the pairs "
                    "then share the machine's state, not only the round")
    ap.add_argument("--alt", action="append", default=[],
                    help="NAME=PATH: also run the profcap configurations with binary PATH")
    ap.add_argument("--perf", default="perf",
                    help="the perf binary (one built with BPF skeletons has --off-cpu)")
    a = ap.parse_args()
    for alt in a.alt:
        name, path = alt.split("=", 1)
        ALT[name] = os.path.abspath(path)
    if os.geteuid():
        sys.exit("needs root")
    cfgs = ["base", "cpu", "cpu-p", "offcpu", "offcpu-p", "offcpu-p-rseq", "offcpu-0"]
    if a.configs:
        want = set(a.configs.split(",")) | {"base"}
        cfgs = [c for c in cfgs if c in want]
    cfgs += [f"{c}:{n}" for c in list(cfgs) if c != "base" for n in ALT]
    if not a.configs or "floor" in a.configs:
        if subprocess.run([os.path.join(REPO, "scripts", "bench", "switch_floor.sh")]).returncode:
            sys.exit("cannot build scripts/bench/switch_floor")
        cfgs.append("floor")
    if shutil.which("bpftrace") and (not a.configs or "bpftrace" in a.configs):
        cfgs.append("bpftrace")
    perf_ok = False
    PERF[0] = a.perf
    if shutil.which(a.perf):
        r = subprocess.run([a.perf, "record", "--off-cpu", "-o", "/tmp/offcpu-bench.perf", "--",
                            "true"], capture_output=True, text=True)
        perf_ok = "ignored" not in r.stderr and r.returncode == 0
    if perf_ok:
        for c in ("perf", "perf-p", "perf-offcpu-p"):
            if not a.configs or c in a.configs:
                cfgs.append(c)
    else:
        print(f"# {a.perf} record --off-cpu: unsupported by this perf (built without BPF "
              "skeletons: Debian's linux-perf, bookworm and backports alike; build one from "
              "Debian's linux source with BUILD_BPF_SKEL=1 and pass --perf PATH)")
    was_tracefs = mounted_tracefs()
    stats = {"bpf_stats": open("/proc/sys/kernel/bpf_stats_enabled").read().strip()}
    res = {c: [] for c in cfgs}
    adj = {c: [] for c in cfgs}  # --adjacent: (run of c, run of its reference beside it)
    bpfns = {c: (0.0, 0) for c in cfgs}
    mem = {}
    try:
        for r in range(a.runs + 1):
            # The last round measures BPF run time; the others the workload.
            stats_round = r == a.runs
            subprocess.run(["sysctl", "-q", f"kernel.bpf_stats_enabled={int(stats_round)}"])
            # A new order every round: no configuration always follows the
            # same one (caches, the previous tool's teardown).
            for c in random.Random(r).sample(cfgs, len(cfgs)):
                secs, cpu_s, nspr, runs, m, pp = one(c, a.rounds, a.cpu)
                if stats_round:
                    bpfns[c] = (nspr, runs)
                    # Where the ns go: runs per switch and ns per run of each program
                    # (bpf_stats' own two clock reads included in every run).
                    for name, (pns, pruns) in sorted(pp.items()):
                        print(f"#   {c} {name}: {pruns / runs if runs else 0:.2f} runs/switch, "
                              f"{pns / pruns:.0f} ns/run", flush=True)
                else:
                    res[c].append((secs, nspr, runs, cpu_s))
                mem.update(m)
                print(f"# round {r} {c}: {secs:.3f} s wall, {cpu_s:.3f} s CPU, "
                      f"{nspr:.0f} BPF ns/switch over {runs} switches",
                      flush=True)
            if a.adjacent and not stats_round:
                # Then each off-CPU configuration right beside a run of its
                # reference (which first: random), pairs in a random order.
                rnd = random.Random(1000 + r)
                pairs = [(c, reference(c, res)) for c in cfgs if reference(c, res) in res]
                rnd.shuffle(pairs)
                for c, ref in pairs:
                    beside = {}
                    for x in rnd.sample([c, ref], 2):
                        secs, cpu_s, nspr, runs, _, _ = one(x, a.rounds, a.cpu)
                        beside[x] = (secs, nspr, runs, cpu_s)
                        print(f"# round {r} {x} (beside {c}): {secs:.3f} s wall, "
                              f"{cpu_s:.3f} s CPU", flush=True)
                    adj[c].append((beside[c], beside[ref]))
    finally:
        subprocess.run(["sysctl", "-q", f"kernel.bpf_stats_enabled={stats['bpf_stats']}"])
        for m in mounted_tracefs():
            if m not in was_tracefs:
                subprocess.run(["umount", m])
    base = statistics.median(x[0] for x in res["base"])
    base_cpu = statistics.median(x[3] for x in res["base"])
    print(f"{'config':14} {'wall s':>8} {'slowdown':>9} {'CPU s':>7} {'CPU +':>7} "
          f"{'BPF ns/switch':>14} {'switches/s':>11} {'CPU s min..max':>15}")
    for c in cfgs:
        s = statistics.median(x[0] for x in res[c])
        cs = statistics.median(x[3] for x in res[c])
        ns = bpfns[c][0]
        rps = statistics.median(2 * a.rounds / x[0] for x in res[c])  # workload hops/s
        print(f"{c:14} {s:8.3f} {100 * (s / base - 1):+8.1f}% {cs:7.3f} "
              f"{100 * (cs / base_cpu - 1):+6.1f}% {ns:14.0f} {rps:11.0f} "
              f"{min(x[3] for x in res[c]):7.3f}..{max(x[3] for x in res[c]):.3f}")
    # The off-CPU profile's own cost: each off-CPU configuration against the
    # CPU profile of the same target run in the same round (pairs cancel the
    # machine's drift from round to round), wall and workload CPU; with
    # --adjacent also against the reference run right beside it.
    def paired(c, ref, xs, ys, how):
        walls = sorted(100 * (x[0] / y[0] - 1) for x, y in zip(xs, ys))
        cpus = sorted(100 * (x[3] / y[3] - 1) for x, y in zip(xs, ys))
        q = len(walls) // 4
        print(f"extra {c} over {ref}, paired {how}: wall {statistics.median(walls):+.1f}% "
              f"(quartiles {walls[q]:+.1f}..{walls[-1 - q]:+.1f}), "
              f"CPU {statistics.median(cpus):+.1f}% "
              f"(quartiles {cpus[q]:+.1f}..{cpus[-1 - q]:+.1f}), {len(walls)} pairs")

    for c in cfgs:
        ref = reference(c, res)
        if ref not in res or not res[c]:
            continue
        paired(c, ref, res[c], res[ref], "by round")
        if adj.get(c):
            paired(c, ref, [x for x, _ in adj[c]], [y for _, y in adj[c]], "side by side")
    print("memlock (bytes): " + ", ".join(f"{k} {v}" for k, v in sorted(mem.items())))


if __name__ == "__main__":
    main()
