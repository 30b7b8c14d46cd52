"""End-to-end tests of PHP frames of PHP 8.2 (Debian's php8.2-cli), read
from outside the process by the BPF walker and named by profcap, against
workloads whose truth is known (tests/e2e/php/), started without flags
or extensions:

- split.php, started before profcap (-p): the CPU shares of hot(),
  interp() and Worker::method() (a class method) within 5 points of the
  50/30/20 the workload times by CPU; their file the workload's path,
  their lines inside each function, their callers' lines the calls';
  >= 95 % of the samples with PHP frames complete to the outermost PHP
  frame ({main}), interleaved with native frames (the executor's frames
  replaced, the engine's frames below {main} kept);
- split.php started during a system-wide capture: named from its first
  notice on;
- waits.php with --off-cpu: the function the process sleeps in (nap());
- every capture passes the OTLP checks (the official checker when there).

Skipped (counted) when php8.2 is not installed (.ci/run installs
php8.2-cli)."""
import os
import re
import unittest

import runtime_util
from capture_util import can_sample

OK, WHY = can_sample()
HERE = os.path.dirname(os.path.abspath(__file__))
PHPDIR = os.path.join(HERE, "php")
SPLIT = os.path.join(PHPDIR, "split.php")
WAITS = os.path.join(PHPDIR, "waits.php")
PHP = "/usr/bin/php8.2"
TRUTH = {"hot": 0.50, "interp": 0.30, "Worker::method": 0.20}
SHARE_TOL = 0.05
MIN_SAMPLES = 300


def samples_of(path):
    """[(pid, tid, sample type, value, frames leaf first as (function,
    frame type, file, line, start line))] of a capture."""
    return runtime_util.samples_of(path, ("function", "type", "file", "line", "start"))


def source_lines(path):
    """{function: (declaration line, last line)} and {callee: line of its
    call in the top level} of a workload, from its text."""
    ranges, calls, cur, cls = {}, {}, None, ""
    with open(path) as f:
        lines = f.read().split("\n")
    for i, text in enumerate(lines, 1):
        m = re.match(r"^\s*class (\w+)", text)
        if m:
            cls = m.group(1) + "::"
        m = re.match(r"^(\s*)(?:public |private )?function (\w+)", text)
        if m:
            name = (cls if m.group(1) else "") + m.group(2)
            cur = [name, i, m.group(1) + "}"]
            continue
        if cur and text == cur[2]:
            ranges[cur[0]] = (cur[1], i)
            cur = None
        m = re.match(r"^\s*\$x \+= (?:\$w->)?(\w+)\(", text)
        if m:
            calls[m.group(1)] = i
    return ranges, calls


def Php(script, secs):
    """A workload started for a test; "ready" read, killed on stop()."""
    return runtime_util.Runtime([PHP, script, str(secs)], "php %s" % script)


def php_frames(frames):
    return runtime_util.of_type(frames, "php")


def split_problems(samples, pid, label):
    """What is wrong with split.php's samples of process @pid, [] if
    nothing."""
    mine, total, bad = runtime_util.judged(
        samples, lambda x: x[0] == pid and x[2] == "samples", MIN_SAMPLES, label)
    if bad:
        return bad
    ranges, calls = source_lines(SPLIT)
    complete = sum(x[3] for x in mine if php_frames(x[4]) and php_frames(x[4])[-1][0] == "{main}")
    if complete < 0.95 * total:
        bad.append("%s: %d of %d samples with PHP frames complete to {main}" %
                   (label, complete, total))
    # interleaved: the engine's native frames stay below {main}
    below = sum(x[3] for x in mine if [f for f in x[4] if f[0] == "zend_execute"])
    if below < 0.95 * total:
        bad.append("%s: %d of %d samples with zend_execute below the PHP frames" %
                   (label, below, total))
    by = dict.fromkeys(TRUTH, 0)
    files, off_lines, off_calls, inner_n = set(), 0, 0, 0
    for _, _, _, v, frames in mine:
        php = php_frames(frames)
        i = next((k for k, f in enumerate(php) if f[0] in by), None)
        if i is None:
            continue
        f = php[i]
        by[f[0]] += v
        inner_n += v
        files.add(f[2])
        lo, hi = ranges[f[0]]
        if not (lo <= f[3] <= hi) or f[4] != lo:
            off_lines += v
        callee = f[0].split("::")[-1]
        if i + 1 >= len(php) or php[i + 1][0] != "{main}" or php[i + 1][3] != calls[callee]:
            off_calls += v
    bad += runtime_util.share_problems(by, TRUTH, SHARE_TOL, label, total, "functions")
    if files != {SPLIT}:
        bad.append("%s: the functions' files are %r, not %s" % (label, files, SPLIT))
    if off_lines > 0.01 * inner_n:
        bad.append("%s: %d of %d samples with a line outside their function" %
                   (label, off_lines, inner_n))
    if off_calls > 0.05 * inner_n:
        bad.append("%s: %d of %d samples whose {main} frame is not on the call's line" %
                   (label, off_calls, inner_n))
    return bad


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(os.path.exists(PHP), "needs /usr/bin/php8.2 (php8.2-cli)")
class PhpTest(runtime_util.RuntimeTest):
    def test_split_without_flags(self):
        """Started before profcap (-p), no flags: shares, files, lines,
        complete stacks."""
        self.split_run(lambda: Php(SPLIT, 30),
                       lambda out, pid: split_problems(samples_of(out), pid, "no flags"),
                       "split%s.pb")

    def test_off_without_walker(self):
        """PROFCAP_PHP=0: no PHP frames, the executor's native frames."""
        p, out = self.captured(lambda: Php(SPLIT, 30), "off.pb",
                               ["--seconds", "2", "-F", "199"], env={"PROFCAP_PHP": "0"})
        smp = [x for x in samples_of(out) if x[0] == p.pid]
        self.assertTrue(smp)
        self.assertEqual([x for x in smp if php_frames(x[4])], [])
        self.assertTrue([x for x in smp if [f for f in x[4] if f[0] == "execute_ex"]])

    def test_started_during_system_wide_capture(self):
        """A php started while a system-wide capture runs: its PHP frames
        from the notice of its first sample on."""
        out = os.path.join(self.dir, "sys.pb")
        p = self.system_wide(out, lambda: Php(SPLIT, 3))
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[2] == "samples",
            lambda frames: [f for f in php_frames(frames) if f[0] in TRUTH],
            100, 0.8, "the php was not sampled", "samples named")
        self.conformant(out)

    def test_off_cpu_php_frames(self):
        """The waits carry the function that slept (nap), its line the
        usleep() call's, above {main}."""
        p, out = self.captured(lambda: Php(WAITS, 20), "offcpu.pb",
                               ["--off-cpu", "--seconds", "2", "-F", "499"])
        with open(WAITS) as f:
            text = f.read().split("\n")
        want = [("usleep", 0), ("nap", text.index("    usleep(20000);") + 1),
                ("{main}", text.index("    nap();") + 1)]
        self.assert_mostly(
            samples_of(out), lambda x: x[0] == p.pid and x[2] == "off_cpu",
            lambda frames: [(f[0], f[3]) for f in php_frames(frames)] == want,
            0, 0.9, "no waits of the main thread", "ns in nap()")
        self.conformant(out)


if __name__ == "__main__":
    unittest.main()
