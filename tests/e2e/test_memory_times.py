"""Memory profiles with times (capture --memory --timestamps): a workload
allocates from site_a for 1 s, then from site_b for 1 s (it prints the
wall-clock time of the switch). Then:
- `report --time` of each second's window (epoch ns, and relative to the
  first sample) shows that second's site at >= 95 % of alloc_space and of
  alloc_objects;
- the alloc profiles carry a timestamp per sampled allocation and its
  CPU (cpu.logical_number), totals within the untimed ones, and the
  official checker accepts the file;
- in-use profiles stay a snapshot of the window's end;
- with the smallest times ring (PROFCAP_TIMES_RING=4096) most allocations
  lose their time: the summary says so, they keep the drain's time
  (marked profcap.time.lost, so the checker accepts the file) and the
  shares of the whole capture stay right.
Needs root (uprobes), gcc."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from capture_util import can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
CC = shutil.which("gcc") or shutil.which("cc")

PHASES_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
void *volatile keep;
__attribute__((noinline)) void site_a(double until)
{
	while (mono() < until) {
		keep = malloc(4096);
		free(keep);
	}
}
__attribute__((noinline)) void site_b(double until)
{
	while (mono() < until) {
		keep = malloc(4096);
		free(keep);
	}
}
int main(void)
{
	struct timespec w;
	double t0;

	clock_gettime(CLOCK_REALTIME, &w);
	t0 = mono() + 0.2; /* profcap describes the process meanwhile */
	printf("switch %lld\n", (long long)w.tv_sec * 1000000000LL + w.tv_nsec + 1200000000LL);
	fflush(stdout);
	while (mono() < t0)
		;
	site_a(t0 + 1.0);
	site_b(t0 + 2.0);
	return 0;
}
"""


@unittest.skipUnless(OK and CC, WHY if not OK else "no C compiler")
class MemoryTimesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-memtimes-")
        src = os.path.join(cls.dir, "phases.c")
        cls.exe = os.path.join(cls.dir, "phases")
        with open(src, "w") as f:
            f.write(PHASES_C)
        subprocess.run([CC, "-O1", "-g", "-fno-omit-frame-pointer", src, "-o", cls.exe],
                       check=True, timeout=120)
        cls.pb = os.path.join(cls.dir, "mem.pb")
        r = run_profcap(["capture", "--memory", "--memory-rate", "64KiB", "--timestamps",
                         "-o", cls.pb, "--", cls.exe], timeout=300)
        assert r.returncode == 0, r.stderr
        cls.stderr = r.stderr
        cls.switch = int(r.stdout.split()[1])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def report(self, *args):
        r = run_profcap(["report", "--json", "--top", "0", self.pb] + list(args), timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def share(self, rep, fn):
        return sum(row["inclusive_share"] for row in rep["top"] if row["name"] == fn)

    def test_windows(self):
        s, w = self.switch, 10**9
        windows = {"site_a": f"{s - w + 10**8}-{s - 10**8}",
                   "site_b": f"{s + 10**8}-{s + w - 10**8}"}
        for typ in ("alloc_space", "alloc_objects"):
            for fn, rng in windows.items():
                rep = self.report("--type", typ, "--time", rng)
                self.assertGreater(rep["total"], 0, (typ, fn))
                self.assertGreaterEqual(self.share(rep, fn), 0.95, (typ, fn, rep["top"][:4]))
        # relative to the first sample: the first half is site_a's
        rep = self.report("--type", "alloc_space", "--time", "+0.1s-+0.8s")
        self.assertGreaterEqual(self.share(rep, "site_a"), 0.95)

    def test_otlp_times_and_cpus(self):
        ok, out = check_conformance(self.pb)
        self.assertTrue(ok, out)
        d = decode(self.pb)
        strings = d["data"].dictionary.string_table
        timed = {}
        for r in d["resources"]:
            t = strings[r["profile"].sample_type.type_strindex]
            for raw, smp in zip(r["profile"].samples, r["samples"]):
                timed.setdefault(t, []).append((len(raw.timestamps_unix_nano), smp))
        for t in ("alloc_space", "alloc_objects"):
            self.assertIn(t, timed)
            with_time = [s for n, s in timed[t] if n]
            self.assertTrue(with_time, t)
            for s in with_time:
                self.assertIn("cpu.logical_number", s["attrs"])
        for t in ("inuse_space", "inuse_objects"):
            for n, _ in timed.get(t, []):
                self.assertFalse(n, t)

    def test_ring_full(self):
        pb = os.path.join(self.dir, "tiny.pb")
        r = run_profcap(["capture", "--memory", "--memory-rate", "64KiB", "--timestamps",
                         "-o", pb, "--", self.exe], timeout=300, env={"PROFCAP_TIMES_RING": "4096"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"lost their time .*\(([1-9]\d*) of them sampled allocations\)")
        ok, out = check_conformance(pb)
        self.assertTrue(ok, out)
        r = run_profcap(["report", "--json", "--top", "0", "--type", "alloc_space", pb])
        self.assertEqual(r.returncode, 0, r.stderr)
        rep = json.loads(r.stdout)
        self.assertGreater(rep["capture"]["untimed_samples"], 0)
        for fn in ("site_a", "site_b"):
            self.assertGreater(self.share(rep, fn), 0.35, rep["top"][:4])
            self.assertLess(self.share(rep, fn), 0.65, rep["top"][:4])


if __name__ == "__main__":
    unittest.main()
