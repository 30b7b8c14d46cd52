"""End-to-end tests of JavaScript frames of Node.js (V8), read from outside
the process by the BPF walker and named by profcap, against workloads
whose truth is known (tests/e2e/js/), under /usr/bin/node started without
flags:

- split.js, started before profcap (-p): the CPU shares of hot()
  (optimized), interp() (deoptimized again and again) and Worker.method()
  (a class method) within 5 points of the 50/30/20 the workload times by
  CPU; their script the workload's path; >= 95 % of the main thread's
  samples with JavaScript frames and a stack complete down to node::Start;
- the same run under --perf-basic-prof (the perf map names JIT frames, the
  walker the rest): the same shares;
- split.js started during a system-wide capture: named from its first
  notice on;
- waits.js with --off-cpu: the function the thread sleeps in (nap()) on
  its waits;
- every capture passes the OTLP checks (the official checker when there)."""
import os
import re
import unittest

import runtime_util
from capture_util import can_sample

OK, WHY = can_sample()
HERE = os.path.dirname(os.path.abspath(__file__))
JSDIR = os.path.join(HERE, "js")
SPLIT = os.path.join(JSDIR, "split.js")
NODE = "/usr/bin/node"
TRUTH = {"hot": 0.50, "interp": 0.30, "method": 0.20}
SHARE_TOL = 0.05
MIN_SAMPLES = 300


def samples_of(path):
    """[(pid, tid, sample type, value, frames leaf first as (function,
    frame type, file))] of a capture."""
    return runtime_util.samples_of(path, ("function", "type", "file"))


def js_name(fn):
    """A JavaScript function's own name: ours as is; a perf map's
    "JS:*hot /path/split.js:12:13" (or LazyCompile:~hot ...) -> hot."""
    m = re.match(r"^(?:[A-Za-z]+:)?[*~^+-]?([^ ]+)", fn)
    return m.group(1).rsplit(".", 1)[-1] if m else fn


class Node(runtime_util.Runtime):
    """A workload started for a test; "ready" read, killed on stop()."""

    def __init__(self, script, secs, cwd, flags=()):
        # cwd: --perf-basic-prof also writes an isolate-*-v8.log there
        super().__init__([NODE] + list(flags) + [script, str(secs)], "node %s" % script, cwd=cwd)

    def stop(self):
        super().stop()
        try:  # --perf-basic-prof's map: killed, node cannot remove it
            os.unlink("/tmp/perf-%d.map" % self.p.pid)
        except OSError:
            pass


def split_problems(samples, pid, label, ours=True):
    """What is wrong with split.js's samples of process @pid, [] if
    nothing. @ours: the functions' scripts are checked (a perf map names
    JIT frames with the script inside the name)."""
    mine, total, bad = runtime_util.judged(
        samples, lambda x: x[0] == pid and x[1] == pid and x[2] == "samples",
        MIN_SAMPLES, label, " of the main thread")
    if bad:
        return bad
    complete = sum(x[3] for x in mine if [f for f in x[4] if f[1] == "v8js"] and
                   [f for f in x[4] if f[0].startswith("node::Start(")])
    if complete < 0.95 * total:
        bad.append("%s: %d of %d samples with JavaScript frames down to node::Start" %
                   (label, complete, total))
    by = dict.fromkeys(TRUTH, 0)
    scripts = set()
    for _, _, _, v, frames in mine:
        inner = next((f for f in frames if f[1] == "v8js" and js_name(f[0]) in by), None)
        if inner:
            by[js_name(inner[0])] += v
            if ours or not inner[0].startswith(("JS:", "LazyCompile:", "Function:")):
                scripts.add(inner[2])
    bad += runtime_util.share_problems(by, TRUTH, SHARE_TOL, label, total, "functions")
    if ours and scripts != {SPLIT}:
        bad.append("%s: the functions' scripts are %r, not %s" % (label, scripts, SPLIT))
    return bad


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(os.path.exists(NODE), "needs /usr/bin/node")
class NodeTest(runtime_util.RuntimeTest):
    def node_split(self, flags, label, ours):
        self.split_run(lambda: Node(SPLIT, 30, self.dir, flags),
                          lambda out, pid: split_problems(samples_of(out), pid, label, ours),
                          "split%s.pb")

    def test_split_without_flags(self):
        """Started before profcap (-p), no flags: shares, scripts, complete
        stacks."""
        self.node_split((), "no flags", True)

    def test_split_perf_basic_prof(self):
        """--perf-basic-prof: the perf map's names win for JIT frames, the
        walker's name the rest; the same shares."""
        self.node_split(("--perf-basic-prof",), "--perf-basic-prof", False)

    def test_started_during_system_wide_capture(self):
        """A node started while a system-wide capture runs: its JavaScript
        frames from the notice of its first sample on."""
        out = os.path.join(self.dir, "sys.pb")
        p = self.system_wide(out, lambda: Node(SPLIT, 3, self.dir))
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == p.pid and x[2] == "samples",
            lambda frames: [f for f in frames if f[1] == "v8js" and js_name(f[0]) in TRUTH],
            100, 0.8, "the node was not sampled", "samples named")
        self.conformant(out)

    def test_off_cpu_js_frames(self):
        """The main thread's waits carry the function that slept (nap)."""
        p, out = self.captured(lambda: Node(os.path.join(JSDIR, "waits.js"), 20, self.dir),
                               "off.pb", ["--off-cpu", "--seconds", "2"])
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == p.pid and x[2] == "off_cpu",
            lambda frames: "nap" in [f[0] for f in frames if f[1] == "v8js"],
            0, 0.9, "no waits of the main thread", "ns in nap()")
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
