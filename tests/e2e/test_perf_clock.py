"""perf.data sample times placed on the wall clock by the file's clock data
(HEADER_CLOCK_DATA, written by `perf record -k CLOCK`). Recorded at test
time around spin(), a C loop that spins 400 ms of wall time and notes each
millisecond (CLOCK_REALTIME) it ran in:
- `-k monotonic`, `--clockid monotonic` and `-k realtime`: every sample in
  spin() (as `convert --to perf-script` writes it) lies within 10 ms of a
  millisecond spin() ran in (a realtime recording is the case this host's
  clocks cannot place);
- the clock data is what places them: the same file with its wall-clock
  reading moved by one hour (as if recorded on another host) moves every
  sample time by exactly that hour;
- a file without clock data (perf's default clock) still reads, near the
  truth, and says once how its times were placed.
Needs perf, gcc and root (perf events)."""
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
GCC = shutil.which("gcc")
HZ = 999
SLACK_NS = 10 * 10**6
FEAT_CLOCK_DATA = 29

SPIN_C = r"""
#include <stdio.h>
#include <time.h>

#define MS 400
static long long wall(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static unsigned char ran[MS];
/* Spins for MS milliseconds of wall time, noting each millisecond it ran in. */
__attribute__((noinline)) void spin(long long start)
{
	long long now;
	while ((now = wall()) < start + MS * 1000000LL)
		ran[(now - start) / 1000000] = 1;
}
int main(void)
{
	long long start = wall();
	int i;

	spin(start);
	printf("start %lld\nran", start);
	for (i = 0; i < MS; i++)
		if (ran[i])
			printf(" %d", i);
	printf("\n");
	return 0;
}
"""

NOTE = "perf.data without clock data"


def script_times(text, fn="spin|main"):
    """The time of each perf script record whose stack holds @fn (main: a
    frame-pointer walk from clock_gettime() skips spin()), in ns."""
    out = []
    for block in text.split("\n\n"):
        m = re.search(r"^\S.* (\d+)\.(\d{9}): ", block, re.M)
        if m and re.search(r"\s(%s)\s" % fn, block):
            out.append(int(m.group(1)) * 10**9 + int(m.group(2)))
    return out


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
@unittest.skipUnless(GCC, "gcc is not installed")
class PerfClockTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-perfclock-")
        src = os.path.join(cls.dir, "spin.c")
        cls.exe = os.path.join(cls.dir, "spin")
        with open(src, "w") as f:
            f.write(SPIN_C)
        subprocess.run([GCC, "-O1", "-g", "-fno-omit-frame-pointer", src, "-o", cls.exe],
                       check=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def record(self, name, clock_args):
        path = os.path.join(self.dir, name + ".data")
        r = subprocess.run([PERF, "record", "-q", "-g", "-F", str(HZ), "-e", "cpu-clock"] +
                           clock_args + ["-o", path, "--", self.exe],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            self.skipTest("perf record failed: " + r.stderr.strip()[-200:])
        words = dict((ln.split()[0], ln.split()[1:]) for ln in r.stdout.splitlines() if ln)
        start = int(words["start"][0])
        return path, start, [start + int(ms) * 10**6 for ms in words["ran"]]

    def times(self, path):
        out = path + ".perf.txt"
        r = run_profcap(["convert", path, "--to", "perf-script", "-o", out], timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            t = sorted(script_times(f.read()))
        self.assertGreater(len(t), 20, path)
        return t, r.stderr

    def check_near(self, t, ran, what):
        """Each sample of the loop within 10 ms of a millisecond spin() saw
        itself run in (the CPU clock samples only a running thread, so
        this holds on a loaded host too)."""
        far = [x for x in t if min(abs(x - (r + 500000)) for r in ran) > SLACK_NS]
        self.assertFalse(far, "%s: %d of %d samples more than 10 ms from the loop's runs"
                         % (what, len(far), len(t)))

    def test_clock_data_places_times(self):
        for name, args in (("mono", ["-k", "monotonic"]), ("clockid", ["--clockid", "monotonic"]),
                           ("realtime", ["-k", "realtime"])):
            with self.subTest(name):
                path, start, ran = self.record(name, args)
                t, err = self.times(path)
                self.check_near(t, ran, name)
                self.assertNotIn(NOTE, err)

    def test_another_host_clock(self):
        path, _, _ = self.record("moved", ["-k", "monotonic"])
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
        path, start, ran = self.record("default", [])
        t, err = self.times(path)
        self.assertEqual(err.count(NOTE), 1, err)
        # perf's own clock strays from CLOCK_MONOTONIC by little
        self.assertLess(abs(t[0] - ran[0]), 50 * 10**6)


if __name__ == "__main__":
    unittest.main()
