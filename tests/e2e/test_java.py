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
import unittest

import runtime_util
from capture_util import can_sample

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
    return runtime_util.samples_of(path, ("type", "lines"), thread="thread.name")


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
    mine, total, bad = runtime_util.judged(
        samples, lambda x: x[0] == pid and x[1] == WORKER and x[2] == "samples",
        MIN_SAMPLES, label, " of the worker thread")
    if bad:
        return bad
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
    bad += runtime_util.share_problems(by, TRUTH, SHARE_TOL, label, total, "methods")
    if files != {"JavaWork.java"}:
        bad.append("%s: the methods' files are %r" % (label, files))
    if misplaced:
        bad.append("%s: lines outside their method: %s" % (label, sorted(set(misplaced))[:8]))
    if with_mix < 0.5 * by["inlined"]:
        bad.append("%s: %d of %d samples of inlined() show mix() inlined in it" %
                   (label, with_mix, by["inlined"]))
    return bad


def Java(java, classes, secs, wait_ready=True):
    """JavaWork started for a test; "ready" read (unless not
    @wait_ready), killed on stop()."""
    return runtime_util.Runtime([java, "-cp", classes, "JavaWork", str(secs)], java,
                                wait_ready=wait_ready)


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(os.path.exists(JAVAC), "needs " + JAVAC)
class JavaTest(runtime_util.RuntimeTest):
    @classmethod
    def setUpClass(cls):
        cls.built = tempfile.TemporaryDirectory()
        cls.classes = os.path.join(cls.built.name, "classes")
        os.mkdir(cls.classes)
        subprocess.run([JAVAC, "-g", "--release", "17", "-d", cls.classes, SOURCE], check=True,
                       capture_output=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.built.cleanup()

    def jdk_split(self, jdk):
        java = JDKS[jdk]
        if not os.path.exists(java):
            self.skipTest("needs " + java)
        self.split_run(lambda: Java(java, self.classes, 40),
                       lambda out, pid: split_problems(samples_of(out), pid, jdk),
                       jdk + "-%d.pb", secs=(4, 8))

    def test_split_jdk17(self):
        """OpenJDK 17 started before profcap (-p), no flags: shares, names,
        lines, inlining, complete stacks."""
        self.jdk_split("jdk17")

    def test_split_temurin25(self):
        """The same with Temurin 25 (its own layout: blob offsets,
        immutable data, 2-byte frame complete offsets)."""
        self.jdk_split("temurin25")

    def test_started_during_system_wide_capture(self):
        """A JVM started while a system-wide capture runs: its Java frames
        once libjvm is up (looked at again while it starts)."""
        out = os.path.join(self.dir, "sys.pb")
        p = self.system_wide(out, lambda: Java(JDKS["jdk17"], self.classes, 5, wait_ready=False),
                             seconds="9")
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == WORKER and x[2] == "samples",
            lambda frames: [f for f in frames if f[0] == "jvm" and "JavaWork.rounds" in names(f)],
            100, 0.8, "the JVM's worker was not sampled", "samples named")
        self.conformant(out)

    def test_off_cpu_java_frames(self):
        """The napper thread's waits carry the method that slept (nap), under
        its Java name."""
        p, out = self.captured(lambda: Java(JDKS["jdk17"], self.classes, 30), "off.pb",
                               ["--off-cpu", "--seconds", "3"])

        def slept(frames):
            java = [n for f in frames if f[0] == "jvm" for n in names(f)]
            return "JavaWork.nap" in java and "java.lang.Thread.sleep" in java
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == NAPPER and x[2] == "off_cpu",
            slept, 0, 0.9, "no waits of a thread named " + NAPPER, "ns in nap()")
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
