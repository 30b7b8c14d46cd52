"""End-to-end tests of off-CPU profiles (capture --off-cpu) against the
ground truth of tests/workloads/offcpu_wait.c: threads blocking in known
functions (nanosleep, a pipe, a mutex, fdatasync) time their own waits; the
off-CPU time the profile gives each function must be within 10 % of it, and
a CPU-bound thread must show almost none (root: real BPF)."""
import json
import re
import os
import subprocess
import tempfile
import time
import unittest

from capture_util import (PROFCAP, WORKLOADS, can_sample, check_conformance, decode, run_profcap,
                          wait_file)

OK, WHY = can_sample()
FUNCS = ("wait_sleep", "wait_pipe", "wait_mutex", "wait_fsync")
RUN_S = 3.0


def kernel_at_least(major, minor):
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (major, minor)


def has_fn(sample, name):
    # gcc may clone a static function (wait_fsync.constprop.0).
    return any(f[0] == name or f[0].startswith(name + ".") for f in sample["frames"])


def link_ids():
    """IDs of the BPF links on the host now (bpftool), None without it."""
    r = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout or "[]")


def attached(before, timeout=15.0):
    """Wait until a capture's off-CPU programs are attached: bpftool lists a
    link on the sched_switch tracepoint (attached after rseq_update or
    sys_exit when those are used) and perf_event links (attached last, in
    sampler__start), both newer than every link in @before (link_ids()
    before the capture started: links of an earlier capture linger a
    moment after it exits, and another capture may be running). A loaded
    program is not enough: the -p process's tables are built between load
    and attach. Without bpftool, sleep."""
    if before is None:
        time.sleep(3)
        return
    last = max([l.get("id", 0) for l in before] or [0])
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        links = [l for l in link_ids() or [] if l.get("id", 0) > last]
        if (any(l.get("tp_name") == "sched_switch" for l in links)
                and any(l.get("type") == "perf_event" for l in links)):
            time.sleep(0.05)
            return
        time.sleep(0.05)


@unittest.skipUnless(OK, WHY)
class OffCpuTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def capture(self, extra, fmt_out="off.pb", env=None, wargs=(), penv=None):
        """Run the workload (environment += @env) under capture --off-cpu
        (environment += @penv); returns (truth, path, stderr)."""
        go = os.path.join(self.dir, "go")
        if os.path.exists(go):
            os.unlink(go)  # a second capture in a test: the workload must wait again
        truth_path = os.path.join(self.dir, "truth.json")
        out = os.path.join(self.dir, fmt_out)
        w = subprocess.Popen([os.path.join(WORKLOADS, "offcpu_wait"), "-g", go, "-d", str(RUN_S),
                              "-o", truth_path, "-f", os.path.join(self.dir, "data")]
                             + list(wargs),
                             stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, **(env or {})))
        try:
            self.assertTrue(w.stdout.readline().startswith("ready"))
            before = link_ids()
            cap = subprocess.Popen([PROFCAP, "capture", "--off-cpu", "-p", str(w.pid),
                                    "--seconds", str(RUN_S + 6), "-o", out] + extra,
                                   stderr=subprocess.PIPE, text=True,
                                   env=dict(os.environ, **(penv or {})))
            attached(before)
            open(go, "w").close()
            self.assertEqual(w.stdout.readline().strip(), "done")
            w.kill()
            _, err = cap.communicate(timeout=60)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            if w.poll() is None:
                w.kill()
            w.wait()
        with open(truth_path) as f:
            return json.load(f), out, err

    def test_blocked_time_matches_truth(self):
        """The default route: task works on Linux >= 6.18 (the one object's
        task-work program, chosen at load time), else rseq_update."""
        truth, out, err = self.capture(["-v"])
        tw = "completed by task works" in err
        print("# waits completed by " + ("task works" if tw else "rseq_update / sys_exit"))
        if kernel_at_least(6, 18):
            self.assertTrue(tw, "Linux >= 6.18 has task works: " + err[-2000:])
        self.check_truth(truth, out, err)

    def test_rseq_route(self):
        """Waits completed at rseq_update (the route of kernels before task
        works; PROFCAP_OFFCPU_TASKWORK=0 takes it here too)."""
        truth, out, err = self.capture(["-v"], penv={"PROFCAP_OFFCPU_TASKWORK": "0"})
        self.assertNotIn("completed by task works", err)
        self.check_truth(truth, out, err)

    def test_without_rseq(self):
        """Threads without rseq (here glibc told not to register it): on the
        rseq_update route their waits cannot end there, so the first one
        makes profcap attach sys_exit too; task works need neither. The
        times match the truth on both routes."""
        env = {"GLIBC_TUNABLES": "glibc.pthread.rseq=0"}
        truth, out, err = self.capture(["-v"], env=env, penv={"PROFCAP_OFFCPU_TASKWORK": "0"})
        self.assertIn("a thread without rseq waited", err)
        self.check_truth(truth, out, err)
        truth, out, err = self.capture(["-v"], env=env)
        self.assertNotIn("a thread without rseq waited", err)
        self.check_truth(truth, out, err)

    def test_thread_churn(self):
        """Short-lived threads one after the other, each blocking 300 us:
        thread slots freed at exit, IDs never seen before, some sharing a
        slot with the long-lived threads. Their time and everyone else's
        still match the truth."""
        truth, out, err = self.capture(["-v"], wargs=["-c"])
        print(f"# {truth['churn_threads']} short-lived threads")
        self.assertGreater(truth["churn_threads"], 500)
        # A counter per thread: thousands of threads a second must fit.
        self.assertNotRegex(err, r"off-CPU waits? lost")
        self.check_truth(truth, out, err, FUNCS + ("wait_churn",))

    def check_truth(self, truth, out, err, funcs=FUNCS):
        ok, msg = check_conformance(out)
        self.assertTrue(ok, msg)
        res = decode(out)["resources"]
        prof = {r["profile"].sample_type.type_strindex: r for r in res}
        strings = decode(out)["data"].dictionary.string_table
        types = {strings[r["profile"].sample_type.type_strindex]: r for r in res}
        self.assertIn("off_cpu", types, err)
        self.assertIn("samples", types, err)
        off = types["off_cpu"]
        p = off["profile"]
        self.assertEqual(strings[p.sample_type.unit_strindex], "nanoseconds")
        self.assertEqual(strings[p.period_type.type_strindex], "context_switch")
        self.assertEqual(strings[p.period_type.unit_strindex], "count")
        self.assertEqual(p.period, 1)
        got = {f: sum(s["value"] for s in off["samples"] if has_fn(s, f)) / 1e9 for f in funcs}
        for f in funcs:
            print(f"# {f}: truth {truth[f]:.3f} s, profile {got[f]:.3f} s "
                  f"({100 * (got[f] - truth[f]) / truth[f]:+.1f} %)")
        # Waits below the threshold are counted, not profiled (fdatasync has
        # many): the summary's total of them widens the lower bound.
        m = re.search(r"\(([0-9.]+) s\) shorter only counted", err)
        short_s = float(m.group(1)) if m else 0.0
        for f in funcs:
            self.assertLess(got[f], 1.10 * truth[f], f)
            self.assertGreater(got[f], 0.90 * truth[f] - short_s, f)
        burn = sum(s["value"] for s in off["samples"] if has_fn(s, "burn")) / 1e9
        print(f"# burn: {burn:.4f} s off-CPU, {truth['burn_cpu']:.3f} s on CPU")
        self.assertLess(burn, 0.02 * RUN_S)
        # States: nanosleep/pipe/mutex are interruptible sleeps, fdatasync waits on the disk.
        states = {}
        for s in off["samples"]:
            for f in FUNCS:
                if has_fn(s, f):
                    st = s["attrs"].get("profcap.off_cpu.state")
                    states.setdefault(f, {}).setdefault(st, 0)
                    states[f][st] += s["value"]
                    self.assertGreaterEqual(s["attrs"].get("profcap.off_cpu.switches", 0), 1)
        for f in ("wait_sleep", "wait_pipe", "wait_mutex"):
            self.assertEqual(max(states[f], key=states[f].get), "interruptible", states[f])
        self.assertEqual(max(states["wait_fsync"], key=states["wait_fsync"].get),
                         "uninterruptible", states["wait_fsync"])
        # Kernel stacks say where in the kernel they blocked.
        sleep_kernel = [f[0] for s in off["samples"] if has_fn(s, "wait_sleep")
                        for f in s["frames"] if f[1] == "kernel"]
        self.assertTrue(any("nanosleep" in n for n in sleep_kernel), sleep_kernel[:10])

    def test_threshold_and_report(self):
        # Waits of 8 ms fall below a 50 ms threshold: only counted, not in the
        # profile (but for those a loaded machine wakes more than 42 ms late).
        truth, out, err = self.capture(["--off-cpu-threshold", "50ms"])
        res = decode(out)["resources"]
        strings = decode(out)["data"].dictionary.string_table
        off = [r for r in res if strings[r["profile"].sample_type.type_strindex] == "off_cpu"]
        sleep = sum(s["value"] for r in off for s in r["samples"] if has_fn(s, "wait_sleep"))
        self.assertLess(sleep / 1e9, 0.2 * truth["wait_sleep"])
        # ... but counted, with their time (the slots' counters, summed).
        m = re.search(r"(\d+) \(([0-9.]+) s\) shorter only counted", err)
        self.assertTrue(m, err)
        print(f"# short waits: {m.group(1)}, {m.group(2)} s; sleep truth {truth['wait_sleep']:.3f} s")
        self.assertGreater(int(m.group(1)), 100)
        self.assertGreater(float(m.group(2)), 0.8 * truth["wait_sleep"])
        # report/convert pick the off-CPU profile with --type off_cpu.
        r = run_profcap(["report", "--type", "off_cpu", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("off_cpu", r.stdout)
        folded = os.path.join(self.dir, "off.folded")
        r = run_profcap(["convert", "--type", "off_cpu", "--to", "folded", out, "-o", folded])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run_profcap(["report", "--type", "nosuch", out])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("off_cpu", r.stderr)

    def test_no_cpu_sample(self):
        """A process that only sleeps gives no CPU sample: the capture's CPU
        type is an empty Profile, so the checker's orphan check passes."""
        out = os.path.join(self.dir, "sleep.pb")
        r = run_profcap(["capture", "--off-cpu", "-F", "1", "-o", out, "--", "/bin/sleep", "1.5"])
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, msg = check_conformance(out)
        self.assertTrue(ok, msg)
        d = decode(out)
        strings = d["data"].dictionary.string_table
        types = [strings[r["profile"].sample_type.type_strindex] for r in d["resources"]]
        self.assertEqual(types, ["samples", "off_cpu"])  # in the model's order
        # Unasked, report shows the type that holds samples: the waits.
        r = run_profcap(["report", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("showing off_cpu", r.stderr)
        self.assertIn("hrtimer_nanosleep", r.stdout)

    def test_bad_threshold(self):
        r = run_profcap(["capture", "--off-cpu-threshold", "soon", "--seconds", "1"])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("--off-cpu-threshold", r.stderr)


if __name__ == "__main__":
    unittest.main()
