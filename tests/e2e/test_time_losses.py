"""Samples whose time was lost (capture --timestamps with the times ring
full), forced with the test switch PROFCAP_TIMES_RING=4096 (the smallest
ring: a page) on the phase workload of test_time.py (two threads, 1 s in
phase_a then 1 s in phase_b) sampled at 999 Hz:
- the capture's stderr summary says how many samples kept their time,
  how many did not and how often the ring was full;
- the file counts them (profcap.samples.untimed), `report` shows them in
  its header (text and JSON), and the official checker accepts the file;
- the untimed samples stay in the profile: phase_a and phase_b still hold
  half of it each, and the total is the samples taken;
- every sample keeps a time (the official checker's sample shapes): those
  whose own was lost at the time of the drain that read them, marked
  profcap.time.lost, and `report --timeline` marks the intervals holding
  them (text and JSON).
A capture with the default ring on the same workload loses none.
Needs root, gcc and 2 CPUs."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from capture_util import can_sample, check_conformance, decode, run_profcap
from test_time import PHASE_C

OK, WHY = can_sample()
GCC = shutil.which("gcc")
HZ = 999
TINY = {"PROFCAP_TIMES_RING": "4096"}


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(GCC, "gcc is not installed")
@unittest.skipUnless((os.cpu_count() or 1) >= 2, "needs 2 CPUs")
class TimeLossesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-timeloss-")
        src = os.path.join(cls.dir, "phase.c")
        cls.exe = os.path.join(cls.dir, "phase")
        with open(src, "w") as f:
            f.write(PHASE_C)
        subprocess.run([GCC, "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", src, "-o",
                        cls.exe], check=True, timeout=120)
        cls.pb = os.path.join(cls.dir, "tiny.pb")
        cls.cap = run_profcap(["capture", "--timestamps", "-F", str(HZ), "-o", cls.pb, "--",
                               cls.exe], timeout=300, env=TINY)
        assert cls.cap.returncode == 0, cls.cap.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def report_json(self, *args):
        r = run_profcap(["report", "--json", "--top", "0", self.pb] + list(args), timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def untimed_attr(self):
        """The profcap.samples.untimed attribute summed over the file's Profiles."""
        d = decode(self.pb)
        dic = d["data"].dictionary
        total = 0
        for r in d["resources"]:
            for i in r["profile"].attribute_indices:
                a = dic.attribute_table[i]
                if dic.string_table[a.key_strindex] == "profcap.samples.untimed":
                    total += a.value.int_value
        return total

    def test_reported(self):
        err = self.cap.stderr
        self.assertIn("kept with their time and CPU", err)
        self.assertIn("lost their time", err)
        self.assertIn("the times ring was full", err)
        untimed = self.report_json()["capture"]["untimed_samples"]
        self.assertGreater(untimed, 100)
        self.assertEqual(self.untimed_attr(), untimed)
        text = run_profcap(["report", self.pb]).stdout
        self.assertIn("time lost   %d samples" % untimed, text)
        ok, out = check_conformance(self.pb)
        self.assertTrue(ok, out)

    def test_shares_stay_right(self):
        rep = self.report_json()
        share = {fn: sum(r["inclusive_share"] for r in rep["top"] if r["name"] == fn)
                 for fn in ("phase_a", "phase_b")}
        for fn, s in share.items():
            self.assertGreater(s, 0.35, share)
            self.assertLess(s, 0.65, share)

    def test_timeline_marks_intervals(self):
        untimed = self.report_json()["capture"]["untimed_samples"]
        r = run_profcap(["report", self.pb, "--timeline", "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        tl = json.loads(r.stdout)
        self.assertEqual(tl["untimed"], 0)  # every sample has a time
        marked = [iv for iv in tl["intervals"] if iv["time_lost"]]
        self.assertTrue(marked)
        self.assertEqual(sum(iv["time_lost"] for iv in marked), untimed)
        self.assertLess(len(marked), len(tl["intervals"]))
        r = run_profcap(["report", self.pb, "--timeline"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count(" with time lost]"), len(marked))

    def test_default_ring_loses_none(self):
        pb = os.path.join(self.dir, "default.pb")
        r = run_profcap(["capture", "--timestamps", "-F", str(HZ), "-o", pb, "--", self.exe],
                        timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("kept with their time and CPU", r.stderr)
        self.assertNotIn("lost their time", r.stderr)


if __name__ == "__main__":
    unittest.main()
