"""End-to-end tests of Python frames (CPython 2.7, 3.6-3.13 and Debian's
3.11), read from outside the process by the BPF walker and named by
profcap, against workloads whose truth is known (tests/e2e/py/):

- split.py under every installed version, started before profcap (-p): the
  CPU shares of a() / Worker.b() / c() within 5 points of the 20/30/50 the
  workload times by CPU; >= 95 % of its samples with a Python stack down to
  <module>; each function's hot line the line it spins on; zlib's native
  frames under c(), the Python frame that called them;
- threads.py: each of 4 threads shows its own function (>= 90 %);
- aio.py: asyncio coroutines, each spin under its own coroutine (>= 90 %);
- callback.py: Python called back from C (sorted(key=...)): the caller,
  the builtin's native frames, then the callback, in that order;
- short runs of split.py started during a system-wide capture named from
  their first second, and 0.3 s `-c` runs named for most of their time; a copy of the interpreter in another mount namespace;
- a python3.12 sampled while ld.so spins before mapping its libpython (an
  audit library), found once libpython is mapped; Debian's python3.11
  copied as `myservice`, found by what it exports;
- waits.py with --off-cpu: the Python function a thread sleeps or waits on
  a lock in;
- every capture passes the OTLP checks (the official checker when there).
The versions run side by side, a few at a time, to keep the suite short on
2 CPUs."""
import concurrent.futures
import glob
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

import runtime_util
from capture_util import PROFCAP, _pb2, can_sample

OK, WHY = can_sample()
HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "py")
SPLIT = os.path.join(PYDIR, "split.py")
TRUTH = {"a": 0.20, "b": 0.30, "c": 0.50}
SHARE_TOL = 0.05
FREQ = "999"
# Samples a version's shares are judged on: a 50 % share's standard error
# is 3.5 points at 200 (less: the samples are periodic, not random). A
# version short of them (a busy machine) is captured again, for longer.
MIN_SAMPLES = 200


# An ld.so audit library: the search for libpython spins 0.8 s first, so
# the process is sampled (and announced) before libpython is mapped.
AUDIT_SPIN = r"""
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
unsigned int la_version(unsigned int v) { (void)v; return LAV_CURRENT; }
char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    static int done;
    struct timespec a, b;
    (void)cookie; (void)flag;
    if (!done && strstr(name, "libpython")) {
        done = 1;
        clock_gettime(CLOCK_MONOTONIC, &a);
        do
            clock_gettime(CLOCK_MONOTONIC, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 800000000L);
    }
    return (char *)name;
}
"""


# A Python stack deeper than the walker reads (63 frames), spinning.
DEEP = """import sys
sys.setrecursionlimit(10000)
def deep(n):
    if n:
        return deep(n - 1)
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    while True:
        pass
deep(100)
"""


def profile_count(path, key):
    """The integer Profile attribute @key of a capture, summed over its
    Profiles (0 when none)."""
    pb = _pb2()
    data = pb.ProfilesData()
    with open(path, "rb") as f:
        data.ParseFromString(f.read())
    d = data.dictionary
    n = 0
    for rp in data.resource_profiles:
        for sp in rp.scope_profiles:
            for prof in sp.profiles:
                for i in prof.attribute_indices:
                    a = d.attribute_table[i]
                    if d.string_table[a.key_strindex] == key:
                        n += a.value.int_value
    return n


def interpreters():
    """(label, path) of every CPython installed: pyenv's and Debian's."""
    out = []
    for d in sorted(glob.glob("/root/.pyenv/versions/*/bin/python")):
        out.append((d.split("/")[-3], d))
    if os.path.exists("/usr/bin/python3.11"):
        out.append(("debian-3.11", "/usr/bin/python3.11"))
    return out


def version_of(path):
    r = subprocess.run([path, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                       capture_output=True, text=True, timeout=30)
    return tuple(int(x) for x in r.stdout.split()) if r.returncode == 0 else (0, 0)


def hot_lines(path):
    """{'a': line, 'b': line, 'c': line} of the HOT_X markers of @path."""
    out = {}
    with open(path) as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"# HOT_([ABC])", line)
            if m:
                out[m.group(1).lower()] = i
    return out


def frames_of(path):
    """The samples of a capture: [(pid, tid, sample type, value, frames leaf
    first as (function, frame type, line, mapping file))]."""
    return runtime_util.samples_of(path, ("function", "type", "line", "mapping"))


def py_frames(frames):
    return runtime_util.of_type(frames, "cpython")


def base(fn):
    """A Python function's own name: Worker.b -> b (qualified from 3.11)."""
    return fn.rsplit(".", 1)[-1]


def Proc(interp, script, *args, prefix=()):
    """A Python workload started for a test; "ready" read, killed on
    stop()."""
    return runtime_util.Runtime(list(prefix) + [interp, script] + [str(a) for a in args],
                                "%s %s" % (interp, script))


def capture(out, args, timeout=60, env=None):
    return runtime_util.capture(out, args, timeout=timeout, env=env)


def split_problems(samples, pid, label, lines):
    """What is wrong with split.py's samples of process @pid, [] if nothing."""
    mine, total, bad = runtime_util.judged(
        samples, lambda x: x[0] == pid and x[2] == "samples", MIN_SAMPLES, label)
    if bad:
        return bad
    # Complete Python stacks: the root-most Python frame is <module>.
    complete = sum(x[3] for x in mine if py_frames(x[4]) and py_frames(x[4])[-1][0] == "<module>")
    if complete < 0.95 * total:
        bad.append("%s: %d of %d samples with a Python stack down to <module>" %
                   (label, complete, total))
    # Shares by the innermost Python frame of the three.
    by = {"a": 0, "b": 0, "c": 0}
    line_hits = {"a": {}, "b": {}, "c": {}}
    under_c = ext = 0
    for _, _, _, v, frames in mine:
        py = py_frames(frames)
        inner = next((f for f in py if base(f[0]) in by), None)
        if inner:
            k = base(inner[0])
            by[k] += v
            line_hits[k][inner[2]] = line_hits[k].get(inner[2], 0) + v
        # zlib's frames: under c, leafward of it, no Python frame between.
        zi = next((i for i, f in enumerate(frames) if "libz" in f[3] or f[0].startswith("deflate")),
                  None)
        if zi is not None:
            ext += v
            pi = next((i for i, f in enumerate(frames) if f[1] == "cpython"), None)
            if pi is not None and pi > zi and base(frames[pi][0]) == "c":
                under_c += v
    bad += runtime_util.share_problems(by, TRUTH, SHARE_TOL, label)
    for k in TRUTH:
        hot = max(line_hits[k], key=line_hits[k].get) if line_hits[k] else None
        if hot != lines[k]:
            bad.append("%s: %s's hot line is %s, not %d (%r)" % (label, k, hot, lines[k],
                                                                line_hits[k]))
    if ext < 20 or under_c < 0.95 * ext:
        bad.append("%s: %d of %d samples in zlib under c()" % (label, under_c, ext))
    return bad


@unittest.skipUnless(OK, WHY)
class PythonTest(runtime_util.RuntimeTest):
    def test_split_every_version(self):
        """Started before profcap (-p): shares, complete stacks, hot lines
        and C extension frames under each version, several at a time."""
        interps = interpreters()
        if not interps:
            self.skipTest("no CPython installed (/root/.pyenv/versions, /usr/bin/python3.11)")
        lines = hot_lines(SPLIT)
        problems = []
        # (interpreters, capture seconds): four at a time for 3 s; those
        # short of samples once more, together, for 8 s
        rounds = [(interps[k:k + 4], 3) for k in range(0, len(interps), 4)]
        again = []
        retried = 0
        while rounds:
            group, secs = rounds.pop(0)
            procs = []
            try:
                for label, path in group:
                    procs.append((label, path, Proc(path, SPLIT, 14)))
                out = os.path.join(self.dir, "split%d.pb" % len(rounds))
                r = capture(out, ["-p", ",".join(str(p.pid) for _, _, p in procs), "--seconds",
                                  str(secs), "-F", FREQ])
                self.assertEqual(r.returncode, 0, r.stderr)
            finally:
                for _, _, p in procs:
                    p.stop()
            samples = frames_of(out)
            for label, path, p in procs:
                bad = split_problems(samples, p.pid, label, lines)
                if bad and "too few" in bad[0] and secs == 3:
                    again.append((label, path))
                    continue
                problems += bad
            self.conformant(out)
            if not rounds and again:
                rounds = [(again[k:k + 4], 8) for k in range(0, len(again), 4)]
                retried, again = len(again), []
        print("# versions: %s (%d captured again)" %
              (", ".join(label for label, _ in interps), retried))
        self.maxDiff = None
        self.assertEqual(problems, [])

    def pick(self, minimum):
        """Installed interpreters of at least version @minimum, a spread."""
        out = []
        for label, path in interpreters():
            v = version_of(path)
            if v >= minimum and (label.startswith(("2.7", "3.13", "debian"))):
                out.append((label, path))
        if not out:
            self.skipTest("no CPython >= %d.%d installed" % minimum)
        return out

    def test_threads_own_frames(self):
        """Each of 4 threads shows its own function, not the GIL holder's."""
        interps = self.pick((2, 7))
        procs = []
        try:
            for label, path in interps:
                procs.append((label, Proc(path, os.path.join(PYDIR, "threads.py"), 20)))
            tids = {}
            for label, p in procs:
                for _ in range(4):
                    tid, fn = p.p.stdout.readline().split()
                    tids[int(tid)] = (label, fn)
            out = os.path.join(self.dir, "threads.pb")
            r = capture(out, ["-p", ",".join(str(p.pid) for _, p in procs), "--seconds", "3",
                              "-F", FREQ])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            for _, p in procs:
                p.stop()
        right, total = {}, {}
        for pid, tid, stype, v, frames in frames_of(out):
            if tid not in tids or stype != "samples":
                continue
            names = [base(f[0]) for f in py_frames(frames)]
            total[tid] = total.get(tid, 0) + v
            if tids[tid][1] in names and not [n for n in names if n.startswith("work_") and
                                              n != tids[tid][1]]:
                right[tid] = right.get(tid, 0) + v
        bad = ["%s %s (thread %d): %d of %d" % (tids[t][0], tids[t][1], t, right.get(t, 0), n)
               for t, n in total.items() if right.get(t, 0) < 0.9 * n or n < 20]
        missing = [tids[t] for t in tids if t not in total]
        self.assertEqual((bad, missing), ([], []))
        self.conformant(out)

    def test_asyncio_coroutines(self):
        """Each coroutine's spin under that coroutine's frame."""
        interps = self.pick((3, 6))
        procs = []
        try:
            for label, path in interps:
                procs.append((label, Proc(path, os.path.join(PYDIR, "aio.py"), 20)))
            out = os.path.join(self.dir, "aio.pb")
            r = capture(out, ["-p", ",".join(str(p.pid) for _, p in procs), "--seconds", "2",
                              "-F", FREQ])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            for _, p in procs:
                p.stop()
        samples = frames_of(out)
        bad = []
        for label, p in procs:
            for spin, task, other in (("spin_a", "task_a", "task_b"),
                                      ("spin_b", "task_b", "task_a")):
                n = ok = 0
                for pid, _, stype, v, frames in samples:
                    names = [base(f[0]) for f in py_frames(frames)]
                    if pid != p.pid or stype != "samples" or not names or names[0] != spin:
                        continue
                    n += v
                    if task in names and other not in names:
                        ok += v
                if n < 30 or ok < 0.9 * n:
                    bad.append("%s %s: %d of %d under %s" % (label, spin, ok, n, task))
        self.assertEqual(bad, [])
        self.conformant(out)

    def test_callback_from_c(self):
        """outer() -> sorted()'s native frames -> key(): interleaved in
        that order (the eval loop's frame of each call replaced by its own
        Python frames)."""
        interps = self.pick((2, 7))
        procs = []
        try:
            for label, path in interps:
                procs.append((label, Proc(path, os.path.join(PYDIR, "callback.py"), 20)))
            out = os.path.join(self.dir, "cb.pb")
            r = capture(out, ["-p", ",".join(str(p.pid) for _, p in procs), "--seconds", "2",
                              "-F", FREQ])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            for _, p in procs:
                p.stop()
        samples = frames_of(out)
        bad = []
        for label, p in procs:
            n = ok = 0
            for pid, _, stype, v, frames in samples:
                if pid != p.pid or stype != "samples":
                    continue
                names = [base(f[0]) if f[1] == "cpython" else None for f in frames]
                if "key" not in names:
                    continue
                n += v
                k = names.index("key")
                o = names.index("outer") if "outer" in names else -1
                # leaf first: key, then native frames of sorted, then outer
                if o > k + 1 and all(x is None for x in names[k + 1:o]):
                    ok += v
            if n < 20 or ok < 0.9 * n:
                bad.append("%s: %d of %d samples in key() under sorted() under outer()" %
                           (label, ok, n))
        self.assertEqual(bad, [])
        self.conformant(out)

    def test_started_during_system_wide_capture(self):
        """Short runs (1.5 s) started while a system-wide capture runs are
        named from their first second: their notices are taken within
        200 ms, and their code objects read before they exit."""
        interps = [i for i in interpreters() if i[0] == "debian-3.11"] or interpreters()[-1:]
        if not interps:
            self.skipTest("no CPython installed")
        interp = interps[0][1]
        out = os.path.join(self.dir, "sys.pb")
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", "6.5", "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        pids = []
        try:
            time.sleep(1.5)
            for _ in range(3):
                p = subprocess.Popen([interp, SPLIT, "1.5"], stdout=subprocess.DEVNULL)
                pids.append(p.pid)
                p.wait()
            _, err = cap.communicate(timeout=60)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            if cap.poll() is None:
                cap.kill()
                cap.wait()
        named = total = 0
        per = {}
        for pid, _, stype, v, frames in frames_of(out):
            if pid not in pids or stype != "samples":
                continue
            total += v
            if [f for f in py_frames(frames) if base(f[0]) in TRUTH]:
                named += v
                per[pid] = per.get(pid, 0) + v
        self.assertGreater(total, 50, "the short runs were not sampled")
        self.assertGreaterEqual(named, 0.8 * total, "%d of %d samples named" % (named, total))
        self.assertEqual(sorted(per), sorted(pids), per)
        self.conformant(out)

    def system_wide_run(self, argv, env=None, wait=1.5):
        """A system-wide capture of @argv (split.py's arguments after it)
        started after @wait s: (pid, named samples, samples) of its run."""
        out = os.path.join(self.dir, "sys.pb")
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", "6", "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(wait)
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                 env=dict(os.environ, **(env or {})))
            p.wait()
            _, err = cap.communicate(timeout=60)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            if cap.poll() is None:
                cap.kill()
                cap.wait()
        named = total = 0
        for pid, _, stype, v, frames in frames_of(out):
            if pid != p.pid or stype != "samples":
                continue
            total += v
            if [f for f in py_frames(frames) if base(f[0]) in TRUTH]:
                named += v
        self.conformant(out)
        return p.pid, named, total

    def test_libpython_mapped_late(self):
        """A python3.12 whose first samples come while ld.so has not mapped
        libpython yet (an audit library spins 0.8 s before it does) is
        looked at again, and walked once libpython is there."""
        interp = "/root/.pyenv/versions/3.12.1/bin/python3.12"
        if not os.path.exists(interp) or not shutil.which("cc"):
            self.skipTest("needs %s and cc" % interp)
        src = os.path.join(self.dir, "spin.c")
        lib = os.path.join(self.dir, "spin.so")
        with open(src, "w") as f:
            f.write(AUDIT_SPIN)
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", lib, src], check=True)
        _, named, total = self.system_wide_run([interp, SPLIT, "2"], {"LD_AUDIT": lib})
        self.assertGreater(total, 200, "the run was not sampled")
        # 0.8 s of 2.8 spin in ld.so: the rest named
        self.assertGreaterEqual(named, 0.45 * total, "%d of %d samples named" % (named, total))

    def test_renamed_interpreter(self):
        """Debian's static python3.11 copied as `myservice`: found by what
        it exports, not by its name."""
        if not os.path.exists("/usr/bin/python3.11"):
            self.skipTest("needs /usr/bin/python3.11")
        exe = os.path.join(self.dir, "myservice")
        shutil.copy("/usr/bin/python3.11", exe)
        _, named, total = self.system_wide_run([exe, SPLIT, "2"])
        self.assertGreater(total, 200, "the run was not sampled")
        self.assertGreaterEqual(named, 0.8 * total, "%d of %d samples named" % (named, total))

    def test_cut_stacks_counted(self):
        """A Python stack past the walker's 63 frames (3.12: the native
        stack stays short) is cut: the summary says how many samples, and
        the file counts them as truncated."""
        interp = "/root/.pyenv/versions/3.12.1/bin/python3.12"
        if not os.path.exists(interp):
            self.skipTest("needs " + interp)
        script = os.path.join(self.dir, "deep.py")
        with open(script, "w") as f:
            f.write(DEEP)
        p = Proc(interp, script)
        try:
            out = os.path.join(self.dir, "deep.pb")
            r = capture(out, ["-p", str(p.pid), "--seconds", "1.5", "-F", "499"])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            p.stop()
        total = sum(v for pid, _, st, v, _ in frames_of(out) if pid == p.pid and st == "samples")
        m = re.search(r"Python: (\d+) samples? with Python frames", r.stderr)
        self.assertTrue(m, r.stderr)
        m = re.search(r"(\d+) samples? with Python frames ha(s|ve) a cut Python stack", r.stderr)
        self.assertTrue(m, r.stderr)
        self.assertGreaterEqual(int(m.group(1)), 0.9 * total, r.stderr)
        self.assertGreaterEqual(profile_count(out, "profcap.samples.truncated"), 0.9 * total)
        self.assertGreaterEqual(profile_count(out, "profcap.samples.truncated.depth_limit"),
                                0.9 * total)
        self.conformant(out)

    def test_short_runs_named_from_their_start(self):
        """Ten 0.3 s `python3.12 -c` runs during a system-wide capture: their
        notices are taken every 50 ms once Python processes keep starting,
        so most of each run is named (at 200 ms, about 40 %)."""
        interp = "/root/.pyenv/versions/3.12.1/bin/python3.12"
        if not os.path.exists(interp):
            self.skipTest("needs " + interp)
        code = ("import time\n"
                "def a():\n"
                "    end = time.time() + 0.3\n"
                "    while time.time() < end: pass\n"
                "a()\n")
        out = os.path.join(self.dir, "short.pb")
        cap = subprocess.Popen([PROFCAP, "capture", "--seconds", "30", "-F", "499", "-o", out],
                               stderr=subprocess.PIPE, text=True)
        pids = []
        try:
            time.sleep(2.0)
            for _ in range(10):
                p = subprocess.Popen([interp, "-c", code])
                pids.append(p.pid)
                p.wait()
            cap.send_signal(signal.SIGINT)
            _, err = cap.communicate(timeout=60)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            if cap.poll() is None:
                cap.kill()
                cap.wait()
        named = total = 0
        for pid, _, stype, v, frames in frames_of(out):
            if pid in pids and stype == "samples":
                total += v
                named += v if [f for f in py_frames(frames) if f[0] == "a"] else 0
        self.assertGreater(total, 300, "the short runs were not sampled")
        self.assertGreaterEqual(named, 0.6 * total, "%d of %d samples named" % (named, total))
        self.conformant(out)

    def test_other_mount_namespace(self):
        """An interpreter whose file exists only in its own mount namespace
        (a private tmpfs): found and named through /proc/PID/root."""
        if not shutil.which("unshare") or not os.path.exists("/usr/bin/python3.11"):
            self.skipTest("needs unshare and /usr/bin/python3.11")
        script = ("mount -t tmpfs profcap-py /mnt && cp /usr/bin/python3.11 /mnt/python3.11 && "
                  "exec /mnt/python3.11 %s 6" % SPLIT)
        p = Proc("/bin/sh", "-c", script, prefix=["unshare", "-m", "--propagation", "private"])
        try:
            self.assertFalse(os.path.exists("/mnt/python3.11"))
            out = os.path.join(self.dir, "ns.pb")
            r = capture(out, ["-p", str(p.pid), "--seconds", "2", "-F", FREQ])
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            p.stop()
        problems = split_problems(frames_of(out), p.pid, "mount namespace", hot_lines(SPLIT))
        self.maxDiff = None
        self.assertEqual(problems, [])
        self.conformant(out)

    def off_cpu_check(self, env):
        """Waits carry the Python function that slept or waited on a lock
        (profcap's environment += @env)."""
        interps = [i for i in interpreters() if i[0] in ("debian-3.11", "2.7.18")]
        if not interps:
            self.skipTest("no CPython 2.7 or Debian 3.11 installed")
        procs = []
        try:
            for label, path in interps:
                procs.append((label, Proc(path, os.path.join(PYDIR, "waits.py"), 20)))
            out = os.path.join(self.dir, "off.pb")
            r = capture(out, ["--off-cpu", "-p", ",".join(str(p.pid) for _, p in procs),
                              "--seconds", "2"], env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            for _, p in procs:
                p.stop()
        samples = frames_of(out)
        bad = []
        for label, p in procs:
            ns = {"nap": 0, "wait_lock": 0, "holder": 0}
            total = with_py = 0
            for pid, _, stype, v, frames in samples:
                if pid != p.pid or stype != "off_cpu":
                    continue
                total += v
                names = [base(f[0]) for f in py_frames(frames)]
                if names:
                    with_py += v
                for k in ns:
                    if k in names:
                        ns[k] += v
            if not total or with_py < 0.9 * total or not ns["nap"] or not ns["wait_lock"]:
                bad.append("%s: %d of %d ns with Python frames; %r" % (label, with_py, total, ns))
        self.assertEqual(bad, [])
        self.conformant(out)

    def test_off_cpu_python_frames(self):
        """Off-CPU waits completed by task works (Linux >= 6.18), else at
        rseq_update."""
        self.off_cpu_check(None)

    def test_off_cpu_python_frames_rseq(self):
        """The same, waits completed at rseq_update / sys_exit (the route
        of kernels before task works)."""
        self.off_cpu_check({"PROFCAP_OFFCPU_TASKWORK": "0"})

if __name__ == "__main__":
    unittest.main()
