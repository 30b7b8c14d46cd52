"""End-to-end tests of the processes a capture follows (root: real BPF
sampling): the CPU before an exec stays with the old program (its own
resource, frames named from its own mappings, its thread name) and the CPU
after it goes to the new one, for `capture -- CMD`, `-p PID` and
system-wide captures; SIGINT and SIGTERM sent by a process (not a terminal)
during `-- CMD`; `-p` targets that exit; `--comm` given a program's name."""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, WORKLOADS, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
GT = os.path.join(WORKLOADS, "groundtruth")

# A shell that burns CPU in its own code (a counting loop), then becomes
# groundtruth, whose main thread is named gt-main.
LOOP = 'i=0; while [ $i -lt {n} ]; do i=$((i+1)); done; exec {gt} -d {d} >/dev/null'


def of_pid(d, pid):
    return [r for r in d["resources"] if r["attrs"]["process.pid"] == pid and r["samples"]]


def total(res):
    return sum(s["value"] for s in res["samples"])


class ExecTests(unittest.TestCase):
    def setUp(self):
        if not OK:
            self.skipTest(WHY)
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "cap.pb")

    def tearDown(self):
        self.tmp.cleanup()

    def check_split(self, pid):
        """The capture holds @pid as two programs: the shell before the exec,
        groundtruth after it, each with its own samples only."""
        d = decode(self.out)
        res = of_pid(d, pid)
        names = sorted(r["attrs"]["process.executable.name"] for r in res)
        self.assertEqual(len(res), 2, f"one resource per program: {names}")
        new = [r for r in res if r["attrs"]["process.executable.name"] == "groundtruth"]
        old = [r for r in res if r["attrs"]["process.executable.name"] != "groundtruth"]
        self.assertEqual(len(new), 1, names)
        new, old = new[0], old[0]
        self.assertIn(old["attrs"]["process.executable.name"], ("dash", "bash", "sh", "busybox"))
        # Threads: the shell's samples are the old program's, gt-main's the new one's.
        self.assertEqual({s["attrs"].get("thread.name") for s in old["samples"]}, {"sh"})
        # exec() names the thread after the program; groundtruth then renames it.
        self.assertLessEqual({s["attrs"].get("thread.name") for s in new["samples"]},
                             {"groundtruth", "gt-main"})
        self.assertGreater(total(old), 5, "the loop before the exec was sampled")
        self.assertGreater(total(new), 2, "groundtruth was sampled")
        old_fns = {f[0] for s in old["samples"] for f in s["frames"]}
        self.assertFalse(old_fns & {"burn_a", "burn_b", "burn_c", "chain_a"},
                         "no groundtruth frame under the shell")
        # The shell's user frames are in its own mappings (the program or
        # libc), not raw addresses outside any mapping.
        user = [f for s in old["samples"] for f in s["frames"] if f[1] == "native"]
        mapped = [f for f in user if f[2]]
        self.assertTrue(user)
        self.assertGreaterEqual(len(mapped), 0.95 * len(user),
                                f"{len(user) - len(mapped)} of {len(user)} shell frames unmapped")
        new_fns = {f[0] for s in new["samples"] for f in s["frames"]}
        self.assertTrue({"burn_a", "burn_b", "burn_c"} <= new_fns, new_fns)
        ok, out = check_conformance(self.out)
        self.assertTrue(ok, out)

    def test_cmd_exec_keeps_shell_samples(self):
        r = run_profcap(["capture", "-o", self.out, "--", "sh", "-c",
                         LOOP.format(n=600000, gt=GT, d=1.5)])
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = int(r.stderr.split("(pid ")[1].split(")")[0])
        self.check_split(pid)

    def start_shell(self, n):
        """A shell waiting for a go file, then the loop and the exec."""
        go = os.path.join(self.tmp.name, "go")
        script = f"while [ ! -e {go} ]; do sleep 0.05; done; " + LOOP.format(n=n, gt=GT, d=2.5)
        p = subprocess.Popen(["sh", "-c", script])
        return p, go

    def test_pid_exec_keeps_shell_samples(self):
        p, go = self.start_shell(1500000)
        try:
            cap = subprocess.Popen([PROFCAP, "capture", "-o", self.out, "-p", str(p.pid),
                                    "--seconds", "6"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            open(go, "w").close()
            out, err = cap.communicate(timeout=120)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            p.kill()
            p.wait()
        self.check_split(p.pid)

    def test_system_wide_exec_keeps_shell_samples(self):
        p, go = self.start_shell(1500000)
        try:
            cap = subprocess.Popen([PROFCAP, "capture", "-o", self.out, "--seconds", "6"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            open(go, "w").close()
            out, err = cap.communicate(timeout=120)
            self.assertEqual(cap.returncode, 0, err)
        finally:
            p.kill()
            p.wait()
        self.check_split(p.pid)


def cmd_pid(err):
    """CMD's pid from profcap's closing lines."""
    return int(err.split("(pid ")[1].split(")")[0])


class StopTests(unittest.TestCase):
    """Signals from a parent that is not a terminal, and targets that exit."""

    def setUp(self):
        if not OK:
            self.skipTest(WHY)
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "cap.pb")
        self.left = []

    def tearDown(self):
        for pid in self.left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.tmp.cleanup()

    def capture(self, args):
        return subprocess.Popen([PROFCAP, "capture", "-o", self.out] + args,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    def signal_after(self, p, delay, sig):
        time.sleep(delay)
        p.send_signal(sig)
        return time.monotonic()

    def test_sigint_from_a_process_stops_cmd(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            p = self.capture(["--", "sleep", "20"])
            t0 = self.signal_after(p, 2.0, sig)
            out, err = p.communicate(timeout=60)
            took = time.monotonic() - t0
            self.assertEqual(p.returncode, 0, err)
            self.assertLess(took, 8, f"{sig.name}: profcap took {took:.1f} s to stop")
            self.assertIn(f"was killed by signal {int(sig)}", err)
            ok, msg = check_conformance(self.out)
            self.assertTrue(ok, msg)

    def test_second_sigint_ends_the_wait(self):
        # CMD ignores SIGINT: the first one stops the capture and is passed on
        # (ignored), the second one ends profcap's wait for CMD.
        # (CMD's output elsewhere: profcap's pipes close when profcap exits)
        p = self.capture(["--", "sh", "-c", "exec >/dev/null 2>&1; trap '' INT; sleep 20"])
        self.signal_after(p, 2.0, signal.SIGINT)
        time.sleep(1.0)
        t0 = self.signal_after(p, 0, signal.SIGINT)
        out, err = p.communicate(timeout=60)
        took = time.monotonic() - t0
        self.left.append(cmd_pid(err))
        self.assertEqual(p.returncode, 0, err)
        self.assertLess(took, 5, f"profcap took {took:.1f} s after the second SIGINT")
        self.assertIn("not waiting for 'sh'", err)
        self.assertIn("wrote ", err)
        ok, msg = check_conformance(self.out)
        self.assertTrue(ok, msg)

    def test_sigint_while_waiting_after_seconds(self):
        # --seconds ended the capture; profcap waits for CMD: a SIGINT goes on.
        p = self.capture(["--seconds", "1", "--", "sleep", "20"])
        t0 = self.signal_after(p, 3.0, signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertIn("was killed by signal 2", err)

    def test_pid_target_exit_ends_capture(self):
        w = subprocess.Popen([GT, "-d", "1.5"], stdout=subprocess.DEVNULL)
        try:
            t0 = time.monotonic()
            p = self.capture(["-p", str(w.pid), "--seconds", "30"])
            out, err = p.communicate(timeout=60)
            took = time.monotonic() - t0
        finally:
            w.kill()
            w.wait()
        self.assertEqual(p.returncode, 0, err)
        self.assertLess(took, 10, f"the capture went on {took:.1f} s")
        self.assertEqual(sum(1 for l in err.splitlines() if "has exited" in l), 1, err)
        self.assertIn(f"process {w.pid} has exited: the capture ends", err)
        self.assertRegex(err, r"captured \d+ samples?, 1 process, \d+ stacks?;")
        d = decode(self.out)
        self.assertGreater(sum(total(r) for r in of_pid(d, w.pid)), 10)

    def test_progress_line_of_cmd(self):
        # On a terminal, -- CMD without --seconds shows the time elapsed
        # only (it has no length), with singular and plural nouns.
        import pty
        master, slave = pty.openpty()
        try:
            p = subprocess.Popen([PROFCAP, "capture", "-o", self.out, "--", "sleep", "1.2"],
                                 stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
            os.close(slave)
            text = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                text += chunk
            p.wait(timeout=60)
        finally:
            os.close(master)
        text = text.decode(errors="replace")
        lines = [l for l in text.replace("\r", "\n").splitlines() if "capturing" in l]
        self.assertTrue(lines, text)
        for l in lines:
            self.assertRegex(l, r"capturing \d+\.\ds, \d+ samples?$")
            self.assertNotIn(" / ", l)
        self.assertRegex(text, r"captured \d+ samples?, \d+ process(es)?, \d+ stacks?;")

    def test_comm_program_name_says_which_name(self):
        # groundtruth names its main thread gt-main: --comm with the
        # executable's name keeps nothing, and says which name to give. (A
        # copy of its own name: other groundtruth processes on the host keep
        # their program's name until they rename themselves.)
        exe = os.path.join(self.tmp.name, "gtexe%05d" % (os.getpid() % 100000))
        shutil.copy(GT, exe)
        w = subprocess.Popen([exe, "-d", "20"], stdout=subprocess.PIPE, text=True)
        try:
            w.stdout.readline()  # ready: gt-main is named by then
            r = run_profcap(["capture", "-o", self.out, "--seconds", "2", "--comm",
                             os.path.basename(exe)])
        finally:
            w.kill()
            w.wait()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--comm matches thread names", r.stderr)
        self.assertIn(f"-p {w.pid}", r.stderr)


if __name__ == "__main__":
    unittest.main()
