"""runtime_util.py - shared helpers for the end-to-end tests of runtime
frames (Python, Node.js, Java, Ruby, PHP, Perl): read a capture's samples
with the frame fields a test judges, start an interpreter's workload and
wait for its "ready", capture it, tally samples and judge CPU shares
against the truth the workload times. Decoding and the OTLP checks are
capture_util's."""
import os
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, _pb2, check_conformance

# What a frame field names: the innermost line's function, file, line and
# its function's first line; the frame type; the mapping's file; every
# line of the location as (function, file, line), innermost first.
FRAME_FIELDS = ("function", "type", "file", "line", "start", "mapping", "lines")


def _frame(d, s, loc, fields):
    fn, path, line, start, lines = "?", "", 0, 0, []
    if loc.lines:
        ln = loc.lines[-1]
        f = d.function_table[ln.function_index]
        fn, path, line, start = s[f.name_strindex], s[f.filename_strindex], ln.line, f.start_line
    if "lines" in fields:
        for ln in loc.lines:
            f = d.function_table[ln.function_index]
            lines.append((s[f.name_strindex], s[f.filename_strindex], ln.line))
    ftype = ""
    for ai in loc.attribute_indices:
        a = d.attribute_table[ai]
        if s[a.key_strindex] == "profile.frame.type":
            ftype = a.value.string_value
    mapping = s[d.mapping_table[loc.mapping_index].filename_strindex] if "mapping" in fields else ""
    have = {"function": fn, "type": ftype, "file": path, "line": line, "start": start,
            "mapping": mapping, "lines": lines}
    return tuple(have[k] for k in fields)


def samples_of(path, fields, thread="thread.id"):
    """[(pid, thread, sample type, value, frames leaf first)] of a capture;
    a frame is the tuple of @fields (names of FRAME_FIELDS); thread the
    sample's @thread attribute ("thread.id": an int, 0 when absent;
    "thread.name": a string, "" when absent)."""
    pb = _pb2()
    data = pb.ProfilesData()
    with open(path, "rb") as f:
        data.ParseFromString(f.read())
    d = data.dictionary
    s = d.string_table
    none = "" if thread == "thread.name" else 0
    out = []
    for rp in data.resource_profiles:
        rattrs = {kv.key: kv.value for kv in rp.resource.attributes}
        pid = rattrs["process.pid"].int_value if "process.pid" in rattrs else 0
        for sp in rp.scope_profiles:
            for prof in sp.profiles:
                stype = s[prof.sample_type.type_strindex]
                for smp in prof.samples:
                    who = none
                    for i in smp.attribute_indices:
                        a = d.attribute_table[i]
                        if s[a.key_strindex] == thread:
                            who = a.value.string_value if thread == "thread.name" else \
                                a.value.int_value
                    frames = [_frame(d, s, d.location_table[li], fields)
                              for li in d.stack_table[smp.stack_index].location_indices]
                    out.append((pid, who, stype, sum(smp.values), frames))
    return out


def of_type(frames, ftype):
    """The frames of @frames (type second) whose type is @ftype."""
    return [f for f in frames if f[1] == ftype]


def tally(samples, keep, hit):
    """(total, hits): the values of @samples @keep accepts, and of those
    whose frames @hit accepts."""
    total = hits = 0
    for x in samples:
        if keep(x):
            total += x[3]
            if hit(x[4]):
                hits += x[3]
    return total, hits


def judged(samples, keep, least, label, whose=""):
    """(samples, total, problems): the samples @keep accepts, their
    values' sum, and the message saying they are too few to judge when the
    sum is under @least (@whose: whose samples they are), else []."""
    mine = [x for x in samples if keep(x)]
    total = sum(x[3] for x in mine)
    if total < least:
        return mine, total, ["%s: %d samples%s, too few to judge" % (label, total, whose)]
    return mine, total, []


def share_problems(by, truth, tol, label, total=None, what=""):
    """The shares of @by's values off @truth's by more than @tol, as
    messages, and with @total, @by's sum under 90 % of it (@what: what
    @by's keys are); [] if none."""
    bad = []
    n = sum(by.values())
    for k, want in truth.items():
        got = by[k] / float(n) if n else 0.0
        if abs(got - want) > tol:
            bad.append("%s: %s has %.1f %% of the CPU, the truth is %.0f %%" %
                       (label, k, 100 * got, 100 * want))
    if total is not None and n < 0.9 * total:
        bad.append("%s: %d of %d samples in the three %s" % (label, n, total, what))
    return bad


class Runtime:
    """An interpreter's workload started for a test (@argv), "ready" read
    from its output unless @wait_ready is false; killed by stop()."""

    def __init__(self, argv, what, cwd=None, wait_ready=True):
        self.p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.pid = self.p.pid
        if wait_ready:
            line = self.p.stdout.readline()
            if not line.startswith("ready"):
                self.stop()
                raise RuntimeError("%s did not start: %r %s" % (what, line,
                                                                self.p.stderr.read()[-500:]))

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def capture(out, args, timeout=90, env=None):
    """profcap capture -o @out @args; @env: variables added to ours."""
    return subprocess.run([PROFCAP, "capture", "-o", out] + args, capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, **(env or {})))


class RuntimeTest(unittest.TestCase):
    """A test case with a temporary folder (self.dir) and the checks every
    runtime test repeats."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def conformant(self, out):
        ok, why = check_conformance(out)
        self.assertTrue(ok, why[-3000:])

    def assert_mostly(self, samples, keep, hit, least, share, none, what):
        """More than @least of the values @keep accepts, and at least
        @share of them in samples whose frames @hit accepts; @none: the
        message when too few, @what: what the hits are."""
        total, hits = tally(samples, keep, hit)
        self.assertGreater(total, least, none)
        self.assertGreaterEqual(hits, share * total, "%d of %d %s" % (hits, total, what))

    def captured(self, start, name, args, env=None):
        """Start a workload (@start()), capture it (-p PID @args) into
        @name in self.dir, stop it; returns (workload, capture path)."""
        p = start()
        try:
            out = os.path.join(self.dir, name)
            r = capture(out, ["-p", str(p.pid)] + args, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            p.stop()
        return p, out

    def split_run(self, start, problems, name, secs=(3, 8), started=None):
        """Capture split workloads (@start()) for @secs, the longer only
        when the shorter gave too few samples; @problems(path, pid) must
        find nothing, the capture pass the OTLP checks. @started(): run
        once each workload is up."""
        for sec in secs:
            p = start()
            try:
                if started:
                    started()
                out = os.path.join(self.dir, name % sec)
                r = capture(out, ["-p", str(p.pid), "--seconds", str(sec), "-F", "499"])
                self.assertEqual(r.returncode, 0, r.stderr)
            finally:
                p.stop()
            bad = problems(out, p.pid)
            if not bad or "too few" not in bad[0]:
                break
        self.maxDiff = None
        self.assertEqual(bad, [])
        self.conformant(out)

    def system_wide(self, out, start, seconds="7"):
        """A system-wide capture of @seconds into @out, a workload started
        (@start()) 2 s into it and run to its end; returns the workload."""
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", seconds, "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        p = None
        try:
            time.sleep(2)
            p = start()
            p.p.wait(timeout=60)
            _, err = cap.communicate(timeout=90)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            if cap.poll() is None:
                cap.kill()
                cap.wait()
            if p:
                p.stop()
        return p
