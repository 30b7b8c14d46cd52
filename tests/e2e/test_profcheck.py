"""Captures of every kind checked by the official OTLP profiles conformance
checker, profcheck (open-telemetry/sig-profiling), with its optional checks
(-check-dupes: no duplicate dictionary entries; -check-orphans: no
unreferenced ones), and by the project's own checker (otlp_check.py), which
must agree with it.

profcheck is not built here: the tests run the binary PROFCHECK names, else
../shared/tools/profcheck/profcheck (the shared folder beside the repository,
as CI clones it; see otlp_check.find_profcheck()). Without either they are
skipped, with the reason.
Kinds: `capture -p`, `capture -a`, an agent window, and `convert` outputs
(OTLP from OTLP, from perf script text, from pprof and from OTLP-JSON).
"""
import os
import signal
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, Workload, can_sample, check_conformance, run_profcap
from otlp_check import find_profcheck, run_profcheck

PROFCHECK, WHY_NOT = find_profcheck()
OK, WHY = can_sample()

PERF_SCRIPT = (b"app 10/11 [000] 100.000000: 1000000 cpu-clock:pppH:\n"
               b"\tffffffff81000010 do_syscall_64+0x10 ([kernel.kallsyms])\n"
               b"\t1234 work+0x4 (/usr/bin/app)\n"
               b"\t1100 main+0x20 (/usr/bin/app)\n"
               b"\n"
               b"app 10/10 [001] 100.001000: 1000000 cpu-clock:pppH:\n"
               b"\t1234 work+0x4 (/usr/bin/app)\n"
               b"\t1100 main+0x20 (/usr/bin/app)\n"
               b"\n"
               b"other 12/12 [001] 100.002000: 1000000 cpu-clock:pppH:\n"
               b"\t5678 spin+0x8 (/usr/bin/other)\n"
               b"\n")


@unittest.skipUnless(PROFCHECK, WHY_NOT)
class ProfcheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def assert_conformant(self, path):
        ok, out = check_conformance(path, profcheck="required")
        self.assertTrue(ok, "otlp_check + profcheck: " + out)
        self.assertIn("profcheck)", out)

    def convert(self, src, name, *extra):
        out = os.path.join(self.dir, name)
        r = run_profcap(["convert", src, "-o", out] + list(extra))
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def test_checker_rejects_bad_link(self):
        """The binary is a real profcheck: it rejects link_table[0] written
        with 16 + 8 zero bytes."""
        path = os.path.join(self.dir, "bad.pb")
        with open(path, "wb") as f:
            # ProfilesData{resource_profiles: [{scope_profiles: [{profiles: [{}]}]}],
            # dictionary: {all tables with a zero entry, link 0 = 16+8 zero bytes}}
            link = b"\x0a\x10" + bytes(16) + b"\x12\x08" + bytes(8)
            dic = (b"\x0a\x00" + b"\x12\x00" + b"\x1a\x00" + b"\x22" + bytes([len(link)]) + link
                   + b"\x2a\x00" + b"\x32\x00" + b"\x3a\x00")
            f.write(b"\x0a\x04\x12\x02\x12\x00" + b"\x12" + bytes([len(dic)]) + dic)
        ok, out = run_profcheck(path, PROFCHECK)
        self.assertFalse(ok, out)
        self.assertIn("link_table", out)

    def test_convert_perf_script(self):
        txt = os.path.join(self.dir, "perf.txt")
        with open(txt, "wb") as f:
            f.write(PERF_SCRIPT)
        self.assert_conformant(self.convert(txt, "perf.pb", "--to", "otlp", "--from",
                                            "perf-script", "--embed-original"))

    @unittest.skipUnless(OK, WHY)
    def test_capture_pid_and_converted(self):
        src = os.path.join(self.dir, "cpu.pb")
        with Workload("groundtruth", "-t") as w:
            r = run_profcap(["capture", "-p", str(w.pid), "--seconds", "1", "-F", "499",
                             "-q", "-o", src])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_conformant(src)
        self.assert_conformant(self.convert(src, "again.pb", "--to", "otlp"))
        pprof = self.convert(src, "cpu.pb.gz", "--to", "pprof")
        self.assert_conformant(self.convert(pprof, "from-pprof.pb", "--from", "pprof",
                                            "--to", "otlp"))
        self.assert_conformant(self.convert(pprof, "from-pprof-auto.pb"))

    @unittest.skipUnless(OK, WHY)
    def test_capture_all(self):
        src = os.path.join(self.dir, "all.pb")
        r = run_profcap(["capture", "-a", "--seconds", "0.5", "-q", "-o", src])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_conformant(src)

    @unittest.skipUnless(OK, WHY)
    def test_agent_windows(self):
        out = os.path.join(self.dir, "windows")
        os.mkdir(out)
        with Workload("groundtruth", "-t") as w:
            a = subprocess.Popen([PROFCAP, "agent", "--interval", "0.5s", "--output-dir", out,
                                  "-p", str(w.pid), "-q"], stderr=subprocess.PIPE, text=True)
            # Two windows on disk (the agent is up and past its start), then stop it.
            deadline = time.time() + 30
            while len(os.listdir(out)) < 2 and time.time() < deadline and a.poll() is None:
                time.sleep(0.1)
            a.send_signal(signal.SIGTERM)
            _, err = a.communicate(timeout=30)
        self.assertEqual(a.returncode, 0, err)
        files = sorted(os.listdir(out))
        self.assertGreaterEqual(len(files), 2, files)
        for name in files:
            self.assert_conformant(os.path.join(out, name))


if __name__ == "__main__":
    unittest.main()
