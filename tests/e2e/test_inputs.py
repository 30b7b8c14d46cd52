"""report and flamegraph read every form convert reads (OTLP, gzip'd,
OTLP/JSON, pprof, perf script text), and an input over the size limit is
refused before it is read."""
import os
import shutil
import tempfile
import time
import unittest

from capture_util import _pb2, can_sample, run_profcap

OK, WHY = can_sample()


@unittest.skipUnless(OK, WHY)
class InputFormsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-inputs-")
        cls.otlp = os.path.join(cls.dir, "c.pb")
        r = run_profcap(["capture", "-q", "--seconds", "0.5", "-o", cls.otlp])
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_report_and_flamegraph_read_every_form(self):
        for fmt, name in (("pprof", "c.pb.gz"), ("otlp-json", "c.json")):
            path = os.path.join(self.dir, name)
            r = run_profcap(["convert", "--to", fmt, "-o", path, self.otlp])
            self.assertEqual(r.returncode, 0, r.stderr)
            rep = run_profcap(["report", path])
            self.assertEqual(rep.returncode, 0, f"report {name}: {rep.stderr}")
            self.assertIn("Capture:", rep.stdout)
            svg = os.path.join(self.dir, name + ".svg")
            fg = run_profcap(["flamegraph", path, "-o", svg])
            self.assertEqual(fg.returncode, 0, f"flamegraph {name}: {fg.stderr}")
            self.assertTrue(os.path.getsize(svg) > 0)

    def test_otlp_starting_with_long_strings_is_not_text(self):
        # A capture whose first 4 KiB are a resource's strings (a long
        # command line) is mostly printable, yet OTLP, not text.
        pb = _pb2()
        data = pb.ProfilesData()
        with open(self.otlp, "rb") as f:
            data.ParseFromString(f.read())
        res = data.resource_profiles[0].resource
        kept = list(res.attributes)
        del res.attributes[:]
        kv = res.attributes.add()
        kv.key = "profcap.test.note"
        kv.value.string_value = "java -Dlong.option=value " * 300
        res.attributes.extend(kept)
        path = os.path.join(self.dir, "textlike.pb")
        raw = data.SerializeToString()
        head = raw[:4096]
        self.assertNotIn(0, head)
        self.assertLess(sum(1 for c in head if c < 0x20 and c not in (9, 10, 13)) * 20,
                        len(head))
        with open(path, "wb") as f:
            f.write(raw)
        for cmd in (["report", path], ["flamegraph", path, "-o", path + ".svg"]):
            r = run_profcap(cmd)
            self.assertEqual(r.returncode, 0, f"{cmd[0]}: {r.stderr}")

    def test_oversized_input_refused_before_reading(self):
        big = os.path.join(self.dir, "big.pb")
        with open(big, "wb") as f:
            f.truncate((1 << 30) + (1 << 20))  # sparse: nothing to read
        for cmd in (["report", big], ["flamegraph", big, "-o", big + ".svg"],
                    ["convert", big, "-o", big + ".json"]):
            t0 = time.monotonic()
            r = run_profcap(cmd)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertLess(time.monotonic() - t0, 10.0, cmd)
            # said from the size alone: reading would fail with another message
            self.assertIn("over the 1024 MiB", r.stderr)
            self.assertEqual(len([l for l in r.stderr.splitlines() if "error:" in l]), 1)


if __name__ == "__main__":
    unittest.main()
