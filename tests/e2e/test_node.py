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
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, _pb2, can_sample, check_conformance

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
    pb = _pb2()
    data = pb.ProfilesData()
    with open(path, "rb") as f:
        data.ParseFromString(f.read())
    d = data.dictionary
    s = d.string_table
    out = []
    for rp in data.resource_profiles:
        rattrs = {kv.key: kv.value for kv in rp.resource.attributes}
        pid = rattrs["process.pid"].int_value if "process.pid" in rattrs else 0
        for sp in rp.scope_profiles:
            for prof in sp.profiles:
                stype = s[prof.sample_type.type_strindex]
                for smp in prof.samples:
                    tid = 0
                    for i in smp.attribute_indices:
                        a = d.attribute_table[i]
                        if s[a.key_strindex] == "thread.id":
                            tid = a.value.int_value
                    frames = []
                    for li in d.stack_table[smp.stack_index].location_indices:
                        loc = d.location_table[li]
                        fn, path = "?", ""
                        if loc.lines:
                            f = d.function_table[loc.lines[-1].function_index]
                            fn, path = s[f.name_strindex], s[f.filename_strindex]
                        ftype = ""
                        for ai in loc.attribute_indices:
                            a = d.attribute_table[ai]
                            if s[a.key_strindex] == "profile.frame.type":
                                ftype = a.value.string_value
                        frames.append((fn, ftype, path))
                    out.append((pid, tid, stype, sum(smp.values), frames))
    return out


def js_name(fn):
    """A JavaScript function's own name: ours as is; a perf map's
    "JS:*hot /path/split.js:12:13" (or LazyCompile:~hot ...) -> hot."""
    m = re.match(r"^(?:[A-Za-z]+:)?[*~^+-]?([^ ]+)", fn)
    return m.group(1).rsplit(".", 1)[-1] if m else fn


class Node:
    """A workload started for a test; "ready" read, killed on exit."""

    def __init__(self, script, secs, cwd, flags=()):
        # cwd: --perf-basic-prof also writes an isolate-*-v8.log there
        self.p = subprocess.Popen([NODE] + list(flags) + [script, str(secs)], cwd=cwd,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("ready"):
            self.stop()
            raise RuntimeError("node %s did not start: %r" % (script, line))
        self.pid = self.p.pid

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        try:  # --perf-basic-prof's map: killed, node cannot remove it
            os.unlink("/tmp/perf-%d.map" % self.p.pid)
        except OSError:
            pass


def capture(out, args, timeout=90):
    return subprocess.run([PROFCAP, "capture", "-o", out] + args, capture_output=True,
                          text=True, timeout=timeout)


def split_problems(samples, pid, label, ours=True):
    """What is wrong with split.js's samples of process @pid, [] if
    nothing. @ours: the functions' scripts are checked (a perf map names
    JIT frames with the script inside the name)."""
    mine = [x for x in samples if x[0] == pid and x[1] == pid and x[2] == "samples"]
    total = sum(x[3] for x in mine)
    if total < MIN_SAMPLES:
        return ["%s: %d samples of the main thread, too few to judge" % (label, total)]
    bad = []
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
    n = sum(by.values())
    for k, want in TRUTH.items():
        got = by[k] / float(n) if n else 0.0
        if abs(got - want) > SHARE_TOL:
            bad.append("%s: %s has %.1f %% of the CPU, the truth is %.0f %%" %
                       (label, k, 100 * got, 100 * want))
    if n < 0.9 * total:
        bad.append("%s: %d of %d samples in the three functions" % (label, n, total))
    if ours and scripts != {SPLIT}:
        bad.append("%s: the functions' scripts are %r, not %s" % (label, scripts, SPLIT))
    return bad


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(os.path.exists(NODE), "needs /usr/bin/node")
class NodeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def conformant(self, out):
        ok, why = check_conformance(out)
        self.assertTrue(ok, why[-3000:])

    def split_run(self, flags, label, ours):
        for secs in (3, 8):
            p = Node(SPLIT, 30, self.dir, flags)
            try:
                out = os.path.join(self.dir, "split%s.pb" % secs)
                r = capture(out, ["-p", str(p.pid), "--seconds", str(secs), "-F", "499"])
                self.assertEqual(r.returncode, 0, r.stderr)
            finally:
                p.stop()
            bad = split_problems(samples_of(out), p.pid, label, ours)
            if not bad or "too few" not in bad[0]:
                break
        self.maxDiff = None
        self.assertEqual(bad, [])
        self.conformant(out)

    def test_split_without_flags(self):
        """Started before profcap (-p), no flags: shares, scripts, complete
        stacks."""
        self.split_run((), "no flags", True)

    def test_split_perf_basic_prof(self):
        """--perf-basic-prof: the perf map's names win for JIT frames, the
        walker's name the rest; the same shares."""
        self.split_run(("--perf-basic-prof",), "--perf-basic-prof", False)

    def test_started_during_system_wide_capture(self):
        """A node started while a system-wide capture runs: its JavaScript
        frames from the notice of its first sample on."""
        out = os.path.join(self.dir, "sys.pb")
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", "7", "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(2)
            p = Node(SPLIT, 3, self.dir)
            p.p.wait(timeout=60)
            _, err = cap.communicate(timeout=90)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            if cap.poll() is None:
                cap.kill()
                cap.wait()
        total = named = 0
        for pid, tid, stype, v, frames in samples_of(out):
            if pid != p.pid or tid != p.pid or stype != "samples":
                continue
            total += v
            if [f for f in frames if f[1] == "v8js" and js_name(f[0]) in TRUTH]:
                named += v
        self.assertGreater(total, 100, "the node was not sampled")
        self.assertGreaterEqual(named, 0.8 * total, "%d of %d samples named" % (named, total))
        self.conformant(out)

    def test_off_cpu_js_frames(self):
        """The main thread's waits carry the function that slept (nap)."""
        p = Node(os.path.join(JSDIR, "waits.js"), 20, self.dir)
        try:
            out = os.path.join(self.dir, "off.pb")
            r = capture(out, ["--off-cpu", "-p", str(p.pid), "--seconds", "2"])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            p.stop()
        total = napped = 0
        for pid, tid, stype, v, frames in samples_of(out):
            if pid != p.pid or tid != p.pid or stype != "off_cpu":
                continue
            total += v
            if "nap" in [f[0] for f in frames if f[1] == "v8js"]:
                napped += v
        self.assertGreater(total, 0, "no waits of the main thread")
        self.assertGreaterEqual(napped, 0.9 * total, "%d of %d ns in nap()" % (napped, total))
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
