"""perf.data sample times placed on the wall clock by the file's clock data
(HEADER_CLOCK_DATA, written by `perf record -k CLOCK`). Recorded at test
time around a busy loop that prints the wall clock when it starts and ends:
- `-k monotonic`, `--clockid monotonic` and `-k realtime`: every sample's
  time (as `convert --to perf-script` writes it) lies within 10 ms of the
  loop's wall-clock span, and the first and last ones within 10 ms of its
  ends (a realtime recording is the case this host's clocks cannot place);
- the clock data is what places them: the same file with its wall-clock
  reading moved by one hour (as if recorded on another host) moves every
  sample time by exactly that hour;
- a file without clock data (perf's default clock) still reads, near the
  truth, and says once how its times were placed.
Needs perf, root (perf events)."""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

from capture_util import can_sample, run_profcap

OK, WHY = can_sample()
PERF = shutil.which("perf")
HZ = 999
SLACK_NS = 10 * 10**6
FEAT_CLOCK_DATA = 29

LOOP = r"""
import time
t0 = time.time_ns()
print("start", t0, flush=True)
end = t0 + 400 * 10**6
x = 0
while time.time_ns() < end:
    x += 1
print("end", time.time_ns(), flush=True)
"""

NOTE = "perf.data without clock data"


def script_times(text):
    """The time of each perf script record, in ns."""
    return [int(m.group(1)) * 10**9 + int(m.group(2))
            for m in re.finditer(r"^\S.* (\d+)\.(\d{9}): ", text, re.M)]


def clock_data_offset(data):
    """File offset of the HEADER_CLOCK_DATA section, or None."""
    data_off, data_size = struct.unpack_from("<QQ", data, 40)
    bits = struct.unpack_from("<4Q", data, 72)
    at = data_off + data_size
    for bit in range(256):
        if not bits[bit // 64] >> (bit % 64) & 1:
            continue
        off, _ = struct.unpack_from("<QQ", data, at)
        if bit == FEAT_CLOCK_DATA:
            return off
        at += 16
    return None


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(PERF, "perf is not installed (apt-get install linux-perf)")
class PerfClockTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-perfclock-")
        cls.loop = os.path.join(cls.dir, "loop.py")
        with open(cls.loop, "w") as f:
            f.write(LOOP)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def record(self, name, clock_args):
        path = os.path.join(self.dir, name + ".data")
        r = subprocess.run([PERF, "record", "-q", "-F", str(HZ), "-e", "cpu-clock"] +
                           clock_args + ["-o", path, "--", "/usr/bin/python3", self.loop],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            self.skipTest("perf record failed: " + r.stderr.strip()[-200:])
        span = {w[0]: int(w[1]) for w in (ln.split() for ln in r.stdout.splitlines()) if w}
        return path, span["start"], span["end"]

    def times(self, path):
        out = path + ".perf.txt"
        r = run_profcap(["convert", path, "--to", "perf-script", "-o", out], timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            t = sorted(script_times(f.read()))
        self.assertGreater(len(t), 100, path)
        return t, r.stderr

    def check_near(self, t, start, end, what):
        self.assertGreaterEqual(t[0], start - SLACK_NS, what)
        self.assertLessEqual(t[-1], end + SLACK_NS, what)
        self.assertLess(abs(t[0] - start), SLACK_NS, what)
        self.assertLess(abs(t[-1] - end), SLACK_NS, what)

    def test_clock_data_places_times(self):
        for name, args in (("mono", ["-k", "monotonic"]), ("clockid", ["--clockid", "monotonic"]),
                           ("realtime", ["-k", "realtime"])):
            with self.subTest(name):
                path, start, end = self.record(name, args)
                t, err = self.times(path)
                self.check_near(t, start, end, name)
                self.assertNotIn(NOTE, err)

    def test_another_host_clock(self):
        path, start, end = self.record("moved", ["-k", "monotonic"])
        t, _ = self.times(path)
        with open(path, "rb") as f:
            data = bytearray(f.read())
        off = clock_data_offset(data)
        self.assertIsNotNone(off, "perf record -k wrote no clock data")
        wall, = struct.unpack_from("<Q", data, off + 8)
        hour = 3600 * 10**9
        struct.pack_into("<Q", data, off + 8, wall + hour)
        moved = os.path.join(self.dir, "moved-host.data")
        with open(moved, "wb") as f:
            f.write(data)
        t2, _ = self.times(moved)
        self.assertEqual(len(t), len(t2))
        self.assertEqual([b - a for a, b in zip(t, t2)], [hour] * len(t))

    def test_without_clock_data(self):
        path, start, end = self.record("default", [])
        t, err = self.times(path)
        self.assertEqual(err.count(NOTE), 1, err)
        # perf's own clock strays from CLOCK_MONOTONIC by little
        self.assertLess(abs(t[0] - start), 50 * 10**6)


if __name__ == "__main__":
    unittest.main()
