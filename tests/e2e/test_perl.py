"""End-to-end tests of Perl frames, read from outside the process by the
BPF walker and named by profcap, against workloads whose truth is known
(tests/e2e/perl/), under /usr/bin/perl (Perl 5.36) started without flags:

- split.pl, started before profcap (-p): the CPU shares of main::hot(),
  main::warm() and Worker::method() (a method of a package) within 5
  points of the 50/30/20 the workload times by CPU; their file the
  workload's path, the innermost line inside the sub and main::run's line
  its call of the sub; >= 95 % of the main thread's samples with Perl
  frames complete to the main program (<main>, under perl_run);
- split.pl started during a system-wide capture: named from its first
  notice on;
- waits.pl with --off-cpu: the sub the thread sleeps in (main::nap) on its
  waits;
- short perl runs during a system-wide capture while a node runs: samples
  whose native walk is finished in user space (late) carry the Perl words,
  not the JavaScript ones V8's walker left (each stack's outermost frame is
  <main>, and only it);
- a perl whose file exists only in its own mount namespace (a private
  tmpfs): found and named through /proc/PID/root (map_files);
- PROFCAP_PERL=0: no Perl frames, the native ones only;
- threads.pl: a worker thread (an ithread, its own interpreter) and the
  main thread each named in their own sub;
- every capture passes the OTLP checks (the official checker when there).
Skipped (counted) without /usr/bin/perl."""
import os
import re
import shutil
import subprocess
import time
import unittest

import runtime_util
from capture_util import PROFCAP, can_sample

OK, WHY = can_sample()
HERE = os.path.dirname(os.path.abspath(__file__))
PLDIR = os.path.join(HERE, "perl")
SPLIT = os.path.join(PLDIR, "split.pl")
PERL = "/usr/bin/perl"
TRUTH = {"main::hot": 0.50, "main::warm": 0.30, "Worker::method": 0.20}
CALLS = {"main::hot": "hot(25)", "main::warm": "warm(15)", "Worker::method": "->method(10)"}
SHARE_TOL = 0.05
MIN_SAMPLES = 300


def samples_of(path):
    """[(pid, tid, sample type, value, frames leaf first as (function,
    frame type, file, line))] of a capture."""
    return runtime_util.samples_of(path, ("function", "type", "file", "line"))


def sub_lines():
    """{sub: (first, last line)} and {sub: line of its call in run()} of
    split.pl, read from its text."""
    text = open(SPLIT).read().split("\n")
    spans, calls, cur, pkg = {}, {}, None, "main"
    for i, ln in enumerate(text, 1):
        m = re.match(r"^package (\w+);", ln)
        if m:
            pkg = m.group(1)
        m = re.match(r"^sub (\w+) \{", ln)
        if m:
            cur = "%s::%s" % (pkg, m.group(1))
            spans[cur] = [i, i]
        elif cur and ln.startswith("}"):
            spans[cur][1] = i
            cur = None
        for sub, call in CALLS.items():
            if call in ln:
                calls[sub] = i
    return spans, calls


def Perl(script, secs, argv=None):
    """A workload started for a test; "ready" read, killed on stop().
    @argv replaces the command line (it must print "ready" first)."""
    return runtime_util.Runtime(argv or [PERL, script, str(secs)], "perl %s" % script)


def perl_frames(frames):
    return runtime_util.of_type(frames, "perl")


def split_problems(samples, pid, label):
    """What is wrong with split.pl's samples of process @pid, [] if
    nothing."""
    mine, total, bad = runtime_util.judged(
        samples, lambda x: x[0] == pid and x[1] == pid and x[2] == "samples",
        MIN_SAMPLES, label, " of the main thread")
    if bad:
        return bad
    spans, calls = sub_lines()
    complete = 0
    for x in mine:
        pf = perl_frames(x[4])
        # outermost Perl frame the main program, right under perl_run
        names = [f[0] for f in x[4]]
        if pf and pf[-1][0] == "<main>" and "perl_run" in names and \
                names.index("perl_run") == names.index("<main>") + 1:
            complete += x[3]
    if complete < 0.95 * total:
        bad.append("%s: %d of %d samples with Perl frames complete to <main>" %
                   (label, complete, total))
    by = dict.fromkeys(TRUTH, 0)
    files, badlines = set(), []
    for _, _, _, v, frames in mine:
        pf = perl_frames(frames)
        if not pf or pf[0][0] not in by:
            continue
        sub = pf[0][0]
        by[sub] += v
        files.update(f[2] for f in pf)
        first, last = spans[sub]
        if not first <= pf[0][3] <= last:
            badlines.append("%s at line %d, not in %d-%d" % (sub, pf[0][3], first, last))
        if len(pf) > 1 and pf[1][0] == "main::run" and pf[1][3] != calls[sub]:
            badlines.append("main::run calls %s at line %d, not %d" % (sub, pf[1][3],
                                                                       calls[sub]))
    bad += runtime_util.share_problems(by, TRUTH, SHARE_TOL, label, total, "subs")
    if files != {SPLIT}:
        bad.append("%s: the frames' files are %r, not %s" % (label, files, SPLIT))
    if badlines:
        bad.append("%s: %d samples with wrong lines, e.g. %s" % (label, len(badlines),
                                                                  badlines[:3]))
    return bad


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(os.path.exists(PERL), "needs /usr/bin/perl (apt-get install perl)")
class PerlTest(runtime_util.RuntimeTest):
    def test_split_without_flags(self):
        """Started before profcap (-p), no flags: shares, files, lines,
        complete stacks."""
        self.split_run(lambda: Perl(SPLIT, 30),
                       lambda out, pid: split_problems(samples_of(out), pid, "no flags"),
                       "split%s.pb")

    def test_other_mount_namespace(self):
        """A perl whose file exists only in its own mount namespace: the
        same split, named."""
        if not shutil.which("unshare"):
            self.skipTest("needs unshare")
        script = ("mount -t tmpfs profcap-pl /mnt && cp %s /mnt/perl-ns && "
                  "exec /mnt/perl-ns %s 30" % (PERL, SPLIT))
        self.split_run(lambda: Perl(SPLIT, 0, argv=["unshare", "-m", "--propagation", "private",
                                                    "/bin/sh", "-c", script]),
                       lambda out, pid: split_problems(samples_of(out), pid, "mount namespace"),
                       "ns%d.pb",
                       started=lambda: self.assertFalse(os.path.exists("/mnt/perl-ns")))

    def test_threads_own_frames(self):
        """Each thread's own interpreter: the main thread in
        main::mainwork, the worker (an ithread) in Worker::threadwork."""
        p, out = self.captured(lambda: Perl(os.path.join(PLDIR, "threads.pl"), 30), "threads.pb",
                               ["--seconds", "3", "-F", "499"])
        want = {True: "main::mainwork", False: "Worker::threadwork"}
        total, good = {True: 0, False: 0}, {True: 0, False: 0}
        for pid, tid, stype, v, frames in samples_of(out):
            if pid != p.pid or stype != "samples":
                continue
            main = tid == p.pid
            names = [f[0] for f in perl_frames(frames)]
            total[main] += v
            if want[main] in names and want[not main] not in names and names[-1] == "<main>":
                good[main] += v
        for main in (True, False):
            self.assertGreater(total[main], 30, "%s: too few samples" % want[main])
            self.assertGreaterEqual(good[main], 0.9 * total[main],
                                    "%s: %d of %d samples" % (want[main], good[main],
                                                              total[main]))
        self.conformant(out)

    def test_walker_off(self):
        """PROFCAP_PERL=0: native frames only, the runops loop kept."""
        p, out = self.captured(lambda: Perl(SPLIT, 30), "off.pb", ["--seconds", "3", "-F", "499"],
                               env={"PROFCAP_PERL": "0"})
        mine = [x for x in samples_of(out) if x[0] == p.pid and x[2] == "samples"]
        self.assertGreater(sum(x[3] for x in mine), 30)
        self.assertEqual([x for x in mine if perl_frames(x[4])], [])
        runops = sum(x[3] for x in mine if "Perl_runops_standard" in [f[0] for f in x[4]])
        self.assertGreater(runops, 0.9 * sum(x[3] for x in mine))
        self.conformant(out)

    def test_started_during_system_wide_capture(self):
        """A perl started while a system-wide capture runs: its Perl frames
        from the notice of its first sample on."""
        out = os.path.join(self.dir, "sys.pb")
        p = self.system_wide(out, lambda: Perl(SPLIT, 3))
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == p.pid and x[2] == "samples",
            lambda frames: [f for f in perl_frames(frames) if f[0] in TRUTH],
            100, 0.8, "the perl was not sampled", "samples named")
        self.conformant(out)

    @unittest.skipUnless(os.path.exists("/usr/bin/node"), "needs /usr/bin/node")
    def test_late_samples_with_node_running(self):
        """Perl processes started during a system-wide capture (their first
        samples walked late) while V8's walker runs on a node: every Perl
        stack ends with <main>, and has it only there (JavaScript words read
        as Perl's would not: their kinds make <main> and (eval) frames
        anywhere, their functions <unknown perl>). A sub may be unknown
        for a reason of its own (a BEGIN block freed once run)."""
        out = os.path.join(self.dir, "late.pb")
        node = subprocess.Popen(["/usr/bin/node", os.path.join(HERE, "js", "split.js"), "8"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", "7", "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        pids = set()
        try:
            time.sleep(2)
            for _ in range(4):
                p = Perl(SPLIT, 0.7)
                pids.add(p.pid)
                p.p.wait(timeout=60)
            _, err = cap.communicate(timeout=90)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            for x in (cap, node):
                if x.poll() is None:
                    x.kill()
                    x.wait()
        named = bad = 0
        for pid, tid, stype, v, frames in samples_of(out):
            pf = perl_frames(frames)
            if pid not in pids or not pf:
                continue
            names = [f[0] for f in pf]
            if names[-1] != "<main>" or "<main>" in names[:-1]:
                bad += v
            else:
                named += v
        self.assertGreater(named, 20, "the perl runs were not named")
        self.assertEqual(bad, 0, "%d samples with frames not Perl's" % bad)
        self.conformant(out)

    def test_off_cpu_perl_frames(self):
        """The main thread's waits carry the sub that slept (main::nap)."""
        p, out = self.captured(lambda: Perl(os.path.join(PLDIR, "waits.pl"), 20), "off.pb",
                               ["--off-cpu", "--seconds", "2"])
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[1] == p.pid and x[2] == "off_cpu",
            lambda frames: "main::nap" in [f[0] for f in perl_frames(frames)],
            0, 0.9, "no waits of the main thread", "ns in nap()")
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
