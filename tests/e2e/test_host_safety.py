"""A profiler must never harm its host: outputs that are not regular files
are written through (or refused), never replaced; a sampling rate the host
cannot take is lowered and the capture ends on time; a command that cannot
run ends profcap with a shell's status and no capture."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import time
import unittest

from capture_util import PROFCAP, can_sample, decode, run_profcap

OK, WHY = can_sample()


class OutputKindsTest(unittest.TestCase):
    """-o of capture, convert and flamegraph on devices, FIFOs and links."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-safety-")
        cls.src = os.path.join(cls.dir, "src.pb")
        if OK:
            r = run_profcap(["capture", "-q", "--seconds", "0.5", "-o", cls.src])
            assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def node(self, name, kind, dev=None):
        path = os.path.join(self.dir, name)
        if os.path.lexists(path):
            os.unlink(path)
        if kind == "fifo":
            os.mkfifo(path)
        else:
            os.mknod(path, 0o666 | kind, os.makedev(*dev))
        return path

    def commands(self, out):
        return [["capture", "-q", "--seconds", "0.3", "-o", out],
                ["convert", "-o", out, self.src],
                ["flamegraph", "-o", out, self.src]]

    @unittest.skipUnless(OK, WHY)
    def test_null_device_stays_a_device(self):
        null = self.node("mynull", stat.S_IFCHR, (1, 3))
        link = os.path.join(self.dir, "link-to-null")
        os.symlink("mynull", link)
        for out in (null, link):
            for args in self.commands(out):
                r = run_profcap(args)
                self.assertEqual(r.returncode, 0, f"{args}: {r.stderr}")
                self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode), f"{args} replaced the device")
                self.assertTrue(os.path.islink(link))
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp." in f], [])

    @unittest.skipUnless(OK, WHY)
    def test_full_device_is_an_error_and_nothing_is_lost(self):
        full = self.node("myfull", stat.S_IFCHR, (1, 7))
        tmp = tempfile.mkdtemp(prefix="profcap-rescue-")
        try:
            r = run_profcap(["capture", "--seconds", "0.3", "-o", full], env={"TMPDIR": tmp})
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("No space left on device", r.stderr)
            rescued = os.listdir(tmp)
            self.assertEqual(len(rescued), 1, r.stderr)  # the data is kept
            self.assertGreater(len(decode(os.path.join(tmp, rescued[0]))["resources"]), 0)
            for args in self.commands(full)[1:]:
                r = run_profcap(args)
                self.assertNotEqual(r.returncode, 0, args)
                self.assertIn("No space left on device", r.stderr)
            self.assertTrue(stat.S_ISCHR(os.stat(full).st_mode))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @unittest.skipUnless(OK, WHY)
    def test_fifo_reader_gets_the_capture(self):
        for args in self.commands(self.node("fifo", "fifo"))[:2]:
            fifo = args[args.index("-o") + 1]
            got = {}

            def read():
                with open(fifo, "rb") as f:
                    got["data"] = f.read()
            t = threading.Thread(target=read, daemon=True)
            t.start()
            r = run_profcap(args, timeout=60)
            t.join(10)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertGreater(len(got.get("data", b"")), 0, args)
            self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    @unittest.skipUnless(OK, WHY)
    def test_link_to_a_file_replaces_the_file_keeps_the_link(self):
        target = os.path.join(self.dir, "target.pb")
        with open(target, "w") as f:
            f.write("old")
        link = os.path.join(self.dir, "cap-link.pb")
        os.symlink("target.pb", link)
        r = run_profcap(["capture", "-q", "--seconds", "0.3", "-o", link])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        self.assertGreater(len(decode(target)["resources"]), 0)

    @unittest.skipUnless(OK, WHY)
    def test_refused_outputs(self):
        dangling = os.path.join(self.dir, "dangling")
        os.symlink("nowhere/x", dangling)
        blk = self.node("blk", stat.S_IFBLK, (7, 201))
        for out in (dangling, blk, self.dir):
            for args in self.commands(out):
                r = run_profcap(args)
                self.assertNotEqual(r.returncode, 0, args)
                self.assertEqual(len([l for l in r.stderr.splitlines() if "error:" in l]), 1,
                                 r.stderr)
        self.assertTrue(stat.S_ISBLK(os.lstat(blk).st_mode))
        self.assertTrue(os.path.islink(dangling))

    @unittest.skipUnless(OK, WHY)
    def test_dash_is_standard_output(self):
        r = subprocess.run([PROFCAP, "capture", "-q", "--seconds", "0.3", "-o", "-"],
                           capture_output=True, timeout=60, cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "-")))
        path = os.path.join(self.dir, "stdout.pb")
        with open(path, "wb") as f:
            f.write(r.stdout)
        self.assertGreater(len(decode(path)["resources"]), 0)


@unittest.skipUnless(OK, WHY)
class RateTest(unittest.TestCase):
    def test_high_rate_is_lowered_and_ends_on_time(self):
        out = tempfile.mktemp(prefix="profcap-rate-", suffix=".pb")
        try:
            t0 = time.monotonic()
            r = run_profcap(["capture", "-a", "-F", "100000", "--seconds", "1", "-o", out],
                            timeout=120)
            wall = time.monotonic() - t0
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("sampling at 10000 Hz", r.stderr)
            self.assertLess(wall, 10, r.stderr)
            self.assertIn("at 10000 Hz", [l for l in r.stderr.splitlines() if "captured" in l][0])
        finally:
            if os.path.exists(out):
                os.unlink(out)


@unittest.skipUnless(OK, WHY)
class CommandFailsTest(unittest.TestCase):
    def test_shell_statuses_and_no_capture(self):
        d = tempfile.mkdtemp(prefix="profcap-cmd-")
        try:
            def mk(name, data, mode):
                p = os.path.join(d, name)
                with open(p, "wb") as f:
                    f.write(data)
                os.chmod(p, mode)
                return p
            cases = [
                (d, 126, "Is a directory"),
                (mk("garbage", b"\x7fELF garbage", 0o755), 126, "Exec format error"),
                (mk("badint.sh", b"#!/nonexistent/interp\n", 0o755), 127, "interpreter"),
                (mk("noexec.sh", b"echo hi\n", 0o644), 126, "Permission denied"),
                ("profcap-no-such-cmd", 127, "No such file"),
            ]
            out = os.path.join(d, "out.pb")
            for cmd, status, words in cases:
                r = run_profcap(["capture", "-o", out, "--", cmd])
                self.assertEqual(r.returncode, status, f"{cmd}: {r.stderr}")
                errs = [l for l in r.stderr.splitlines() if "error:" in l]
                self.assertEqual(len(errs), 1, r.stderr)
                self.assertIn(words, errs[0])
                self.assertFalse(os.path.exists(out), cmd)
            r = run_profcap(["capture", "-o", out, "--", "sh", "-c", "exit 3"])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("exited with status 3", r.stderr)
        finally:
            shutil.rmtree(d, ignore_errors=True)


class MessagesTest(unittest.TestCase):
    def test_output_dir_error_names_output_dir(self):
        r = run_profcap(["agent", "--output-dir", "/proc/profcap-no-such-dir", "--interval", "1"],
                        timeout=30)
        self.assertNotEqual(r.returncode, 0)
        errs = [l for l in r.stderr.splitlines() if "error:" in l]
        self.assertEqual(len(errs), 1, r.stderr)
        self.assertIn("--output-dir", errs[0])
        self.assertNotIn("spool", errs[0])

    def test_agent_json_stream_is_all_json(self):
        r = run_profcap(["agent", "--json", "--output-dir", "/proc/profcap-no-such-dir",
                         "-F", "20000"], timeout=30)
        self.assertNotEqual(r.returncode, 0)
        events = [json.loads(l) for l in r.stderr.splitlines()]  # raises on a plain line
        self.assertIn("warning", [e.get("level") for e in events])
        self.assertIn("error", [e.get("level") for e in events])


if __name__ == "__main__":
    unittest.main()
