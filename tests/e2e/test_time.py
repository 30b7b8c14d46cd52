"""Time in profiles read from perf.data: a workload of two threads pinned to
CPUs 0 and 1 spends 1 s in phase_a, then 1 s in phase_b (wall-clock times
of the switch printed by the workload). Recorded at test time with
`perf record -g --sample-cpu -k monotonic`, then:
- `report --time` of each phase's window (epoch ns, clock time, relative)
  shows that phase's function >= 95 %, the same from perf.data and from
  its OTLP conversion (which the official checker accepts, timestamps and
  CPU attribute included);
- every sample's CPU is its thread's pinned CPU; sample times fall on the
  right side of the switch within one sampling period;
- `report --timeline` gives each thread its half of every interval, and
  `--time` / `--timeline` of a profile without time fail with one line;
- `convert --to perf-script` reads back through profcap's perf script
  reader with the same shares and times; `convert --to speedscope` is a
  valid speedscope document: structure checks, and speedscope's own
  file-format-schema.json from its npm package (`npm install speedscope`
  into a temporary directory; the package ships the built viewer, not an
  importer node can load) when npm is there (python3-jsonschema is
  installed with apt-get when missing).
Needs perf, gcc, root and 2 CPUs."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from capture_util import can_sample, check_conformance, run_profcap

OK, WHY = can_sample()
PERF = shutil.which("perf")
GCC = shutil.which("gcc")
HZ = 499
PERIOD_NS = 1e9 / HZ

PHASE_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
volatile uint64_t sink;
__attribute__((noinline)) void phase_a(double until) { while (mono() < until) sink++; }
__attribute__((noinline)) void phase_b(double until) { while (mono() < until) sink += 2; }
static double t0;
static void *run(void *arg)
{
	long cpu = (long)arg;
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
	printf("tid %ld cpu %ld\n", (long)syscall(SYS_gettid), cpu);
	phase_a(t0 + 1.0);
	phase_b(t0 + 2.0);
	return 0;
}
int main(void)
{
	pthread_t a, b;
	struct timespec w, m;
	clock_gettime(CLOCK_REALTIME, &w);
	clock_gettime(CLOCK_MONOTONIC, &m);
	t0 = m.tv_sec + m.tv_nsec / 1e9 + 0.05;
	/* the wall-clock time phase_b starts, in ns since the epoch */
	printf("start %lld\n", (long long)w.tv_sec * 1000000000LL + w.tv_nsec + 50000000LL);
	fflush(stdout);
	pthread_create(&a, 0, run, (void *)0);
	pthread_create(&b, 0, run, (void *)1);
	pthread_join(a, 0);
	pthread_join(b, 0);
	return 0;
}
"""


def parse_script(text):
    """perf script records: (comm, pid, tid, cpu or None, time_ns, frames)."""
    recs = []
    for block in text.split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        m = re.match(r"^(.*?) (\d+)/(\d+) (?:\[(\d+)\] )?(\d+)\.(\d{9}): ", lines[0])
        if not m:
            continue
        frames = [ln.split()[1] for ln in lines[1:]]
        recs.append((m.group(1), int(m.group(2)), int(m.group(3)),
                     None if m.group(4) is None else int(m.group(4)),
                     int(m.group(5)) * 10**9 + int(m.group(6)), frames))
    return recs


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(PERF, "perf is not installed (apt-get install linux-perf)")
@unittest.skipUnless(GCC, "gcc is not installed")
@unittest.skipUnless((os.cpu_count() or 1) >= 2, "needs 2 CPUs")
class TimeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-time-")
        src = os.path.join(cls.dir, "phase.c")
        cls.exe = os.path.join(cls.dir, "phase")
        with open(src, "w") as f:
            f.write(PHASE_C)
        subprocess.run([GCC, "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", src, "-o",
                        cls.exe], check=True, timeout=120)
        cls.data = os.path.join(cls.dir, "phase.data")
        # -k monotonic: perf's default clock (sched_clock) may stray from
        # CLOCK_MONOTONIC by milliseconds, too much to hold times to one period
        r = subprocess.run([PERF, "record", "-q", "-g", "--sample-cpu", "-k", "monotonic", "-F",
                            str(HZ), "-e", "cpu-clock", "-o", cls.data, "--", cls.exe],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise unittest.SkipTest("perf record failed: " + r.stderr.strip()[-200:])
        cls.switch = cls.start = None
        cls.cpu_of = {}
        for line in r.stdout.splitlines():
            w = line.split()
            if w[0] == "start":
                cls.start = int(w[1])
            elif w[0] == "tid":
                cls.cpu_of[int(w[1])] = int(w[3])
        cls.switch = cls.start + 10**9
        cls.pb = os.path.join(cls.dir, "phase.pb")
        r = run_profcap(["convert", cls.data, "-o", cls.pb], timeout=300)
        assert r.returncode == 0, r.stderr
        cls.script = os.path.join(cls.dir, "phase.perf.txt")
        r = run_profcap(["convert", cls.pb, "--to", "perf-script", "-o", cls.script])
        assert r.returncode == 0, r.stderr
        with open(cls.script) as f:
            cls.recs = parse_script(f.read())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def report(self, *args):
        r = run_profcap(["report", "--json", "--top", "0"] + list(args), timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def inclusive(self, rep, fn):
        return sum(row["inclusive_share"] for row in rep["top"] if row["name"] == fn)

    def test_checker_accepts(self):
        ok, out = check_conformance(self.pb)
        self.assertTrue(ok, out)

    def test_phase_windows(self):
        s, w = self.switch, 10**9
        windows = {
            "phase_a": [f"{s - w + 10**8}-{s - 10**8}", "+0.1s-+0.85s"],
            "phase_b": [f"{s + 10**8}-{s + w - 10**8}", "+1.15-+1.9"],
        }
        for fn, ranges in windows.items():
            for path in (self.data, self.pb):
                for rng in ranges:
                    rep = self.report(path, "--time", rng)
                    self.assertGreater(rep["total"], 50, (fn, path, rng))
                    self.assertGreaterEqual(self.inclusive(rep, fn), 0.95, (fn, path, rng))
        # a clock time (local zone) reads the same as epoch nanoseconds
        clock = subprocess.run(["date", "-d", f"@{(s + 2 * 10**8) / 1e9:.3f}", "+%H:%M:%S.%3N"],
                               capture_output=True, text=True).stdout.strip()
        clock2 = subprocess.run(["date", "-d", f"@{(s + 8 * 10**8) / 1e9:.3f}", "+%H:%M:%S.%3N"],
                                capture_output=True, text=True).stdout.strip()
        rep = self.report(self.pb, "--time", f"{clock}-{clock2}")
        self.assertGreaterEqual(self.inclusive(rep, "phase_b"), 0.95)

    def test_cpus_and_times(self):
        self.assertEqual(len(self.cpu_of), 2)
        n = 0
        for comm, pid, tid, cpu, t, frames in self.recs:
            if tid not in self.cpu_of:
                continue
            n += 1
            self.assertEqual(cpu, self.cpu_of[tid], (tid, t))
            if "phase_a" in frames:
                self.assertLess(t, self.switch + PERIOD_NS, frames)
            if "phase_b" in frames:
                self.assertGreater(t, self.switch - PERIOD_NS, frames)
        self.assertGreater(n, 200)

    def test_timeline(self):
        r = run_profcap(["report", self.pb, "--timeline", "--by", "thread", "--interval",
                         "500ms", "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        tl = json.loads(r.stdout)
        self.assertEqual(tl["by"], "thread")
        inner = tl["intervals"][1:-1]  # the edges are partial
        self.assertGreaterEqual(len(inner), 2)
        for iv in inner:
            shares = {row["tid"]: row["share"] for row in iv["rows"] if row["tid"] in self.cpu_of}
            self.assertEqual(len(shares), 2, iv)
            for share in shares.values():
                self.assertAlmostEqual(share, 0.5, delta=0.2)
        r = run_profcap(["report", self.pb, "--timeline"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Timeline of", r.stdout)

    def test_errors(self):
        r = run_profcap(["report", self.pb, "--time", "+10s-+11s"])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("the profile spans", r.stderr)
        pprof = os.path.join(self.dir, "phase.pprof")
        r = run_profcap(["convert", self.pb, "-o", pprof])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sample timestamps", r.stderr)
        for args in (["--time", "+0-+1"], ["--timeline"]):
            r = run_profcap(["report", pprof] + args)
            self.assertEqual(r.returncode, 1)
            self.assertIn("captured without timestamps: capture with --timestamps", r.stderr)

    def test_perf_script_reads_back(self):
        back = os.path.join(self.dir, "back.pb")
        r = run_profcap(["convert", self.script, "-o", back])
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, out = check_conformance(back)
        self.assertTrue(ok, out)
        a, b = self.report(self.pb), self.report(back)
        self.assertEqual(a["total"], b["total"])
        for fn in ("phase_a", "phase_b"):
            self.assertAlmostEqual(self.inclusive(a, fn), self.inclusive(b, fn), places=3)
        again = os.path.join(self.dir, "again.perf.txt")
        r = run_profcap(["convert", back, "--to", "perf-script", "-o", again])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(again) as f:
            recs = parse_script(f.read())
        self.assertEqual(sorted((tid, cpu, t) for _, _, tid, cpu, t, _ in recs),
                         sorted((tid, cpu, t) for _, _, tid, cpu, t, _ in self.recs))

    def test_speedscope(self):
        out = os.path.join(self.dir, "phase.speedscope.json")
        r = run_profcap(["convert", self.pb, "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["$schema"], "https://www.speedscope.app/file-format-schema.json")
        frames = doc["shared"]["frames"]
        names = {f["name"] for f in frames}
        self.assertTrue({"phase_a", "phase_b"} <= names)
        total = 0
        for prof in doc["profiles"]:
            self.assertEqual(prof["type"], "sampled")
            self.assertEqual(prof["unit"], "nanoseconds")
            self.assertEqual(len(prof["samples"]), len(prof["weights"]))
            self.assertEqual(prof["endValue"] - prof["startValue"], sum(prof["weights"]))
            for st in prof["samples"]:
                self.assertTrue(all(0 <= i < len(frames) for i in st))
            self.assertTrue(all(0 < w <= PERIOD_NS + 1 for w in prof["weights"]))
            total += len(prof["samples"])
        self.assertEqual(total, self.report(self.pb)["total"])
        self.check_speedscope_schema(doc)

    def check_speedscope_schema(self, doc):
        npm = shutil.which("npm")
        try:
            import jsonschema
        except ImportError:
            # Debian's package, installed here the first time (root runs the suite)
            subprocess.run(["apt-get", "install", "-y", "-q", "python3-jsonschema"],
                           capture_output=True, timeout=300)
            try:
                import jsonschema
            except ImportError:
                jsonschema = None
        if not npm or not jsonschema:
            self.skipTest("speedscope's schema needs npm and python3-jsonschema")
        d = os.path.join(self.dir, "npm")
        os.makedirs(d, exist_ok=True)
        r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", d, "speedscope"],
                           capture_output=True, text=True, timeout=300)
        schema = os.path.join(d, "node_modules", "speedscope", "dist", "release",
                              "file-format-schema.json")
        if r.returncode or not os.path.exists(schema):
            self.skipTest("npm install speedscope failed: " + r.stderr.strip()[-200:])
        with open(schema) as f:
            jsonschema.validate(doc, json.load(f))
        bad = json.loads(json.dumps(doc))
        bad["profiles"][0]["unit"] = "parsecs"
        with self.assertRaises(jsonschema.ValidationError):
            with open(schema) as f:
                jsonschema.validate(bad, json.load(f))


if __name__ == "__main__":
    unittest.main()
