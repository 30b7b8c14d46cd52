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
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, _pb2, can_sample, check_conformance

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
                        fn, path, line, start = "?", "", 0, 0
                        if loc.lines:
                            ln = loc.lines[-1]
                            f = d.function_table[ln.function_index]
                            fn, path = s[f.name_strindex], s[f.filename_strindex]
                            line, start = ln.line, f.start_line
                        ftype = ""
                        for ai in loc.attribute_indices:
                            a = d.attribute_table[ai]
                            if s[a.key_strindex] == "profile.frame.type":
                                ftype = a.value.string_value
                        frames.append((fn, ftype, path, line, start))
                    out.append((pid, tid, stype, sum(smp.values), frames))
    return out


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


class Ruby:
    """A workload started for a test; "ready" read, killed on exit."""

    def __init__(self, script, secs):
        self.p = subprocess.Popen([RUBY, script, str(secs)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("ready"):
            self.stop()
            raise RuntimeError("ruby %s did not start: %r" % (script, line))
        self.pid = self.p.pid

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def capture(out, args, timeout=90):
    return subprocess.run([PROFCAP, "capture", "-o", out] + args, capture_output=True,
                          text=True, timeout=timeout)


def split_problems(samples, pid, label):
    """What is wrong with split.rb's samples of process @pid, [] if
    nothing."""
    mine = [x for x in samples if x[0] == pid and x[1] == pid and x[2] == "samples"]
    total = sum(x[3] for x in mine)
    if total < MIN_SAMPLES:
        return ["%s: %d samples of the main thread, too few to judge" % (label, total)]
    bad = []
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
    n = sum(by.values())
    for k, want in TRUTH.items():
        got = by[k] / float(n) if n else 0.0
        if abs(got - want) > SHARE_TOL:
            bad.append("%s: %s has %.1f %% of the CPU, the truth is %.0f %%" %
                       (label, k, 100 * got, 100 * want))
    if n < 0.9 * total:
        bad.append("%s: %d of %d samples in the three methods" % (label, n, total))
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
class RubyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def conformant(self, out):
        ok, why = check_conformance(out)
        self.assertTrue(ok, why[-3000:])

    def test_split_without_flags(self):
        """Started before profcap (-p), no flags: shares, files, lines,
        complete stacks."""
        for secs in (3, 8):
            p = Ruby(SPLIT, 30)
            try:
                out = os.path.join(self.dir, "split%s.pb" % secs)
                r = capture(out, ["-p", str(p.pid), "--seconds", str(secs), "-F", "499"])
                self.assertEqual(r.returncode, 0, r.stderr)
            finally:
                p.stop()
            bad = split_problems(samples_of(out), p.pid, "no flags")
            if not bad or "too few" not in bad[0]:
                break
        self.maxDiff = None
        self.assertEqual(bad, [])
        self.conformant(out)

    def test_started_during_system_wide_capture(self):
        """A ruby started while a system-wide capture runs: its Ruby frames
        from the notice of its first sample on."""
        out = os.path.join(self.dir, "sys.pb")
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", "7", "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(2)
            p = Ruby(SPLIT, 3)
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
            if [f for f in frames if f[1] == "ruby" and f[0] in TRUTH]:
                named += v
        self.assertGreater(total, 100, "the ruby was not sampled")
        self.assertGreaterEqual(named, 0.8 * total, "%d of %d samples named" % (named, total))
        self.conformant(out)

    def test_threads(self):
        """Threads other than the main one: each found in the VM's list of
        threads, its own frames (worker_loop), not the main thread's."""
        p = Ruby(os.path.join(RBDIR, "threads.rb"), 20)
        try:
            out = os.path.join(self.dir, "threads.pb")
            r = capture(out, ["-p", str(p.pid), "--seconds", "3"])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            p.stop()
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
        p = Ruby(WAITS, 20)
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
            if "nap" in [f[0] for f in frames if f[1] == "ruby"]:
                napped += v
        self.assertGreater(total, 0, "no waits of the main thread")
        self.assertGreaterEqual(napped, 0.9 * total, "%d of %d ns in nap" % (napped, total))
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
