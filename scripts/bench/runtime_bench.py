#!/usr/bin/python3
"""runtime_bench.py - what profiling a managed runtime's process costs:
profcap -p against perf record -g on the same workload, side by side.

For one runtime (an entry of RUNTIMES below: node, python3.11, python3.12,
java, ruby, perl, php):

1. Slowdown. A fixed amount of the runtime's work, timed by the workload
   itself (its process CPU time, all threads, which the sampling interrupts
   are charged to on a kernel without IRQ time accounting; and wall time),
   run alone and under `profcap capture -p PID -F HZ` and
   `perf record -g -F HZ -p PID`, at 99 and 999 Hz. perf profiles the
   process started with the runtime's perf-map flag (node
   --perf-basic-prof, python -X perf, ...), and so does a second profcap
   row, against its own flagged run alone: both profilers then see the same
   workload. The profiler is attached (profcap's full sampling program
   loaded, perf's events open) before the work starts and stopped (SIGINT)
   after it ends, while the workload still lives (profcap names frames from
   the live process). Per profiler run: its CPU time and peak RSS (wait4
   rusage); for perf also `perf script` of its file (perf's output is not
   symbolized, profcap's is). Each profcap file goes through profcheck when
   it is there.
2. BPF ns per sample (kernel.bpf_stats_enabled=1 during this part only):
   run_time_ns of profcap's sampling program over the samples it kept (its
   stats map) over 1.5 s of a -p capture at 999 Hz, from 0.5 s after the
   full sampling program is loaded, of the runtime's workload, of it with
   profcap's walker for the runtime off (where the runtime has such a
   switch; on - off is paired per round) and of a native-only process
   (sha256sum /dev/zero). The time includes the program's runs on ticks of
   other tasks, dropped early by the PID filter.
Every round runs all configurations in a new random order (interleaved, so
machine noise hits all alike); medians over --rounds, ratios to the run
alone of the same round (paired), and the spread of the runs alone.

A runtime is an entry of RUNTIMES: its command (argv; {src} is the workload
file, written to a temporary directory with the entry's suffix, {work} the
amount of work), the workload source, the perf-map flag (inserted after
argv[0]), the environment that turns profcap's walker off, and the default
work. The workload's protocol: print a line "ready" once warmed up, read a
line from stdin, do {work} units of work, print "done WALL CPU" (seconds, of
the work only; CPU = the process's CPU time), read a line, exit.

Usage (root): scripts/bench/runtime_bench.py RUNTIME [--rounds 5] [--work N]
                [--bin PATH] [--hz 99,999] [--no-bpf-ns] [--no-slowdown]
                [--walker-off] [--out FILE.md] [--json FILE]
  RUNTIME       an entry of RUNTIMES (--list shows them)
  --bin         the runtime's executable instead of the entry's
  --walker-off  also profcap with the walker off in the slowdown part
"""
import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROFCAP = os.path.join(REPO, "build", "profcap")
PROFCHECK = os.environ.get("PROFCHECK") or os.path.join(
    os.path.dirname(REPO), "shared", "tools", "profcheck", "profcheck")

NODE_WORK = r"""'use strict';
// Three functions: hot() optimized, interp() deoptimized again and again by
// values of changing types, Worker.method() a class method, 5 frames deep.
function hot(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + i * i) % 1000003;
  return s;
}
function interp(n, v) {
  let s = v;
  for (let i = 0; i < n; i++) {
    s = s + (i & 1 ? v : i);
    if (typeof s === 'string') s = s.length;
  }
  return s;
}
class Worker {
  constructor() { this.acc = 0; }
  method(n) {
    for (let i = 0; i < n; i++) this.acc = (this.acc * 31 + i) % 1000003;
    return this.acc;
  }
}
const kinds = [1, 1.5, 'x', {}, [1]];
function unit(w, d, k) {
  if (d > 0) return unit(w, d - 1, k);
  return hot(250000) + (Number(interp(30000, kinds[k % kinds.length])) || 0) + w.method(100000);
}
const w = new Worker();
let x = 0;
for (let k = 0; k < 40; k++) x += unit(w, 5, k);
const lines = [];
let wake = null;
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  for (const l of d.split('\n').slice(0, -1)) lines.push(l);
  if (wake && lines.length) { const f = wake; wake = null; f(); }
});
function line(f) { if (lines.length) f(); else wake = f; }
process.stdout.write('ready\n');
line(() => {
  lines.shift();
  const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
  for (let k = 0, n = Number(process.argv[2]); k < n; k++) x += unit(w, 5, k);
  const c = process.cpuUsage(c0), t = Number(process.hrtime.bigint() - t0) / 1e9;
  process.stdout.write('done ' + t + ' ' + (c.user + c.system) / 1e6 + ' ' + (x & 1) + '\n');
  line(() => process.exit(0));
});
"""

PYTHON_WORK = r"""import sys, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def nest(d, n):
    return fib(n) if d == 0 else nest(d - 1, n)
for _ in range(20):
    nest(5, 15)
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
t0, c0 = time.time(), time.process_time()
for _ in range(int(sys.argv[1])):
    nest(5, 20)
sys.stdout.write("done %f %f\n" % (time.time() - t0, time.process_time() - c0))
sys.stdout.flush()
sys.stdin.readline()
"""

JAVA_WORK = r"""import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;

// Fixed work in three methods: a hot static one, a virtual call, a small
// callee the JIT inlines; 5 frames deep.
public class Work {
    interface Shape { long step(long s, int i); }
    static final class Sq implements Shape { public long step(long s, int i) { return (s + (long) i * i) % 1000003; } }
    static final class Mul implements Shape { public long step(long s, int i) { return (s * 31 + i) % 1000003; } }
    static long hot(int n) { long s = 0; for (int i = 0; i < n; i++) s = (s + (long) i * i) % 1000003; return s; }
    static long virt(Shape sh, int n) { long s = 0; for (int i = 0; i < n; i++) s = sh.step(s, i); return s; }
    static long unit(Shape[] sh, int d, int k) {
        if (d > 0) return unit(sh, d - 1, k);
        return hot(250000) + virt(sh[k & 1], 150000);
    }
    static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
    public static void main(String[] a) throws Exception {
        Shape[] sh = { new Sq(), new Mul() };
        long x = 0;
        for (int k = 0; k < 200; k++) x += unit(sh, 5, k);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        System.out.println("ready");
        System.out.flush();
        in.readLine();
        long t0 = System.nanoTime(), c0 = cpu();
        for (int k = 0, n = Integer.parseInt(a[0]); k < n; k++) x += unit(sh, 5, k);
        System.out.println("done " + (System.nanoTime() - t0) / 1e9 + " " + (cpu() - c0) / 1e9 + " " + (x & 1));
        System.out.flush();
        in.readLine();
    }
}
"""

RUBY_WORK = r"""def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)
def nest(d, n) = d == 0 ? fib(n) : nest(d - 1, n)
20.times { nest(5, 15) }
$stdout.write("ready\n"); $stdout.flush
$stdin.gets
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
c0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
ARGV[0].to_i.times { nest(5, 20) }
$stdout.write("done %f %f\n" % [Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0,
                                Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - c0])
$stdout.flush
$stdin.gets
"""

PERL_WORK = r"""use strict;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC CLOCK_PROCESS_CPUTIME_ID);
$| = 1;
sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }
sub nest { my ($d, $n) = @_; return $d == 0 ? fib($n) : nest($d - 1, $n); }
nest(5, 15) for 1 .. 20;
print "ready\n";
<STDIN>;
my ($t0, $c0) = (clock_gettime(CLOCK_MONOTONIC), clock_gettime(CLOCK_PROCESS_CPUTIME_ID));
nest(5, 20) for 1 .. $ARGV[0];
printf "done %f %f\n", clock_gettime(CLOCK_MONOTONIC) - $t0, clock_gettime(CLOCK_PROCESS_CPUTIME_ID) - $c0;
<STDIN>;
"""

PHP_WORK = r"""<?php
function fib($n) { return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }
function nest($d, $n) { return $d == 0 ? fib($n) : nest($d - 1, $n); }
function cpu() { $u = getrusage(); return $u["ru_utime.tv_sec"] + $u["ru_stime.tv_sec"] + ($u["ru_utime.tv_usec"] + $u["ru_stime.tv_usec"]) / 1e6; }
for ($i = 0; $i < 20; $i++) nest(5, 15);
echo "ready\n";
fgets(STDIN);
$t0 = hrtime(true); $c0 = cpu();
for ($i = 0, $n = (int)$argv[1]; $i < $n; $i++) nest(5, 20);
printf("done %f %f\n", (hrtime(true) - $t0) / 1e9, cpu() - $c0);
fgets(STDIN);
"""

PYENV = "/root/.pyenv/versions"

# name: argv, (suffix, source), perf-map flag (None: perf sees the
# interpreter's own frames only), the environment that turns profcap's walker
# for the runtime off, default work (about 2.5 s of CPU on the 2-CPU test VM)
RUNTIMES = {
    "node": dict(argv=["/usr/bin/node", "{src}", "{work}"], src=(".js", NODE_WORK),
                 perf_flag=["--perf-basic-prof"], off_env={"PROFCAP_V8": "0"}, work=450),
    "python3.11": dict(argv=["/usr/bin/python3.11", "{src}", "{work}"], src=(".py", PYTHON_WORK),
                       perf_flag=None, off_env={"PROFCAP_PYTHON": "0"}, work=4500),
    "python3.12": dict(argv=[PYENV + "/3.12.1/bin/python3.12", "{src}", "{work}"],
                       src=(".py", PYTHON_WORK), perf_flag=["-X", "perf"],
                       off_env={"PROFCAP_PYTHON": "0"}, work=4500),
    # Single-file source launch; process CPU time in 10 ms ticks here.
    "java": dict(argv=["/usr/bin/java", "{src}", "{work}"], src=(".java", JAVA_WORK),
                 perf_flag=["-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
                            "-XX:+PreserveFramePointer"], off_env={"PROFCAP_JVM": "0"}, work=1500),
    "ruby": dict(argv=["/usr/bin/ruby", "{src}", "{work}"], src=(".rb", RUBY_WORK),
                 perf_flag=None, off_env={"PROFCAP_RUBY": "0"}, work=7000),
    "perl": dict(argv=["/usr/bin/perl", "{src}", "{work}"], src=(".pl", PERL_WORK),
                 perf_flag=None, off_env={"PROFCAP_PERL": "0"}, work=1400),
    "php": dict(argv=["/usr/bin/php", "{src}", "{work}"], src=(".php", PHP_WORK),
                perf_flag=None, off_env={"PROFCAP_PHP": "0"}, work=11000),
}


def bpftool(*args):
    r = subprocess.run(["bpftool", "--json"] + list(args), capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout)


def held(pid):
    """IDs of the BPF programs and maps process @pid holds (its fdinfo)."""
    progs, maps = set(), set()
    base = "/proc/%d/fdinfo" % pid
    try:
        fds = os.listdir(base)
    except OSError:
        return progs, maps
    for fd in fds:
        try:
            with open(os.path.join(base, fd)) as f:
                for ln in f:
                    key, _, val = ln.partition(":")
                    if key == "prog_id":
                        progs.add(int(val))
                    elif key == "map_id":
                        maps.add(int(val))
        except (OSError, ValueError):
            pass
    return progs, maps


def sample_progs(pid):
    """profcap @pid's full sampling programs (bpftool records)."""
    ids, _ = held(pid)
    if not ids:
        return []
    return [p for p in bpftool("prog", "show") if p["id"] in ids and
            p.get("name", "").startswith("profcap_sample")]


def kept_samples(map_id):
    """STAT_SAMPLES (entry 0 of the per-CPU stats map), summed over CPUs."""
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
    progs = sample_progs(pid)
    _, mids = held(pid)
    stats = [m for m in bpftool("map", "show") if m["id"] in mids and m.get("name") == "stats"]
    if not progs or not stats:
        return None
    return sum(p.get("run_time_ns", 0) for p in progs), kept_samples(stats[0]["id"])


def has_perf_events(pid):
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[perf_event]":
                return True
        except OSError:
            pass
    return False


def wait_attached(prof, kind, limit=20.0):
    """Until @prof (profcap or perf) samples in its steady state."""
    end = time.time() + limit
    while time.time() < end and prof.poll() is None:
        if kind == "profcap" and sample_progs(prof.pid):
            break
        if kind == "perf" and has_perf_events(prof.pid):
            break
        time.sleep(0.1)
    time.sleep(0.5)  # profcap: the quick start's hand-over; perf: all threads' events


def reap(p):
    """wait4 @p: (CPU s, peak RSS MB, exit code)."""
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, p.returncode


class Workload:
    """A runtime's workload process, speaking the ready/go/done protocol."""

    def __init__(self, rt, src, work, flagged, binary=None):
        argv = [a.format(src=src, work=work) for a in rt["argv"]]
        if binary:
            argv[0] = binary
        if flagged:
            argv[1:1] = rt["perf_flag"]
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, cwd=os.path.dirname(src))
        got = self.p.stdout.readline().split()
        if got[:1] != ["ready"]:
            self.stop()
            raise RuntimeError("workload %s: no ready line (%r)" % (argv, got))
        self.pid = self.p.pid

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def done(self):
        """(wall s, CPU s) the workload measured."""
        got = self.p.stdout.readline().split()
        if got[:1] != ["done"]:
            raise RuntimeError("workload: no done line (%r)" % got)
        return float(got[1]), float(got[2])

    def stop(self):
        try:
            self.p.stdin.write("exit\n")
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def profcap_cmd(pid, hz, out):
    return [PROFCAP, "capture", "-p", str(pid), "-F", str(hz), "--seconds", "600", "-o", out]


def profcheck(path):
    """True if profcheck accepts @path, None if it is not there."""
    if not os.access(PROFCHECK, os.X_OK):
        return None
    r = subprocess.run([PROFCHECK, "-check-dupes", "-check-orphans", path],
                       capture_output=True, text=True)
    return r.returncode == 0


def slowdown_run(rt, a, tmp, src, cfg):
    """One run of configuration @cfg = (profiler, Hz, flagged, walker off)."""
    prof_kind, hz, flagged, off = cfg
    w = Workload(rt, src, a.work, flagged, a.bin)
    res = {"cfg": list(cfg)}
    prof = None
    t0 = time.time()
    try:
        if prof_kind == "profcap":
            env = dict(os.environ, **rt["off_env"]) if off else None
            out = os.path.join(tmp, "p.pb")
            prof = subprocess.Popen(profcap_cmd(w.pid, hz, out), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env)
        elif prof_kind == "perf":
            out = os.path.join(tmp, "perf.data")
            prof = subprocess.Popen(["perf", "record", "-q", "-g", "-F", str(hz), "-p",
                                     str(w.pid), "-o", out], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        if prof:
            wait_attached(prof, prof_kind)
        w.go()
        res["wall"], res["cpu"] = w.done()
        if prof:
            prof.send_signal(signal.SIGINT)
            res["prof_cpu"], res["prof_rss"], res["prof_rc"] = reap(prof)
            res["prof_wall"] = time.time() - t0
            prof = None
    finally:
        if prof:
            prof.kill()
            reap(prof)
        w.stop()
    try:
        if prof_kind == "profcap":
            res["check"] = profcheck(out)
        elif prof_kind == "perf":
            s = subprocess.Popen(["perf", "script", "-i", out], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            res["script_cpu"], res["script_rss"], _ = reap(s)
    finally:
        if flagged:
            try:
                os.unlink("/tmp/perf-%d.map" % w.pid)
            except OSError:
                pass
    return res


def bpf_ns_run(rt, a, tmp, src, config):
    """ns of profcap's sampling program per kept sample, -F 999, for @config."""
    w = None
    if config == "native":
        proc = subprocess.Popen(["sha256sum", "/dev/zero"], stdout=subprocess.DEVNULL)
        pid = proc.pid
    else:
        w = Workload(rt, src, 1000000, False, a.bin)
        w.go()
        pid = w.pid
    env = dict(os.environ, **rt["off_env"]) if config == "off" else None
    cap = subprocess.Popen(profcap_cmd(pid, 999, os.path.join(tmp, "b.pb")),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_attached(cap, "profcap")
        t0 = program_time(cap.pid)
        time.sleep(1.5)
        t1 = program_time(cap.pid)
    finally:
        cap.send_signal(signal.SIGINT)
        reap(cap)
        if w:
            w.p.kill()
            w.p.wait()
        else:
            proc.kill()
            proc.wait()
    if not t0 or not t1 or t1[1] <= t0[1]:
        return None
    return (t1[0] - t0[0]) / float(t1[1] - t0[1])


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    """(min, max, coefficient of variation %) of @xs."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return float("nan"), float("nan"), float("nan")
    return min(xs), max(xs), 100.0 * statistics.stdev(xs) / statistics.mean(xs)


def bpf_ns_part(rt, a, tmp, src):
    configs = ["runtime", "native"] + (["off"] if rt.get("off_env") else [])
    got = {c: [] for c in configs}
    paired = {"runtime - native": [], "runtime - off": []}
    path = "/proc/sys/kernel/bpf_stats_enabled"
    with open(path) as f:
        old = f.read().strip()
    try:
        with open(path, "w") as f:
            f.write("1")
        for r in range(a.rounds):
            this = {}
            for c in random.sample(configs, len(configs)):
                this[c] = bpf_ns_run(rt, a, tmp, src, c)
                got[c].append(this[c])
            for k in paired:
                x, y = k.split(" - ")
                if this.get(x) is not None and this.get(y) is not None:
                    paired[k].append(this[x] - this[y])
            print("bpf ns round %d: %s" % (r, {k: v and round(v) for k, v in this.items()}),
                  flush=True)
    finally:
        with open(path, "w") as f:
            f.write(old)
    names = {"runtime": a.runtime, "native": "native (sha256sum /dev/zero)",
             "off": "%s, walker off (%s)" % (a.runtime, " ".join(
                 "%s=%s" % kv for kv in (rt.get("off_env") or {}).items()))}
    lines = ["## BPF ns per kept sample (profcap -p, -F 999, medians of %d rounds)\n" % a.rounds,
             "| process | ns per sample | rounds |", "|---|---|---|"]
    for c in configs:
        lines.append("| %s | %.0f | %s |" % (names[c], med(got[c]), ", ".join(
            "-" if x is None else "%.0f" % x for x in got[c])))
    for k, xs in paired.items():
        if xs:
            lines.append("| %s (paired) | %.0f | %s |" % (
                k.replace("runtime", a.runtime).replace("off", "walker off"), med(xs),
                ", ".join("%.0f" % x for x in xs)))
    return lines, {"bpf_ns": got, "paired": paired}


def slowdown_configs(rt, hzs, walker_off):
    """(profiler, Hz, flagged, walker off) of every slowdown run of a round."""
    flags = [False] + ([True] if rt.get("perf_flag") else [])
    cfgs = [("none", 0, f, False) for f in flags]
    for hz in hzs:
        cfgs.append(("profcap", hz, False, False))
        if walker_off and rt.get("off_env"):
            cfgs.append(("profcap", hz, False, True))
        cfgs.append(("perf", hz, flags[-1], False))
        if flags[-1]:
            cfgs.append(("profcap", hz, True, False))
    return cfgs


def cfg_name(a, rt, cfg):
    prof, _, flagged, off = cfg
    what = {"none": "alone", "profcap": "profcap -p", "perf": "perf record -g -p"}[prof]
    if off:
        what += ", walker off"
    if flagged:
        what += ", flagged"
    return what


def slowdown_part(rt, a, tmp, src):
    cfgs = slowdown_configs(rt, a.hz, a.walker_off)
    runs = {c: [] for c in cfgs}
    for r in range(a.rounds):
        for c in random.sample(cfgs, len(cfgs)):
            runs[c].append(slowdown_run(rt, a, tmp, src, c))
        base = runs[("none", 0, False, False)][-1]
        print("slowdown round %d: alone %.3f s CPU, %.3f s wall" % (r, base["cpu"],
                                                                 base["wall"]), flush=True)
    lines = ["## Workload slowdown (medians of %d rounds; / alone: the paired per-round ratio "
             "to the run alone with the same flags)\n" % a.rounds,
             "| configuration | Hz | work CPU s | CPU / alone | work wall s | wall / alone "
             "| profiler wall s | profiler CPU s | profiler peak RSS MB | perf script CPU s, RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    checks = []
    for c in cfgs:
        rs = runs[c]
        base = runs[("none", 0, c[2], False)]
        cpu_r = [x["cpu"] / b["cpu"] for x, b in zip(rs, base)]
        wall_r = [x["wall"] / b["wall"] for x, b in zip(rs, base)]
        prof = "-"
        if c[0] != "none":
            prof = "%.2f | %.3f | %.1f (max %.1f)" % (med([x["prof_wall"] for x in rs]),
                                                      med([x["prof_cpu"] for x in rs]),
                                               med([x["prof_rss"] for x in rs]),
                                               max(x["prof_rss"] for x in rs))
        else:
            prof = "- | - | -"
        script = "-"
        if c[0] == "perf":
            script = "%.3f, %.1f" % (med([x["script_cpu"] for x in rs]),
                                     med([x["script_rss"] for x in rs]))
        lines.append("| %s | %s | %.3f | %.3f | %.3f | %.3f | %s | %s |" % (
            cfg_name(a, rt, c), c[1] or "-", med([x["cpu"] for x in rs]), med(cpu_r),
            med([x["wall"] for x in rs]), med(wall_r), prof, script))
        checks += [x["check"] for x in rs if "check" in x]
    lines.append("")
    for f in [False] + ([True] if rt.get("perf_flag") and a.rounds > 1 else []):
        if a.rounds < 2:
            break
        lo, hi, cv = spread([x["cpu"] for x in runs[("none", 0, f, False)]])
        wlo, whi, wcv = spread([x["wall"] for x in runs[("none", 0, f, False)]])
        lines.append("Noise, the runs alone%s: CPU %.3f-%.3f s (CV %.1f %%), wall %.3f-%.3f s "
                     "(CV %.1f %%)." % (", flagged" if f else "",
                                         lo, hi, cv, wlo, whi, wcv))
    if rt.get("perf_flag"):
        plain, flagged = runs[("none", 0, False, False)], runs[("none", 0, True, False)]
        lines.append("The perf-map flag itself (alone, flagged over alone, paired): CPU x%.3f, "
                     "wall x%.3f." % (med([f["cpu"] / b["cpu"] for f, b in zip(flagged, plain)]),
                                      med([f["wall"] / b["wall"] for f, b in zip(flagged, plain)])))
    bad = [r for c in cfgs if c[0] == "profcap" for r in runs[c] if r.get("prof_rc")]
    if bad:
        lines.append("profcap failed (exit code not 0) in %d runs." % len(bad))
    if any(x is not None for x in checks):
        lines.append("profcheck -check-dupes -check-orphans: %d of %d profcap files accepted." % (
            sum(1 for x in checks if x), len([x for x in checks if x is not None])))
    else:
        lines.append("profcheck: not found (%s), profcap files not checked." % PROFCHECK)
    return lines, {"runs": [dict(r) for c in cfgs for r in runs[c]]}


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runtime", nargs="?")
    ap.add_argument("--list", action="store_true", help="list the runtimes")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", type=int, help="units of the fixed work (entry's default)")
    ap.add_argument("--bin", help="the runtime's executable instead of the entry's")
    ap.add_argument("--hz", default="99,999", help="sample rates of the slowdown part")
    ap.add_argument("--walker-off", action="store_true")
    ap.add_argument("--no-bpf-ns", action="store_true")
    ap.add_argument("--no-slowdown", action="store_true")
    ap.add_argument("--out", help="append the result as Markdown to this file")
    ap.add_argument("--json", help="write every run's figures there")
    a = ap.parse_args()
    if a.list or not a.runtime:
        for k, v in RUNTIMES.items():
            print("%-12s %s  perf flag: %s" % (k, " ".join(v["argv"]),
                                               " ".join(v["perf_flag"] or ["-"])))
        return
    if a.runtime not in RUNTIMES:
        sys.exit("unknown runtime %s (--list)" % a.runtime)
    if os.geteuid():
        sys.exit("needs root")
    for tool in ("bpftool", "perf"):
        if not shutil.which(tool):
            sys.exit("%s not found (Debian: apt-get install %s)" % (
                tool, {"bpftool": "bpftool", "perf": "linux-perf"}[tool]))
    rt = RUNTIMES[a.runtime]
    a.work = a.work or rt["work"]
    a.hz = [int(x) for x in a.hz.split(",")]
    tmp = tempfile.mkdtemp(prefix="runtime_bench.")
    src = os.path.join(tmp, "work" + rt["src"][0])
    with open(src, "w") as f:
        f.write(rt["src"][1])
    exe = a.bin or rt["argv"][0]
    ver = subprocess.run([exe, "--version"], capture_output=True, text=True)
    head = ["# runtime_bench: %s\n" % a.runtime,
            "`scripts/bench/runtime_bench.py %s` on %s (%s, %d CPUs), %s UTC" % (
                " ".join(sys.argv[1:]), os.uname().nodename, os.uname().release,
                os.cpu_count(), time.strftime("%Y-%m-%d %H:%M", time.gmtime())),
            "",
            "Runtime: `%s` (%s); work: %d units; load average before: %s" % (
                exe, (ver.stdout or ver.stderr).strip().splitlines()[0], a.work, loadavg()),
            "",
            "Flagged: started with `%s` (its perf-map flag), for perf and a profcap row beside "
            "it." % " ".join(rt["perf_flag"]) if rt.get("perf_flag") else
            "No perf-map flag: perf sees the runtime's own native frames only.",
            ""]
    body, dump = [], {"runtime": a.runtime, "argv": sys.argv}
    try:
        if not a.no_slowdown:
            lines, d = slowdown_part(rt, a, tmp, src)
            body += lines + [""]
            dump.update(d)
        if not a.no_bpf_ns:
            lines, d = bpf_ns_part(rt, a, tmp, src)
            body += lines + [""]
            dump.update(d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    body.append("Load average after: %s" % loadavg())
    text = "\n".join(head + body) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write(text + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dump, f, indent=1)


if __name__ == "__main__":
    main()
