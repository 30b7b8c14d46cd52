"""End-to-end tests of capture --timestamps (root: real BPF) against a
workload that knows its own schedule: two threads pinned to CPUs 0 and 1
spin in phase_a for a second, then in phase_b for a second, and print when
each phase began and ended (CLOCK_REALTIME). Every CPU sample must carry
its time and CPU: the CPUs match the pinning, each sample of a phase falls
within one sampling period of that phase's window, and each phase's window
holds its function (>= 95 %), read from the timestamps and, where `report`
slices by time, from `report --time`. Off-CPU: a thread that sleeps 200 ms
every 500 ms shows waits of that length at that rhythm. The official
checker passes on every output. The workload is C, built here with gcc."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
FREQ = 99
PERIOD_NS = 10**9 // FREQ

WORKLOAD = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static long long now_ns(int clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile unsigned long sink;

__attribute__((noinline)) void phase_a(long long end)
{
	while (now_ns(CLOCK_REALTIME) < end)
		sink++;
}

__attribute__((noinline)) void phase_b(long long end)
{
	while (now_ns(CLOCK_REALTIME) < end)
		sink += 2;
}

__attribute__((noinline)) void sleeper_nap(void)
{
	struct timespec ts = {0, 200000000};

	nanosleep(&ts, NULL);
}

static long long t0;
static pthread_barrier_t bar;

static void *worker(void *arg)
{
	int cpu = (int)(long)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	printf("thread %d %ld\n", cpu, (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_barrier_wait(&bar);
	phase_a(t0 + 1000000000LL);
	phase_b(t0 + 2000000000LL);
	return NULL;
}

static void *sleeper(void *arg)
{
	long long end = *(long long *)arg, next = now_ns(CLOCK_REALTIME);

	printf("sleeper %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	/* 300 ms on the CPU (phase-free spinning), then 200 ms asleep */
	while (next < end) {
		while (now_ns(CLOCK_REALTIME) < next + 300000000LL)
			sink += 3;
		sleeper_nap();
		next += 500000000LL;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double delay = argc > 1 ? atof(argv[1]) : 1.0, sleep_s = argc > 2 ? atof(argv[2]) : 0;
	pthread_t th[3];
	long long send;
	int i;

	pthread_barrier_init(&bar, NULL, 3);
	if (sleep_s > 0) {
		send = now_ns(CLOCK_REALTIME) + (long long)((delay + sleep_s) * 1e9);
		pthread_create(&th[2], NULL, sleeper, &send);
		pthread_join(th[2], NULL);
		return 0;
	}
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	/* Wait for the capture to be running, then the schedule. */
	usleep((useconds_t)(delay * 1e6));
	t0 = now_ns(CLOCK_REALTIME);
	printf("phase_a %lld %lld\nphase_b %lld %lld\n", t0, t0 + 1000000000LL,
	       t0 + 1000000000LL, t0 + 2000000000LL);
	fflush(stdout);
	pthread_barrier_wait(&bar);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
"""


def build_workload(d):
    src = os.path.join(d, "phases.c")
    exe = os.path.join(d, "phases")
    with open(src, "w") as f:
        f.write(WORKLOAD)
    r = subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", exe, src],
                       capture_output=True, text=True)
    return exe if r.returncode == 0 else None


def timed_samples(path, kind="samples"):
    """Every timed occurrence of the capture: dicts of tid, cpu, time (ns
    since the epoch), value, frames (function names), for the profiles
    whose sample type is @kind; and the untimed value."""
    d = decode(path)
    strings = d["data"].dictionary.string_table
    out, untimed = [], 0
    for r in d["resources"]:
        prof = r["profile"]
        if strings[prof.sample_type.type_strindex] != kind:
            continue
        for s, raw in zip(r["samples"], prof.samples):
            names = [f[0] for f in s["frames"]]
            ts = list(raw.timestamps_unix_nano)
            if not ts:
                untimed += s["value"]
                continue
            per = s["value"] // len(ts) if kind == "samples" else None
            vals = list(raw.values) if len(raw.values) == len(ts) else [per] * len(ts)
            for t, v in zip(ts, vals):
                out.append({"tid": s["attrs"].get("thread.id"), "cpu": s["attrs"].get("cpu.logical_number"),
                            "time": t, "value": v, "frames": names})
    return out, untimed


def report_supports_time():
    r = subprocess.run([PROFCAP, "report", "--help"], capture_output=True, text=True)
    return "--time" in (r.stdout + r.stderr)


@unittest.skipUnless(OK, WHY)
class TimestampsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.cpu_count() < 2:
            raise unittest.SkipTest("needs two CPUs to pin the phases' threads")
        if not shutil.which("gcc"):
            raise unittest.SkipTest("gcc is missing: the workload is built here")
        cls.dir = tempfile.mkdtemp(prefix="profcap-ts-")
        cls.exe = build_workload(cls.dir)
        if not cls.exe:
            raise unittest.SkipTest("the workload does not build with this gcc")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def capture(self, name, extra, args):
        out = os.path.join(self.dir, name)
        r = run_profcap(["capture", "--timestamps", "-F", str(FREQ), "-o", out] + extra + ["--", self.exe] + args,
                        timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, msg = check_conformance(out)
        self.assertTrue(ok, msg)
        return out, r.stdout

    def phases(self):
        """The phase workload's capture (taken once): path, tids, phases."""
        cls = type(self)
        if getattr(cls, "_phases", None) is None:
            path, stdout = self.capture("phases.pb", [], ["1.5"])
            cls._phases = (path, stdout)
        return cls._phases

    def test_phases_cpus_and_times(self):
        path, stdout = self.phases()
        tids, phases = {}, {}
        for line in stdout.splitlines():
            w = line.split()
            if w[0] == "thread":
                tids[int(w[2])] = int(w[1])
            elif w[0] in ("phase_a", "phase_b"):
                phases[w[0]] = (int(w[1]), int(w[2]))
        self.assertEqual(len(tids), 2, stdout)
        self.assertEqual(set(phases), {"phase_a", "phase_b"}, stdout)
        samples, untimed = timed_samples(path)
        mine = [s for s in samples if s["tid"] in tids]
        # The threads run only as much as the host lets them (a shared CI
        # machine): a tenth of the CPU is enough to check.
        self.assertGreater(len(mine), FREQ // 5, "too few timed samples of the phase threads")
        # Every sample of the workload's threads is timed (the capture was
        # running long before the phases).
        wrong_cpu = [s for s in mine if s["cpu"] != tids[s["tid"]]]
        self.assertEqual(wrong_cpu, [], "samples on a CPU the thread was not pinned to")
        for name, (start, end) in phases.items():
            inside = [s for s in mine if name in s["frames"]]
            self.assertGreater(len(inside), FREQ // 10, f"few samples in {name}")
            off = [s["time"] for s in inside if not start - PERIOD_NS <= s["time"] <= end + PERIOD_NS]
            self.assertEqual(off, [], f"{name} samples outside its window [{start}, {end}]")
            window = [s for s in mine if start <= s["time"] < end]
            share = sum(1 for s in window if name in s["frames"]) / max(1, len(window))
            self.assertGreaterEqual(share, 0.95, f"{name}'s window holds it {share:.0%}")

    def test_report_time_slices_phases(self):
        if not report_supports_time():
            self.skipTest("this build's report has no --time (the model's time slices)")
        path, stdout = self.phases()
        phases = {w[0]: (int(w[1]), int(w[2])) for w in (l.split() for l in stdout.splitlines())
                  if w[0] in ("phase_a", "phase_b")}
        self.assertEqual(set(phases), {"phase_a", "phase_b"}, stdout)
        for name, (start, end) in phases.items():
            r = subprocess.run([PROFCAP, "report", "--json", "--time", f"{start}-{end}", path],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
            share = function_share(doc, name)
            self.assertGreaterEqual(share, 0.95, f"report --time of {name}'s window: {share:.0%}")

    def test_off_cpu_rhythm(self):
        path, stdout = self.capture("sleeper.pb", ["--off-cpu"], ["1.0", "3.0"])
        tid = None
        for line in stdout.splitlines():
            w = line.split()
            if w[0] == "sleeper":
                tid = int(w[1])
        self.assertIsNotNone(tid, stdout)
        waits, _ = timed_samples(path, "off_cpu")
        naps = sorted((w for w in waits if w["tid"] == tid and "sleeper_nap" in w["frames"]),
                      key=lambda w: w["time"])
        self.assertGreaterEqual(len(naps), 4, f"naps seen: {naps}")
        for w in naps:
            self.assertTrue(170e6 <= w["value"] <= 260e6, f"a nap of {w['value'] / 1e6:.1f} ms")
        gaps = [b["time"] - a["time"] for a, b in zip(naps, naps[1:])]
        for g in gaps:
            self.assertTrue(440e6 <= g <= 560e6, f"naps {g / 1e6:.1f} ms apart: {gaps}")

    def test_agent_windows_timed(self):
        out = os.path.join(self.dir, "agent")
        os.makedirs(out, exist_ok=True)
        w = subprocess.Popen([self.exe, "0.5"], stdout=subprocess.PIPE, text=True)
        try:
            a = subprocess.Popen([PROFCAP, "agent", "--timestamps", "--interval", "1s", "--output-dir", out,
                                  "-p", str(w.pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            w.wait(timeout=30)
            time.sleep(0.5)
            a.send_signal(signal.SIGINT)
            _, err = a.communicate(timeout=60)
            self.assertEqual(a.returncode, 0, err)
        finally:
            if w.poll() is None:
                w.kill()
        files = sorted(os.listdir(out))
        self.assertGreaterEqual(len(files), 2, err)
        last = 0
        timed = 0
        for f in files:
            path = os.path.join(out, f)
            ok, msg = check_conformance(path)
            self.assertTrue(ok, msg)
            samples, untimed = timed_samples(path)
            self.assertEqual(untimed, 0, f"{f}: samples without time")
            if samples:
                times = [x["time"] for x in samples]
                self.assertGreaterEqual(min(times), last, f"{f}: times before the last window's")
                last = max(times)
                timed += len(samples)
        self.assertGreater(timed, 0, "no timed samples in the agent's windows")


def function_share(doc, name):
    """Inclusive share of function @name in a `report --json` document (0
    when it is not in its top rows)."""
    for row in doc.get("top", []):
        if row.get("name") == name:
            return row.get("inclusive_share", 0.0)
    return 0.0


if __name__ == "__main__":
    unittest.main()
