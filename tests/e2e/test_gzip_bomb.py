"""A gzip bomb (1 GiB of zeros, about 4.6 MB compressed) given to `report`
and `convert` inside a 300 MB memory cgroup: one clear error line and exit 1,
not an OOM kill. The memory controller is taken from the cgroup v2 mount when
it has one, else from the v1 memory hierarchy (hybrid hosts); skipped with a
reason when neither can be used (not root, no memory controller)."""
import os
import subprocess
import tempfile
import unittest
import zlib

from capture_util import PROFCAP, cgroup2_mount

LIMIT = 300 * 1024 * 1024


def write_bomb(path, size=1 << 30):
    """gzip of @size zero bytes, written in slices (constant memory)."""
    c = zlib.compressobj(1, zlib.DEFLATED, 16 + 15)
    chunk = bytes(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size // len(chunk)):
            f.write(c.compress(chunk))
        f.write(c.flush())


class MemoryGroup:
    """A fresh memory cgroup limited to LIMIT bytes (v2 or v1)."""

    def __init__(self):
        self.path = self.procs = None
        v2 = cgroup2_mount()
        if v2 and "memory" in open(os.path.join(v2, "cgroup.controllers")).read().split():
            self.path = tempfile.mkdtemp(prefix="profcap-bomb.", dir=v2)
            with open(os.path.join(self.path, "memory.max"), "w") as f:
                f.write(str(LIMIT))
            with open(os.path.join(self.path, "memory.swap.max"), "w") as f:
                f.write("0")
            self.events = os.path.join(self.path, "memory.events")
        elif os.path.exists("/sys/fs/cgroup/memory/cgroup.procs"):
            self.path = tempfile.mkdtemp(prefix="profcap-bomb.", dir="/sys/fs/cgroup/memory")
            with open(os.path.join(self.path, "memory.limit_in_bytes"), "w") as f:
                f.write(str(LIMIT))
            self.events = None
        else:
            raise unittest.SkipTest("no memory cgroup controller here (v1 or v2)")
        self.procs = os.path.join(self.path, "cgroup.procs")

    def oom_kills(self):
        if self.events:
            with open(self.events) as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k == "oom_kill":
                        return int(v)
            return 0
        with open(os.path.join(self.path, "memory.oom_control")) as f:
            for line in f:
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    return int(v)
        return 0

    def run(self, args):
        # The child moves itself into the group before exec'ing profcap.
        return subprocess.run(["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', self.procs]
                              + args, capture_output=True, text=True, timeout=120)

    def remove(self):
        if self.path:
            os.rmdir(self.path)


@unittest.skipUnless(os.geteuid() == 0, "needs root to create a memory cgroup")
@unittest.skipUnless(os.path.exists(PROFCAP), "build/profcap is missing: run ./build.sh")
class GzipBombTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.bomb = os.path.join(cls.tmp.name, "bomb.pb.gz")
        write_bomb(cls.bomb)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.group = MemoryGroup()

    def tearDown(self):
        self.group.remove()

    def assert_one_error(self, r):
        self.assertEqual(r.returncode, 1, "exit %d (killed?): %s" % (r.returncode, r.stderr))
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("profcap: error: "), r.stderr)
        self.assertIn("gzip", lines[0])
        self.assertEqual(self.group.oom_kills(), 0, "the OOM killer ran in the group")

    def test_bomb_size(self):
        size = os.path.getsize(self.bomb)
        self.assertGreater(size, 1 << 20)
        self.assertLess(size, 8 << 20)

    def test_report(self):
        self.assert_one_error(self.group.run([PROFCAP, "report", self.bomb]))

    def test_convert(self):
        out = os.path.join(self.tmp.name, "out.pb")
        self.assert_one_error(self.group.run([PROFCAP, "convert", self.bomb, "-o", out,
                                              "--to", "otlp"]))
        self.assertFalse(os.path.exists(out))


    def test_convert_pprof(self):
        out = os.path.join(self.tmp.name, "out2.pb")
        self.assert_one_error(self.group.run([PROFCAP, "convert", self.bomb, "--from", "pprof",
                                              "-o", out, "--to", "otlp"]))


if __name__ == "__main__":
    unittest.main()
