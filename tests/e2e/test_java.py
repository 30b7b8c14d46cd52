"""End-to-end tests of Java frames of HotSpot JVMs, read from outside the
process by the BPF walker and named by profcap, against a workload whose
truth is known (tests/e2e/java/JavaWork.java, compiled with javac at test
time), under JVMs started without agents or flags:

- JavaWork started before profcap (-p), after its warm-up (interpreted,
  then compiled): the CPU shares of hot() (a bimorphic virtual call),
  inlined() (mix() inlined into it, calling big()) and plain() within 5
  points of the 50/30/20 the workload times by the thread's CPU clock;
  >= 95 % of the worker thread's samples with Java frames and a stack
  complete down to the thread's start (the call stub, JavaCalls, clone3);
  class and method names, the source file, each method's line inside its
  body, mix() seen as an inlined frame; with OpenJDK 17 and Temurin 25
  where installed;
- JavaWork started during a system-wide capture: named once the JVM is up;
- --off-cpu: the waits of its thread "javawork-napper-with-a-long-name"
  (its Java name, not the kernel's 15 bytes) carry nap() and Thread.sleep
  (reached through libjvm's and libc's CFI);
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
SOURCE = os.path.join(HERE, "java", "JavaWork.java")
JAVAC = "/usr/bin/javac"
JDKS = {"jdk17": "/usr/bin/java", "temurin25": "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"}
WORKER = "javawork-worker"
NAPPER = "javawork-napper-with-a-long-name"
TRUTH = {"hot": 0.50, "inlined": 0.30, "plain": 0.20}
SHARE_TOL = 0.05
MIN_SAMPLES = 300


def method_lines():
    """{method: (first line, last line)} of JavaWork.java's methods."""
    spans, name, start = {}, None, 0
    with open(SOURCE) as f:
        for no, line in enumerate(f, 1):
            m = re.match(r"^    (?:public )?static \w+ (\w+)\(", line)
            if m:
                name, start = m.group(1), no
            elif name and line.startswith("    }"):
                spans[name] = (start, no)
                name = None
    return spans


def samples_of(path):
    """[(pid, thread name, sample type, value, frames leaf first)] of a
    capture; a frame is (frame type, [(function, file, line)] innermost
    first)."""
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
                    tname = ""
                    for i in smp.attribute_indices:
                        a = d.attribute_table[i]
                        if s[a.key_strindex] == "thread.name":
                            tname = a.value.string_value
                    frames = []
                    for li in d.stack_table[smp.stack_index].location_indices:
                        loc = d.location_table[li]
                        lines = []
                        for ln in loc.lines:
                            f = d.function_table[ln.function_index]
                            lines.append((s[f.name_strindex], s[f.filename_strindex], ln.line))
                        ftype = ""
                        for ai in loc.attribute_indices:
                            a = d.attribute_table[ai]
                            if s[a.key_strindex] == "profile.frame.type":
                                ftype = a.value.string_value
                        frames.append((ftype, lines))
                    out.append((pid, tname, stype, sum(smp.values), frames))
    return out


def names(frame):
    return [ln[0] for ln in frame[1]]


def complete(frames):
    """Java frames, and the stack whole from the Java code down to the
    thread's start: Thread.run, the call stub (in the blob "StubRoutines
    (1)" of JDK 17, "(initialstubs)" of 25), JavaCalls, clone3."""
    flat = [n for f in frames for n in names(f)]
    return ("java.lang.Thread.run" in flat and
            any(n.startswith("StubRoutines (") for n in flat) and
            any(n.startswith("JavaCalls::call_helper") for n in flat) and
            bool(flat) and flat[-1] in ("clone3", "clone", "start_thread"))


def split_problems(samples, pid, label):
    """What is wrong with JavaWork's worker samples of process @pid, []
    if nothing."""
    mine = [x for x in samples if x[0] == pid and x[1] == WORKER and x[2] == "samples"]
    total = sum(x[3] for x in mine)
    if total < MIN_SAMPLES:
        return ["%s: %d samples of the worker thread, too few to judge" % (label, total)]
    bad = []
    whole = sum(x[3] for x in mine if complete(x[4]))
    if whole < 0.95 * total:
        bad.append("%s: %d of %d samples with Java frames down to the thread's start" %
                   (label, whole, total))
    spans = method_lines()
    by = dict.fromkeys(TRUTH, 0)
    files, misplaced, with_mix = set(), [], 0
    for _, _, _, v, frames in mine:
        for f in frames:
            if f[0] != "jvm":
                continue
            hit = [ln for ln in f[1] if ln[0].startswith("JavaWork.") and
                   ln[0].split(".", 1)[1] in by]
            if not hit:
                continue
            fn, path, line = hit[0]
            meth = fn.split(".", 1)[1]
            by[meth] += v
            files.add(path)
            lo, hi = spans[meth]
            if not lo <= line <= hi:
                misplaced.append("%s:%d" % (fn, line))
            if meth == "inlined" and [ln for ln in f[1] if ln[0] == "JavaWork.mix"]:
                with_mix += v
            break
    n = sum(by.values())
    for k, want in TRUTH.items():
        got = by[k] / float(n) if n else 0.0
        if abs(got - want) > SHARE_TOL:
            bad.append("%s: %s has %.1f %% of the CPU, the truth is %.0f %%" %
                       (label, k, 100 * got, 100 * want))
    if n < 0.9 * total:
        bad.append("%s: %d of %d samples in the three methods" % (label, n, total))
    if files != {"JavaWork.java"}:
        bad.append("%s: the methods' files are %r" % (label, files))
    if misplaced:
        bad.append("%s: lines outside their method: %s" % (label, sorted(set(misplaced))[:8]))
    if with_mix < 0.5 * by["inlined"]:
        bad.append("%s: %d of %d samples of inlined() show mix() inlined in it" %
                   (label, with_mix, by["inlined"]))
    return bad


class Java:
    """JavaWork started for a test; "ready" read, killed on exit."""

    def __init__(self, java, classes, secs, wait_ready=True):
        self.p = subprocess.Popen([java, "-cp", classes, "JavaWork", str(secs)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.pid = self.p.pid
        if wait_ready:
            line = self.p.stdout.readline()
            if not line.startswith("ready"):
                self.stop()
                raise RuntimeError("%s did not start: %r" % (java, line))

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def capture(out, args, timeout=90):
    return subprocess.run([PROFCAP, "capture", "-o", out] + args, capture_output=True,
                          text=True, timeout=timeout)


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(os.path.exists(JAVAC), "needs " + JAVAC)
class JavaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.classes = os.path.join(cls.tmp.name, "classes")
        os.mkdir(cls.classes)
        subprocess.run([JAVAC, "-g", "--release", "17", "-d", cls.classes, SOURCE], check=True,
                       capture_output=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def conformant(self, out):
        ok, why = check_conformance(out)
        self.assertTrue(ok, why[-3000:])

    def split_run(self, jdk):
        java = JDKS[jdk]
        if not os.path.exists(java):
            self.skipTest("needs " + java)
        for secs in (4, 8):
            p = Java(java, self.classes, 40)
            try:
                out = os.path.join(self.tmp.name, "%s-%d.pb" % (jdk, secs))
                r = capture(out, ["-p", str(p.pid), "--seconds", str(secs), "-F", "499"])
                self.assertEqual(r.returncode, 0, r.stderr)
            finally:
                p.stop()
            bad = split_problems(samples_of(out), p.pid, jdk)
            if not bad or "too few" not in bad[0]:
                break
        self.maxDiff = None
        self.assertEqual(bad, [])
        self.conformant(out)

    def test_split_jdk17(self):
        """OpenJDK 17 started before profcap (-p), no flags: shares, names,
        lines, inlining, complete stacks."""
        self.split_run("jdk17")

    def test_split_temurin25(self):
        """The same with Temurin 25 (its own layout: blob offsets,
        immutable data, 2-byte frame complete offsets)."""
        self.split_run("temurin25")

    def test_started_during_system_wide_capture(self):
        """A JVM started while a system-wide capture runs: its Java frames
        once libjvm is up (looked at again while it starts)."""
        out = os.path.join(self.tmp.name, "sys.pb")
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", "9", "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        p = None
        try:
            time.sleep(2)
            p = Java(JDKS["jdk17"], self.classes, 5, wait_ready=False)
            p.p.wait(timeout=60)
            _, err = cap.communicate(timeout=90)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            if cap.poll() is None:
                cap.kill()
                cap.wait()
            if p:
                p.stop()
        total = named = 0
        for pid, tname, stype, v, frames in samples_of(out):
            if pid != p.pid or tname != WORKER or stype != "samples":
                continue
            total += v
            if [f for f in frames if f[0] == "jvm" and "JavaWork.rounds" in names(f)]:
                named += v
        self.assertGreater(total, 100, "the JVM's worker was not sampled")
        self.assertGreaterEqual(named, 0.8 * total, "%d of %d samples named" % (named, total))
        self.conformant(out)

    def test_off_cpu_java_frames(self):
        """The napper thread's waits carry the method that slept (nap), under
        its Java name."""
        p = Java(JDKS["jdk17"], self.classes, 30)
        try:
            out = os.path.join(self.tmp.name, "off.pb")
            r = capture(out, ["--off-cpu", "-p", str(p.pid), "--seconds", "3"])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            p.stop()
        total = napped = 0
        for pid, tname, stype, v, frames in samples_of(out):
            if pid != p.pid or tname != NAPPER or stype != "off_cpu":
                continue
            total += v
            java = [n for f in frames if f[0] == "jvm" for n in names(f)]
            if "JavaWork.nap" in java and "java.lang.Thread.sleep" in java:
                napped += v
        self.assertGreater(total, 0, "no waits of a thread named " + NAPPER)
        self.assertGreaterEqual(napped, 0.9 * total, "%d of %d ns in nap()" % (napped, total))
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
