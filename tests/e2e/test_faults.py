"""Fault injection (root: real BPF sampling): every case ends in a valid
capture or one clear error line, loses nothing and leaves no litter.

Signals at 10, 50 and 200 ms and during the final write; SIGKILL, then a new
capture in the same directory; a full disk (small tmpfs) for the output and
for $TMPDIR; the agent's directory rotated or removed, with and without
SIGHUP; an endpoint that is down, answers 503, is slow, or fails the TLS
check, with --output-dir and --max-dir-size; SIGTERM with the endpoint down
under a 10 s grace; two captures started together in one directory without
-o. For the agent, the samples in all delivered, spooled and rescued files
add up to the samples sampled."""
import errno
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, Workload, can_sample, check_conformance, decode, run_profcap
from receivers import HttpReceiver, HttpReply
from tls import TestPKI

OK, WHY = can_sample()


def litter(d):
    """Temporary files left in @d."""
    return [f for f in os.listdir(d) if ".tmp." in f] if os.path.isdir(d) else []


def error_lines(text):
    return [l for l in text.splitlines() if "error:" in l]


def samples(path):
    d = decode(path)
    return sum(s["value"] for r in d["resources"] for s in r["samples"]), d


def captures(d):
    return sorted(glob.glob(os.path.join(d, "profcap-*.pb")), key=os.path.getmtime)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def events(err, kind=None):
    ev = [json.loads(l) for l in err.splitlines() if l.startswith("{")]
    return [e for e in ev if kind is None or e["event"] == kind]


FILLER = ".filler"  # what fills a test's full tmpfs


def listing(d):
    """The files in @d that the test did not put there."""
    return sorted(f for f in os.listdir(d) if f != FILLER)


@unittest.skipUnless(OK, WHY)
class CaptureFaultTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.rescue = os.path.join(self.dir, "rescue")
        os.mkdir(self.rescue)
        self.env = dict(os.environ, TMPDIR=self.rescue)
        self.mounts = []

    def tearDown(self):
        for m in reversed(self.mounts):
            subprocess.run(["umount", m], check=False)
        self.tmp.cleanup()

    def tmpfs(self, name, size="4k"):
        d = os.path.join(self.dir, name)
        os.mkdir(d)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "none", d],
                           capture_output=True, text=True)
        if r.returncode:
            self.skipTest(f"cannot mount a tmpfs: {r.stderr.strip()}")
        self.mounts.append(d)
        # Full, whatever the capture's size: a quiet host's 1 s capture fits
        # in a few KiB, so fill every block first.
        try:
            with open(os.path.join(d, FILLER), "wb") as f:
                while True:
                    f.write(b"\0" * 512)
                    f.flush()
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
        return d

    def start(self, *args, cwd=None):
        return subprocess.Popen([PROFCAP, "capture"] + list(args), stderr=subprocess.PIPE,
                                text=True, env=self.env, cwd=cwd)

    def assertValidOrOneError(self, p, err, out):
        if p.returncode == 0:
            ok, report = check_conformance(out)
            self.assertTrue(ok, report)
        elif p.returncode < 0:
            # Killed before the handlers existed: nothing may have been made.
            self.assertEqual(os.listdir(os.path.dirname(out)), [], err)
        else:
            self.assertEqual(len(error_lines(err)), 1, err)
        self.assertEqual(litter(os.path.dirname(out)), [], err)
        self.assertEqual(os.listdir(self.rescue), [], err)

    def test_signals_early(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            for delay in (0.01, 0.05, 0.2):
                with self.subTest(sig=sig, delay=delay):
                    d = os.path.join(self.dir, f"s{int(sig)}-{int(delay * 1000)}")
                    os.mkdir(d)
                    out = os.path.join(d, "x.pb")
                    p = self.start("-a", "--seconds", "5", "-q", "-o", out)
                    time.sleep(delay)
                    p.send_signal(sig)
                    _, err = p.communicate(timeout=60)
                    self.assertValidOrOneError(p, err, out)

    def test_signals_during_the_final_write(self):
        out = os.path.join(self.dir, "x.pb")
        p = self.start("-a", "--seconds", "1", "-o", out)
        time.sleep(0.8)
        while p.poll() is None:
            p.send_signal(signal.SIGTERM)
            time.sleep(0.01)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertValidOrOneError(p, err, out)

    def test_sigkill_then_a_new_capture_cleans_up(self):
        a = os.path.join(self.dir, "a.pb")
        p = self.start("-a", "--seconds", "30", "-q", "-o", a)
        end = time.monotonic() + 20
        while not litter(self.dir) and time.monotonic() < end:
            time.sleep(0.02)
        self.assertTrue(litter(self.dir), "the capture never created its temporary file")
        p.kill()
        p.communicate(timeout=30)
        self.assertTrue(litter(self.dir))  # what SIGKILL leaves
        b = os.path.join(self.dir, "b.pb")
        r = subprocess.run([PROFCAP, "capture", "-a", "--seconds", "0.3", "-q", "-o", b],
                           capture_output=True, text=True, env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(litter(self.dir), [], "stale temporary file of a dead profcap")
        self.assertFalse(os.path.exists(a))
        ok, report = check_conformance(b)
        self.assertTrue(ok, report)

    def test_full_disk_for_the_output(self):
        full = self.tmpfs("full")
        out = os.path.join(full, "x.pb")
        p = self.start("-a", "--seconds", "1", "-q", "-o", out)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1, err)
        self.assertEqual(len(error_lines(err)), 1, err)
        self.assertIn("saved to " + self.rescue, err)
        self.assertEqual(listing(full), [], "no partial output, no temporary file")
        rescued = glob.glob(os.path.join(self.rescue, "profcap-rescued-*.pb"))
        self.assertEqual(len(rescued), 1, err)
        self.assertEqual(os.stat(rescued[0]).st_mode & 0o777, 0o600)
        ok, report = check_conformance(rescued[0])
        self.assertTrue(ok, report)

    def test_full_disk_for_the_output_and_tmpdir(self):
        full = self.tmpfs("full")
        self.env["TMPDIR"] = self.tmpfs("fulltmp")
        out = os.path.join(full, "x.pb")
        p = self.start("-a", "--seconds", "1", "-q", "-o", out)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1, err)
        self.assertEqual(len(error_lines(err)), 1, err)
        rescued = [w for w in err.split() if w.startswith("/tmp/profcap-rescued-")]
        self.assertEqual(len(rescued), 1, err)
        self.assertIn("TMPDIR " + self.env["TMPDIR"], err)
        try:
            ok, report = check_conformance(rescued[0])
            self.assertTrue(ok, report)
        finally:
            os.unlink(rescued[0])
        self.assertEqual(listing(full), [])
        self.assertEqual(listing(self.env["TMPDIR"]), [])

    def test_two_captures_together_without_o(self):
        ps = [self.start("-a", "--seconds", "1", cwd=self.dir) for _ in range(2)]
        errs = [p.communicate(timeout=60)[1] for p in ps]
        for p, err in zip(ps, errs):
            self.assertEqual(p.returncode, 0, err)
        names = [l.split("wrote ", 1)[1].split(" (")[0] for err in errs
                 for l in err.splitlines() if " wrote " in l]
        self.assertEqual(len(names), 2, errs)
        self.assertNotEqual(names[0], names[1], errs)
        for n in names:
            ok, report = check_conformance(os.path.join(self.dir, n))
            self.assertTrue(ok, report)
        self.assertEqual(len(captures(self.dir)), 2)
        self.assertEqual(litter(self.dir), [])


@unittest.skipUnless(OK, WHY)
class DrainBoundTest(unittest.TestCase):
    """A capture ends on time whatever the rate: naming what it drains may go
    on only so long past its end (PROFCAP_DRAIN_OVERRUN_MS; 0 here, as if
    draining had fallen behind at once): what is left is counted as lost, in
    the summary and in the file, not named."""

    def setUp(self):
        if not OK:
            self.skipTest(WHY)
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_drain_past_the_end_is_counted_not_named(self):
        out = os.path.join(self.tmp.name, "x.pb")
        with Workload("groundtruth") as w:
            t0 = time.monotonic()
            r = run_profcap(["capture", "-o", out, "-p", str(w.pid), "--seconds", "1"],
                            env={"PROFCAP_DRAIN_OVERRUN_MS": "0"})
            took = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(took, 15, r.stderr)
        self.assertIn("past the end of the capture", r.stderr)
        self.assertNotIn("please report this", r.stderr)
        rep = run_profcap(["report", out, "--json"])
        self.assertEqual(rep.returncode, 0, rep.stderr)
        cap = json.loads(rep.stdout)["capture"]
        self.assertEqual(cap["total"], 0, cap)
        self.assertGreater(cap["dropped_samples"], 10, cap)
        self.assertRegex(r.stderr, r"drained too late: %d\)" % cap["dropped_samples"])
        ok, report = check_conformance(out)
        self.assertTrue(ok, report)


class AgentFaultTest(unittest.TestCase):
    PKI = None

    @classmethod
    def setUpClass(cls):
        cls.PKI = TestPKI()

    @classmethod
    def tearDownClass(cls):
        cls.PKI.cleanup()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "windows")
        self.spool = os.path.join(self.dir, "spool")
        self.rescue = os.path.join(self.dir, "rescue")
        os.mkdir(self.rescue)
        self.env = dict(os.environ, TMPDIR=self.rescue)

    def tearDown(self):
        self.tmp.cleanup()

    def start(self, *args):
        return subprocess.Popen([PROFCAP, "agent", "--json"] + list(args),
                                stderr=subprocess.PIPE, text=True, env=self.env)

    def wait_captures(self, d, n, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(captures(d)) >= n:
                return True
            time.sleep(0.05)
        return False

    def stop(self, a):
        t0 = time.monotonic()
        a.send_signal(signal.SIGTERM)
        _, err = a.communicate(timeout=60)
        return err, time.monotonic() - t0

    def test_directory_rotated_without_sighup(self):
        with Workload("groundtruth") as w:
            a = self.start("--interval", "0.5s", "--output-dir", self.out, "-p", str(w.pid))
            self.assertTrue(self.wait_captures(self.out, 2))
            os.rename(self.out, self.out + ".old")
            self.assertTrue(self.wait_captures(self.out, 2), "no windows after the rotation")
            err, _ = self.stop(a)
        self.assertEqual(a.returncode, 0, err)
        done = events(err, "exit")[-1]
        self.assertEqual((done["rescued"], done["lost"]), (0, 0), err)
        files = captures(self.out + ".old") + captures(self.out)
        self.assertEqual(len(files), done["windows"], err)
        # Every sample sampled is in exactly one file.
        self.assertEqual(sum(samples(f)[0] for f in files), done["samples_total"], err)
        self.assertEqual(litter(self.out) + litter(self.out + ".old"), [])

    def test_directory_removed_then_sighup(self):
        with Workload("groundtruth") as w:
            a = self.start("--interval", "0.5s", "--output-dir", self.out, "-p", str(w.pid))
            self.assertTrue(self.wait_captures(self.out, 2))
            shutil.rmtree(self.out, ignore_errors=True)
            a.send_signal(signal.SIGHUP)
            self.assertTrue(self.wait_captures(self.out, 2), "no windows after the removal")
            err, _ = self.stop(a)
        self.assertEqual(a.returncode, 0, err)
        done = events(err, "exit")[-1]
        self.assertEqual((done["rescued"], done["lost"]), (0, 0), err)
        self.assertEqual(done["files"], done["windows"], err)
        self.assertEqual(os.listdir(self.rescue), [])

    def test_pid_target_exited_warns_once(self):
        w = Workload("groundtruth")
        try:
            a = self.start("--interval", "0.3s", "--output-dir", self.out, "-p", str(w.pid))
            self.assertTrue(a.stderr.readline().startswith('{"event":"start"'))
            self.assertTrue(self.wait_captures(self.out, 1))
        finally:
            w.stop()
        self.assertTrue(self.wait_captures(self.out, len(captures(self.out)) + 4))
        err, _ = self.stop(a)
        self.assertEqual(a.returncode, 0, err)
        self.assertEqual(err.count("every process given with -p has exited"), 1, err)

    def _endpoint_fault(self, url, *extra, receiver=None):
        with Workload("groundtruth") as w:
            a = self.start("--interval", "0.5s", "--output-dir", self.out, "--max-dir-size",
                           "8K", "--endpoint", url, "--protocol", "http/protobuf",
                           "--timeout", "1", "--spool-dir", self.spool, "-p", str(w.pid),
                           *extra)
            first = a.stderr.readline()
            self.assertTrue(first.startswith('{"event":"start"'), first)
            time.sleep(3)
            err, took = self.stop(a)
        self.assertEqual(a.returncode, 3, err)
        self.assertLess(took, 8, "SIGTERM must fit a 10 s container grace")
        done = events(err, "exit")[-1]
        self.assertEqual((done["exported"], done["rescued"], done["lost"]), (0, 0, 0), err)
        spooled = captures(self.spool)
        # Every window whose export failed waits in the spool, whatever
        # --max-dir-size removed from the output directory.
        self.assertEqual(len(spooled), done["windows"], err)
        self.assertEqual(done["spooled"], done["windows"], err)
        self.assertEqual(sum(samples(f)[0] for f in spooled), done["samples_total"], err)
        # Windows keep their length while the endpoint is failing.
        lengths = [samples(f)[1]["resources"][0]["profile"].duration_nano / 1e9
                   for f in spooled if samples(f)[1]["resources"]]
        self.assertGreaterEqual(done["windows"], 4, err)
        self.assertLess(sorted(lengths)[len(lengths) // 2], 0.8, lengths)
        total = sum(os.path.getsize(f) for f in captures(self.out))
        self.assertLessEqual(total, 8 * 1024)
        self.assertEqual(litter(self.out) + litter(self.spool), [])

    def test_endpoint_down(self):
        self._endpoint_fault("http://127.0.0.1:%d" % free_port())

    def test_endpoint_503(self):
        with HttpReceiver() as h:
            h.script(*[HttpReply(503) for _ in range(200)])
            self._endpoint_fault(h.url)

    def test_endpoint_slow(self):
        with HttpReceiver() as h:
            h.script(*[HttpReply(delay=3) for _ in range(200)])
            self._endpoint_fault(h.url)

    def test_endpoint_tls_mismatch(self):
        with HttpReceiver(self.PKI, server_cert=self.PKI.other_server_cert,
                          server_key=self.PKI.other_server_key) as h:
            self._endpoint_fault(h.url, "--certificate", self.PKI.ca)

    def test_sigterm_with_the_endpoint_down_fits_a_10s_grace(self):
        with Workload("groundtruth") as w:
            a = self.start("--interval", "60s", "--endpoint",
                           "http://127.0.0.1:%d" % free_port(), "--protocol", "http/protobuf",
                           "--spool-dir", self.spool, "-p", str(w.pid))
            self.assertTrue(a.stderr.readline().startswith('{"event":"start"'))
            time.sleep(1)
            err, took = self.stop(a)
        self.assertLess(took, 8, err)
        self.assertEqual(a.returncode, 3, err)
        spooled = captures(self.spool)
        self.assertEqual(len(spooled), 1, err)
        ok, report = check_conformance(spooled[0])
        self.assertTrue(ok, report)


if __name__ == "__main__":
    unittest.main()
