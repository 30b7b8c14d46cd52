"""End-to-end tests of the quick start: system-wide, sampling
starts with a small frame-pointer program while the table unwinder loads in
the background, then hands over (root: real BPF sampling)."""
import os
import re
import subprocess
import tempfile
import unittest

from capture_util import Workload, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


@unittest.skipUnless(OK, WHY)
class StartupTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "cpu.pb")

    def tearDown(self):
        self.tmp.cleanup()

    def capture(self, env=None):
        old = dict(os.environ)
        os.environ.update(env or {})
        try:
            with Workload("groundtruth") as w:
                c0 = cpu_seconds(w.pid)
                r = run_profcap(["capture", "-a", "-v", "-F", "99", "--seconds", "2",
                                 "--no-kernel", "-o", self.out])
                cpu = cpu_seconds(w.pid) - c0
        finally:
            os.environ.clear()
            os.environ.update(old)
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, report = check_conformance(self.out)
        self.assertTrue(ok, report)
        res = [x for x in decode(self.out)["resources"] if x["attrs"]["process.pid"] == w.pid]
        n = sum(s["value"] for x in res for s in x["samples"])
        return r, n, cpu

    def test_hand_over_counts_each_tick_once(self):
        # Both programs run on the same perf events and the start-up one
        # tail-calls the unwinder once it is loaded: a tick counted twice
        # would show as up to twice the samples the workload's CPU time
        # allows. The CPU time is measured around the whole capture (start-up
        # included), so it bounds the samples from above.
        r, n, cpu = self.capture()
        self.assertIn("handed over", r.stderr)
        m = re.search(r"profcap_quick: \d+ instructions, (\d+) verified", r.stderr)
        self.assertTrue(m, r.stderr)
        self.assertGreater(cpu, 0.3, "the workload got too little CPU to judge")
        self.assertLessEqual(n, 1.15 * cpu * 99 + 5, f"{n} samples for {cpu:.2f} CPU s\n{r.stderr}")
        self.assertGreater(n, 0.4 * cpu * 99, f"{n} samples for {cpu:.2f} CPU s\n{r.stderr}")
        self.assertIn("unwind tables:", r.stderr)

    def test_quick_start_off(self):
        r, n, cpu = self.capture({"PROFCAP_QUICK_START": "0"})
        self.assertNotIn("handed over", r.stderr)
        self.assertNotIn("profcap_quick", r.stderr)
        self.assertLessEqual(n, 1.15 * cpu * 99 + 5, f"{n} samples for {cpu:.2f} CPU s")

    def test_first_sample_is_reported(self):
        r, _, _ = self.capture()
        m = re.search(r"first sample at CLOCK_MONOTONIC (\d+) ns", r.stderr)
        self.assertTrue(m and int(m.group(1)) > 0, r.stderr)

    def test_first_samples_keep_their_stacks(self):
        # Linux >= 6.1: the sample maps allocate as stacks are added, from
        # per-CPU caches the kernel fills with one stack entry at creation.
        # Each CPU's first sample stores up to two stacks in NMI context;
        # unprimed, one 1 s capture in four lost one under load ("stacks not
        # stored"). With every CPU busy, twelve short captures lose none.
        burners = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                   for _ in range(os.cpu_count() or 1)]
        try:
            for i in range(12):
                r = run_profcap(["capture", "-a", "-F", "99", "--seconds", "0.3", "-o",
                                 self.out])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotRegex(r.stderr, r"\d+ stacks? not stored", f"capture {i}")
        finally:
            for b in burners:
                b.kill()
                b.wait()


if __name__ == "__main__":
    unittest.main()
