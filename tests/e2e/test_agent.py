"""End-to-end tests of `profcap agent` (root: real BPF sampling): back-to-back
windows without gaps or lost samples, SIGTERM flushing, SIGHUP, the output
directory cap, JSON status lines and export to an OTLP endpoint."""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, Workload, can_sample, check_conformance, decode, run_profcap
from receivers import HttpReceiver

OK, WHY = can_sample()
HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def samples_in(path):
    d = decode(path)
    return sum(s["value"] for r in d["resources"] for s in r["samples"]), d


def window_files(d):
    return sorted(glob.glob(os.path.join(d, "profcap-*.pb")), key=os.path.getmtime)


@unittest.skipUnless(OK, WHY)
class AgentTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "windows")

    def tearDown(self):
        self.tmp.cleanup()

    def start(self, *args):
        return subprocess.Popen([PROFCAP, "agent"] + list(args), stderr=subprocess.PIPE,
                                text=True)

    def wait_files(self, n, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(window_files(self.out)) >= n:
                return True
            time.sleep(0.05)
        return False

    def test_windows_lose_no_samples_at_edges(self):
        with Workload("groundtruth") as w:
            # Ten 1 s windows, then SIGTERM: the partial 11th is delivered too.
            c0 = cpu_seconds(w.pid)
            a = self.start("--interval", "1s", "--output-dir", self.out, "-p", str(w.pid),
                           "--json")
            self.assertTrue(self.wait_files(10, 30), "10 windows did not arrive")
            a.send_signal(signal.SIGTERM)
            _, err = a.communicate(timeout=30)
            c1 = cpu_seconds(w.pid)
            self.assertEqual(a.returncode, 0, err)
            files = window_files(self.out)
            self.assertGreaterEqual(len(files), 11, err)
            agent_total, starts = 0, []
            for f in files:
                ok, report = check_conformance(f)
                self.assertTrue(ok, report)
                n, d = samples_in(f)
                agent_total += n
                p = d["resources"][0]["profile"]
                starts.append((p.time_unix_nano, p.duration_nano))
            # Windows are back to back: each starts where the previous ended.
            for (s0, d0), (s1, _) in zip(starts, starts[1:]):
                self.assertLess(abs(s0 + d0 - s1), 20e6, "gap or overlap between windows")
            for _, dur in starts[:-1]:
                self.assertAlmostEqual(dur / 1e9, 1.0, delta=0.25)
            agent_rate = agent_total / (c1 - c0)
            # Exact accounting: every sample the BPF program kept is in
            # exactly one window file (or counted as dropped).
            last = [e for e in map(json.loads, (l for l in err.splitlines() if l.startswith("{")))
                    if e["event"] == "window"][-1]
            self.assertEqual(last["samples_total"], agent_total)
            self.assertEqual(last["samples_total"] + last["dropped_total"],
                             last["kernel_samples"])

            # The same steady workload in one capture of 10 s.
            c0 = cpu_seconds(w.pid)
            r = run_profcap(["capture", "-o", os.path.join(self.dir, "one.pb"), "-p",
                             str(w.pid), "--seconds", "10", "-q"], timeout=60)
            c1 = cpu_seconds(w.pid)
            self.assertEqual(r.returncode, 0, r.stderr)
            one_total, _ = samples_in(os.path.join(self.dir, "one.pb"))
            one_rate = one_total / (c1 - c0)
        # Samples per CPU second of the workload agree. Loosely: on a loaded
        # machine cpu-clock ticks and CPU accounting drift apart; the exact
        # check above is what proves the edges lose nothing.
        self.assertAlmostEqual(agent_rate / one_rate, 1.0, delta=0.25,
                               msg=f"agent {agent_total} samples ({agent_rate:.1f}/CPU s), "
                               f"capture {one_total} ({one_rate:.1f}/CPU s)")
        self.assertAlmostEqual(one_rate, 99, delta=99 * 0.25)

    def test_sigterm_mid_window_delivers_it(self):
        # SIGTERM ends the current 60 s window at once; the window covers the
        # agent's sampling up to the signal; the agent exits within a
        # container's 10 s grace. The window is timed from the agent's own
        # start line, not from process start: loading BPF takes a variable
        # time on a loaded machine, and that time is not part of the window.
        with Workload("groundtruth") as w:
            a = self.start("--interval", "60s", "--output-dir", self.out, "-p", str(w.pid),
                           "--json")
            first = a.stderr.readline()
            t_start, c_start = time.monotonic(), cpu_seconds(w.pid)
            time.sleep(1.5)
            t0, cpu = time.monotonic(), cpu_seconds(w.pid) - c_start
            a.send_signal(signal.SIGTERM)
            _, err = a.communicate(timeout=30)
            took = time.monotonic() - t0
        err = first + err
        self.assertTrue(first.startswith('{"event":"start"'), err)
        self.assertEqual(a.returncode, 0, err)
        self.assertLess(took, 8.0, "SIGTERM flush must fit a 10 s container grace")
        files = window_files(self.out)
        self.assertEqual(len(files), 1, err)
        n, d = samples_in(files[0])
        # Samples follow the CPU time the workload got (a loaded machine
        # gives it less), not the wall time.
        self.assertGreater(n, 0.5 * cpu * 99, f"{n} samples for {cpu:.2f} CPU s")
        self.assertAlmostEqual(d["resources"][0]["profile"].duration_nano / 1e9, t0 - t_start,
                               delta=0.5)
        self.assertIn("flushing the current window", err)

    def test_json_status_sighup_and_dir_cap(self):
        with Workload("groundtruth") as w:
            a = self.start("--interval", "0.4s", "--output-dir", self.out, "--max-dir-size",
                           "9K", "--json", "-p", str(w.pid))
            first = a.stderr.readline()
            c0 = cpu_seconds(w.pid)
            self.assertTrue(self.wait_files(2, 20))
            # Operator removes the directory (log rotation); SIGHUP brings it back.
            shutil.rmtree(self.out, ignore_errors=True)
            a.send_signal(signal.SIGHUP)
            time.sleep(0.2)
            self.assertTrue(self.wait_files(2, 20), "no window files after SIGHUP")
            time.sleep(3)
            total = sum(os.path.getsize(f) for f in window_files(self.out))
            a.send_signal(signal.SIGTERM)
            _, err = a.communicate(timeout=30)
            cpu = cpu_seconds(w.pid) - c0
        err = first + err
        self.assertEqual(a.returncode, 0, err)
        self.assertLessEqual(total, 9 * 1024, "--max-dir-size not kept")
        events = [json.loads(l) for l in err.splitlines() if l.startswith("{")]
        self.assertEqual(events[-1]["event"], "exit", err)
        self.assertEqual((events[-1]["rescued"], events[-1]["lost"]), (0, 0), err)
        events = [e for e in events if e["event"] == "window"]
        self.assertGreaterEqual(len(events), 5, err)
        for k in ("window", "samples", "dropped", "exported", "export_failed", "spooled",
                  "files", "rss_kb"):
            self.assertIn(k, events[-1])
        self.assertEqual([e["window"] for e in events], list(range(1, len(events) + 1)))
        # The workload's CPU time, not the wall time: a loaded machine gives
        # it less.
        self.assertGreater(sum(e["samples"] for e in events), 0.5 * cpu * 99,
                           f"{cpu:.2f} CPU s")

    def test_exports_each_window(self):
        with Workload("groundtruth") as w, HttpReceiver() as h:
            a = self.start("--interval", "1s", "--endpoint", h.url, "--protocol",
                           "http/protobuf", "-p", str(w.pid))
            reqs = h.wait_requests(3, timeout=20)
            a.send_signal(signal.SIGTERM)
            _, err = a.communicate(timeout=30)
            reqs = h.requests
        self.assertEqual(a.returncode, 0, err)
        self.assertGreaterEqual(len(reqs), 4, err)  # 3 windows + the flushed one
        for req in reqs:
            msg, e = HttpReceiver.decode(req.payload)
            self.assertIsNone(e)
            self.assertEqual(len(msg.resource_profiles), 1)

    def test_usage_errors(self):
        for args, msg in [([], "nowhere to deliver"),
                          (["--output-dir", self.out, "--interval", "0"], "invalid --interval"),
                          (["--output-dir", self.out, "--max-dir-size", "1Q"],
                           "invalid --max-dir-size"),
                          (["--output-dir", "/proc/nope"], "/proc/nope")]:
            r = run_profcap(["agent"] + args, timeout=20)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(msg, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
