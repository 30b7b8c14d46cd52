"""End-to-end tests of Ruby frames of CRuby (Debian's ruby3.1), read from
outside the process by the BPF walker and named by profcap, against
workloads whose truth is known (tests/e2e/ruby/), started without flags:

- split.rb, started before profcap (-p): the CPU shares of hot(), warm()
  and Worker#crunch (a class's method) within 5 points of the 50/30/20 the
  workload times by CPU; their file the workload's path, their lines
  inside each method's body and their first line its def; >= 95 % of the
  main thread's samples with Ruby frames down to the script's <main>; the C
  method Process.clock_gettime named (clock_gettime) under cpu_ms;
- split.rb started during a system-wide capture: named from its first
  notice on;
- threads.rb: each of two threads with its own frames (worker_loop);
- waits.rb with --off-cpu: the method the thread sleeps in (nap) on its
  waits;
- every capture passes the OTLP checks (the official checker when there).

Skipped (counted) where no ruby is installed (.ci/run installs it)."""
import os
import shutil
import unittest

import runtime_util
from capture_util import can_sample

OK, WHY = can_sample()
HERE = os.path.dirname(os.path.abspath(__file__))
RBDIR = os.path.join(HERE, "ruby")
SPLIT = os.path.join(RBDIR, "split.rb")
WAITS = os.path.join(RBDIR, "waits.rb")
RUBY = shutil.which("ruby") or "/usr/bin/ruby"
TRUTH = {"hot": 0.50, "warm": 0.30, "crunch": 0.20}
SHARE_TOL = 0.05
MIN_SAMPLES = 300


def samples_of(path):
    """[(pid, tid, sample type, value, frames leaf first as (function,
    frame type, file, line, start line))] of a capture."""
    return runtime_util.samples_of(path, ("function", "type", "file", "line", "start"))


def method_lines(path):
    """{method: (def line, end line)} of the workload's methods."""
    with open(path) as f:
        text = f.read().split("\n")
    spans = {}
    for i, t in enumerate(text):
        st = t.lstrip()
        if not st.startswith("def "):
            continue
        name = st[4:].split("(")[0].strip()
        indent = t[:len(t) - len(st)]
        end = next(j for j in range(i + 1, len(text)) if text[j] == indent + "end")
        spans[name] = (i + 1, end + 1)
    return spans


def Ruby(script, secs):
    """A workload started for a test; "ready" read, killed on stop()."""
    return runtime_util.Runtime([RUBY, script, str(secs)], "ruby %s" % script)


def split_problems(samples, pid, label):
    """What is wrong with split.rb's samples of process @pid, [] if
    nothing."""
    mine, total, bad = runtime_util.judged(
        samples, lambda x: x[0] == pid and x[1] == pid and x[2] == "samples",
        MIN_SAMPLES, label, " of the main thread")
    if bad:
        return bad
    spans = method_lines(SPLIT)
    complete = 0
    for _, _, _, v, frames in mine:
        rb = [f for f in frames if f[1] == "ruby"]
        if rb and rb[-1][0] == "<main>" and rb[-1][2] == SPLIT:
            complete += v
    if complete < 0.95 * total:
        bad.append("%s: %d of %d samples with Ruby frames down to <main>" %
                   (label, complete, total))
    by = dict.fromkeys(TRUTH, 0)
    files, wrong_lines = set(), []
    for _, _, _, v, frames in mine:
        inner = next((f for f in frames if f[1] == "ruby" and f[0] in by), None)
        if not inner:
            continue
        by[inner[0]] += v
        files.add(inner[2])
        first, last = spans[inner[0]]
        if inner[4] != first or not first < inner[3] < last:
            wrong_lines.append((inner[0], inner[3], inner[4]))
    bad += runtime_util.share_problems(by, TRUTH, SHARE_TOL, label, total, "methods")
    if files != {SPLIT}:
        bad.append("%s: the methods' files are %r, not %s" % (label, files, SPLIT))
    # a C method named, under the Ruby method that called it
    called = sum(x[3] for x in mine
                 if ("clock_gettime", "cpu_ms") in
                 zip([f[0] for f in x[4] if f[1] == "ruby"],
                     [f[0] for f in x[4] if f[1] == "ruby"][1:]))
    if not called:
        bad.append("%s: no sample with the C method clock_gettime under cpu_ms" % label)
    if wrong_lines:
        bad.append("%s: lines outside their method (method, line, first line): %r" %
                   (label, sorted(set(wrong_lines))[:10]))
    return bad


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(os.path.exists(RUBY), "needs ruby (Debian's ruby3.1)")
class RubyTest(runtime_util.RuntimeTest):
    def test_split_without_flags(self):
        """Started before profcap (-p), no flags: shares, files, lines,
        complete stacks."""
        self.split_run(lambda: Ruby(SPLIT, 30),
                       lambda out, pid: split_problems(samples_of(out), pid, "no flags"),
                       "split%s.pb")

    def test_started_during_system_wide_capture(self):
        """A ruby started while a system-wide capture runs: its Ruby frames
        from the notice of its first sample on."""
        out = os.path.join(self.dir, "sys.pb")
        p = self.system_wide(out, lambda: Ruby(SPLIT, 3))
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == p.pid and x[2] == "samples",
            lambda frames: [f for f in frames if f[1] == "ruby" and f[0] in TRUTH],
            100, 0.8, "the ruby was not sampled", "samples named")
        self.conformant(out)

    def test_threads(self):
        """Threads other than the main one: each found in the VM's list of
        threads, its own frames (worker_loop), not the main thread's."""
        p, out = self.captured(lambda: Ruby(os.path.join(RBDIR, "threads.rb"), 20),
                               "threads.pb", ["--seconds", "3"])
        by = {}
        for pid, tid, stype, v, frames in samples_of(out):
            if pid != p.pid or tid == p.pid or stype != "samples":
                continue
            rb = [f[0] for f in frames if f[1] == "ruby"]
            t = by.setdefault(tid, [0, 0])
            t[0] += v
            if "worker_loop" in rb and "main_wait" not in rb:
                t[1] += v
        busy = {tid: t for tid, t in by.items() if t[0] >= 50}
        self.assertEqual(len(busy), 2, "threads sampled: %r" % by)
        for tid, (total, named) in busy.items():
            self.assertGreaterEqual(named, 0.9 * total,
                                    "thread %d: %d of %d samples in worker_loop" %
                                    (tid, named, total))
        self.conformant(out)

    def test_off_cpu_ruby_frames(self):
        """The main thread's waits carry the method that slept (nap)."""
        p, out = self.captured(lambda: Ruby(WAITS, 20), "off.pb",
                               ["--off-cpu", "--seconds", "2"])
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == p.pid and x[2] == "off_cpu",
            lambda frames: "nap" in [f[0] for f in frames if f[1] == "ruby"],
            0, 0.9, "no waits of the main thread", "ns in nap")
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
