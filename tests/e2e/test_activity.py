"""End-to-end tests of `report --activity` (root: real BPF) against a
workload that knows its own schedule (C, built here with gcc):
- rhythm: a thread computes 300 ms then sleeps 200 ms, again and again,
  and prints each run's and nap's wall-clock window and the CPU time it got
  in each run; captured with --timestamps --off-cpu, every 100 ms interval
  of the view has running and waiting shares within a tolerance of that
  truth, and the text row shows both states;
- contend: two threads pinned to one CPU spin, so each is preempted by the
  other; captured with --off-cpu-runnable, both show runnable time;
- spans: a thread publishes OpenTelemetry thread context (OTEP 4947) and
  moves through spans on a known schedule (some computing, some asleep);
  each span is drawn on that thread only, from its start to its end within
  a sampling period, and another thread shows none.
The official checker passes on every capture."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from capture_util import PROFCAP, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
FREQ = 99
PERIOD_NS = 10**9 // FREQ
INTERVAL_NS = 100 * 10**6

WORKLOAD = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

struct rec {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
	uint8_t attrs_data[4];
} __attribute__((packed, aligned(8)));

__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

static long long now(int clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile unsigned long sink;
static long long stop_at;
static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;

#define SAY(...)                              \
	do {                                  \
		pthread_mutex_lock(&out);     \
		printf(__VA_ARGS__);          \
		fflush(stdout);               \
		pthread_mutex_unlock(&out);   \
	} while (0)

__attribute__((noinline)) void compute(long long ms)
{
	long long end = now(CLOCK_REALTIME) + ms * 1000000LL;

	while (now(CLOCK_REALTIME) < end)
		sink++;
}

__attribute__((noinline)) void nap(long long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void *rhythm(void *arg)
{
	(void)arg;
	SAY("rhythm %ld\n", (long)syscall(SYS_gettid));
	while (now(CLOCK_REALTIME) < stop_at) {
		long long a = now(CLOCK_REALTIME), c = now(CLOCK_THREAD_CPUTIME_ID), b;

		compute(300);
		b = now(CLOCK_REALTIME);
		SAY("run %lld %lld %lld\n", a, b, now(CLOCK_THREAD_CPUTIME_ID) - c);
		nap(200);
		SAY("nap %lld %lld\n", b, now(CLOCK_REALTIME));
	}
	return NULL;
}

static void *spinner(void *arg)
{
	cpu_set_t set;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	SAY("spinner %ld\n", (long)syscall(SYS_gettid));
	while (now(CLOCK_REALTIME) < stop_at)
		sink++;
	return NULL;
}

/* Span @n: trace 0x11..., span id n+1 in every byte. */
static void enter(struct rec *r, int n)
{
	r->valid = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memset(r->trace_id, 0x11, sizeof(r->trace_id));
	memset(r->span_id, n + 1, sizeof(r->span_id));
	r->trace_flags = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->valid = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	otel_thread_ctx_v1 = r;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	otel_thread_ctx_v1 = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void *traced(void *arg)
{
	static struct rec r;
	long long a;
	int n;

	(void)arg;
	SAY("traced %ld\n", (long)syscall(SYS_gettid));
	for (n = 0; n < 4; n += 2) {
		a = now(CLOCK_REALTIME);
		enter(&r, n);
		compute(400);
		leave();
		SAY("span %02x%02x%02x%02x%02x%02x%02x%02x %lld %lld\n", n + 1, n + 1, n + 1,
		    n + 1, n + 1, n + 1, n + 1, n + 1, a, now(CLOCK_REALTIME));
		a = now(CLOCK_REALTIME);
		enter(&r, n + 1);
		nap(200);
		compute(200);
		leave();
		SAY("span %02x%02x%02x%02x%02x%02x%02x%02x %lld %lld\n", n + 2, n + 2, n + 2,
		    n + 2, n + 2, n + 2, n + 2, n + 2, a, now(CLOCK_REALTIME));
		compute(200);
	}
	return NULL;
}

static void *plain(void *arg)
{
	(void)arg;
	SAY("plain %ld\n", (long)syscall(SYS_gettid));
	while (now(CLOCK_REALTIME) < stop_at) {
		compute(50);
		nap(50);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double delay = atof(argv[2]), secs = atof(argv[3]);
	pthread_t th[2];
	int i, n = 1;

	usleep((useconds_t)(delay * 1e6)); /* the capture attaches first */
	stop_at = now(CLOCK_REALTIME) + (long long)(secs * 1e9);
	if (!strcmp(argv[1], "rhythm")) {
		pthread_create(&th[0], NULL, rhythm, NULL);
	} else if (!strcmp(argv[1], "contend")) {
		pthread_create(&th[0], NULL, spinner, NULL);
		pthread_create(&th[1], NULL, spinner, NULL);
		n = 2;
	} else {
		pthread_create(&th[0], NULL, traced, NULL);
		pthread_create(&th[1], NULL, plain, NULL);
		n = 2;
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
"""


def overlap(a0, a1, b0, b1):
    return max(0, min(a1, b1) - max(a0, b0))


def cpu_sample_times(path, tid):
    """The times of thread @tid's CPU samples in the capture, one per
    sample (their values are 1 each at this rate)."""
    d = decode(path)
    strings = d["data"].dictionary.string_table
    out = []
    for r in d["resources"]:
        if strings[r["profile"].sample_type.type_strindex] != "samples":
            continue
        for s, raw in zip(r["samples"], r["profile"].samples):
            if s["attrs"].get("thread.id") == tid:
                vals = list(raw.values) if len(raw.values) == len(raw.timestamps_unix_nano) else None
                for k, t in enumerate(raw.timestamps_unix_nano):
                    out.extend([t] * (vals[k] if vals else 1))
    return out


@unittest.skipUnless(OK, WHY)
class ActivityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc"):
            raise unittest.SkipTest("gcc is missing: the workload is built here")
        cls.dir = tempfile.mkdtemp(prefix="profcap-activity-")
        src, cls.exe = os.path.join(cls.dir, "activity.c"), os.path.join(cls.dir, "activity")
        with open(src, "w") as f:
            f.write(WORKLOAD)
        r = subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", cls.exe, src,
                            "-Wl,--export-dynamic-symbol=otel_thread_ctx_v1"], capture_output=True, text=True)
        if r.returncode:
            raise unittest.SkipTest(f"the workload does not build with this gcc: {r.stderr}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def capture(self, mode, extra, secs):
        out = os.path.join(self.dir, mode + ".pb")
        r = run_profcap(["capture", "--timestamps", "--off-cpu", "-F", str(FREQ), "-o", out] + extra +
                        ["--", self.exe, mode, "1.0", str(secs)], timeout=180)
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, msg = check_conformance(out)
        self.assertTrue(ok, msg)
        return out, r.stdout

    def activity(self, path, *args):
        r = subprocess.run([PROFCAP, "report", path, "--activity", "--top", "0"] + list(args),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def activity_json(self, path, *args):
        doc = json.loads(self.activity(path, "--json", *args))
        return doc, {t["tid"]: t for t in doc["threads"]}

    def test_rhythm(self):
        path, stdout = self.capture("rhythm", [], 3.0)
        tid, runs, naps = None, [], []
        for w in (l.split() for l in stdout.splitlines()):
            if w[0] == "rhythm":
                tid = int(w[1])
            elif w[0] == "run":
                runs.append((int(w[1]), int(w[2]), int(w[3])))
            elif w[0] == "nap":
                naps.append((int(w[1]), int(w[2])))
        self.assertIsNotNone(tid, stdout)
        self.assertGreaterEqual(len(naps), 4, stdout)
        doc, threads = self.activity_json(path, "--interval", "100ms")
        self.assertTrue(doc["has_off_cpu"])
        self.assertIn(tid, threads, f"the rhythm thread is not in the view: {list(threads)}")
        t = threads[tid]
        start, iv = doc["start_unix_nano"], doc["interval_ns"]
        self.assertEqual(iv, INTERVAL_NS)
        running, waiting = t["intervals"]["running"], t["intervals"]["interruptible"]
        rows, checked = [], 0
        lo, hi = runs[0][0], naps[-1][1]
        for i in range(len(running)):
            b0, b1 = start + i * iv, start + (i + 1) * iv
            if b0 < lo or b1 > hi:
                continue  # the thread's first and last intervals are partial
            want_wait = sum(overlap(a, b, b0, b1) for a, b in naps) / iv
            got_run, got_wait = running[i] / iv, waiting[i] / iv
            rows.append((i, round(got_run, 2), round(got_wait, 2), round(want_wait, 2)))
            checked += 1
            # waits are measured: their share is the naps' own
            self.assertLess(abs(got_wait - want_wait), 0.05, f"interval {i}: waiting {got_wait:.2f}, "
                            f"truth {want_wait:.2f}; (interval, running, waiting, truth): {rows}")
            # running where it ran: one sample (a tenth) at most mis-placed
            self.assertLessEqual(got_run, 1.0 - want_wait + 0.11, f"interval {i}: running {got_run:.2f} "
                                 f"while asleep {want_wait:.2f}: {rows}")
        self.assertGreaterEqual(checked, 15, f"too few intervals checked: {rows}")
        # each interval's running time is the thread's CPU samples in it
        per = [0] * len(running)
        for ts in cpu_sample_times(path, tid):
            per[min((ts - start) // iv, len(per) - 1)] += doc["period_ns"]
        self.assertEqual(running, per, "running time per interval is not the samples'")
        # ... and near each run's CPU time (the thread's own clock; a
        # loaded host gives it less than the 300 ms), within a few samples
        for a, b, cpu in runs[:-1]:
            got = sum(running[i] for i in range(len(running))
                      if a <= start + i * iv + iv // 2 < b)
            self.assertLess(abs(got - cpu), 5 * PERIOD_NS + 0.25 * cpu,
                            f"run [{a}, {b}): {got / 1e6:.0f} ms running, truth {cpu / 1e6:.0f} ms")
        got_all = sum(running[i] for i in range(len(running)) if lo <= start + i * iv < hi)
        cpu_all = sum(c for _, _, c in runs)
        self.assertLess(abs(got_all - cpu_all), 0.2 * cpu_all, f"{got_all} vs {cpu_all} ns of CPU")
        # totals: the thread's waiting time is its naps'
        total_naps = sum(b - a for a, b in naps)
        self.assertLess(abs(t["totals"]["interruptible"] - total_naps), 0.05 * total_naps,
                        f"{t['totals']} vs naps {total_naps}")
        self.assertIn("#", t["row"])
        self.assertIn("S", t["row"])
        # the text view: a row of both states, the legend and the totals
        text = self.activity(path, "--interval", "100ms")
        row = [l for l in text.splitlines() if l.startswith(f"{t['pid']}/{tid} ")]
        self.assertEqual(len(row), 1, text)
        cells = row[0].split("|")[1]
        self.assertGreaterEqual(cells.count("#"), len(runs) // 2, text)
        self.assertGreaterEqual(cells.count("S"), len(naps), text)
        self.assertIn("legend:", text)
        self.assertIn("no runnable waits: capture with --off-cpu-runnable", text)

    def test_runnable_when_contended(self):
        if os.cpu_count() < 2:
            self.skipTest("needs two CPUs: the spinners share CPU 0 beside the capture")
        path, stdout = self.capture("contend", ["--off-cpu-runnable"], 2.0)
        tids = [int(w[1]) for w in (l.split() for l in stdout.splitlines()) if w[0] == "spinner"]
        self.assertEqual(len(tids), 2, stdout)
        doc, threads = self.activity_json(path)
        self.assertTrue(doc["has_runnable"])
        for tid in tids:
            self.assertIn(tid, threads)
            tot = threads[tid]["totals"]
            whole = threads[tid]["last_unix_nano"] - threads[tid]["first_unix_nano"]
            # each has the CPU at most half of the time (less on a loaded
            # host), and waits for it the rest: it never sleeps
            self.assertGreater(tot["runnable"], 0.25 * whole, f"{tid}: {tot} of {whole}")
            self.assertLess(tot["waiting_all"], 0.05 * whole, f"{tid}: {tot}")
            segs = [s["state"] for s in threads[tid]["segments"]]
            self.assertIn("runnable", segs)
        text = self.activity(path)
        self.assertNotIn("no runnable waits", text)
        rows = [l for l in text.splitlines() if any(l.startswith(f"{threads[t]['pid']}/{t} ") for t in tids)]
        self.assertEqual(len(rows), 2, text)
        for r in rows:
            self.assertIn("+", r.split("|")[1], text)

    def test_spans_on_their_thread(self):
        path, stdout = self.capture("spans", [], 2.5)
        traced = plain = None
        spans = {}
        for w in (l.split() for l in stdout.splitlines()):
            if w[0] == "traced":
                traced = int(w[1])
            elif w[0] == "plain":
                plain = int(w[1])
            elif w[0] == "span":
                spans[w[1]] = (int(w[2]), int(w[3]))
        self.assertEqual(len(spans), 4, stdout)
        doc, threads = self.activity_json(path)
        self.assertIn(traced, threads)
        self.assertIn(plain, threads)
        self.assertEqual(threads[plain]["spans"], [], "a span on the thread that had none")
        got = {s["span_id"]: s for s in threads[traced]["spans"]}
        self.assertEqual(set(got), set(spans), f"spans seen: {list(got)}")
        for sid, (a, b) in spans.items():
            s = got[sid]
            self.assertEqual(s["trace_id"], "11" * 16)
            # drawn where it ran: from its first to its last piece, never
            # outside the span's own window (a sample covers half a period
            # on each side), and over most of it
            self.assertGreaterEqual(s["start_unix_nano"], a - PERIOD_NS, f"{sid}: {s} vs {(a, b)}")
            self.assertLessEqual(s["end_unix_nano"], b + PERIOD_NS, f"{sid}: {s} vs {(a, b)}")
            self.assertGreater(s["end_unix_nano"] - s["start_unix_nano"], 0.5 * (b - a), f"{sid}: {s}")
        # the spans that begin asleep carry their wait, which starts them
        # to the millisecond
        for n in ("02" * 8, "04" * 8):
            self.assertGreater(got[n]["off_cpu_ns"], 150e6, got[n])
            self.assertLess(abs(got[n]["start_unix_nano"] - spans[n][0]), 5e6, got[n])
        text = self.activity(path)
        self.assertIn("  spans", text)
        self.assertIn("11" * 16 + "/" + "01" * 8, text)


if __name__ == "__main__":
    unittest.main()
