"""profcap reads perf.data directly: `perf record -g` (frame pointers),
`--call-graph dwarf` and `-a` system-wide recordings of the unwinding
tests' ground-truth workload (nofp_main / fp_main: cb_a 40 %, burn_b 30 %,
cmp_c 30 %) give the self shares `perf report --stdio --no-children` gives,
within 1 point; convert's output passes the OTLP checks, also with
--from perf-data; a truncated and a bit-flipped file, or other input with
--from perf-data, get one error line and exit 1. Needs perf and root."""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
import unittest

from capture_util import WORKLOADS, can_sample, check_conformance, run_profcap

OK, WHY = can_sample()
PERF = shutil.which("perf")
HOT = ("cb_a", "burn_b", "cmp_c")
SECONDS = "2"


def perf_shares(path, kernel=None):
    """Self share (percent) per symbol from perf report, summed over DSOs;
    kernel symbols also go into the set @kernel."""
    r = subprocess.run([PERF, "report", "-i", path, "--stdio", "--no-children", "--sort", "sym",
                        "-g", "none", "--percent-limit", "0"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^\s+([0-9.]+)%\s+\[([.k])\]\s+(\S+)", line)
        if m:
            if m.group(2) == "k" and kernel is not None:
                kernel.add(m.group(3))
            m = re.match(r"^\s+([0-9.]+)%\s+\[[.k]\]\s+(\S+)", line)
            out[m.group(2)] = out.get(m.group(2), 0.0) + float(m.group(1))
    return out


def profcap_shares(path):
    import json
    r = run_profcap(["report", "--json", "--top", "0", path], timeout=300)
    assert r.returncode == 0, r.stderr
    out = {}
    for row in json.loads(r.stdout)["top"]:
        out[row["name"]] = out.get(row["name"], 0.0) + 100.0 * row["self_share"]
    return out, r.stderr


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(PERF, "perf is not installed (apt-get install linux-perf)")
class PerfDataTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-perfdata-")
        for w in ("nofp_main", "fp_main"):
            if not os.path.exists(os.path.join(WORKLOADS, w)):
                raise unittest.SkipTest(f"{w} not built (make all)")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def record(self, name, args, workload):
        path = os.path.join(self.dir, name)
        cmd = [PERF, "record", "-q", "-F", "499", "-e", "cpu-clock", "-o", path] + args
        if "-a" in args:
            w = subprocess.Popen([os.path.join(WORKLOADS, workload), "-d", "4"],
                                 stdout=subprocess.DEVNULL)
            time.sleep(0.3)
            r = subprocess.run(cmd + ["--", "sleep", SECONDS], capture_output=True, text=True,
                               timeout=120)
            w.kill()
            w.wait()
        else:
            r = subprocess.run(cmd + ["--", os.path.join(WORKLOADS, workload), "-d", SECONDS],
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return path

    def same_shares(self, path):
        want = perf_shares(path)
        got, err = profcap_shares(path)
        for f in HOT:
            self.assertGreater(want.get(f, 0), 5.0, f"{f}: perf report {want}")
            self.assertAlmostEqual(got.get(f, 0), want[f], delta=1.0,
                                   msg=f"{f}: profcap {got.get(f)} perf {want[f]}")
        return err

    def test_fp_callchains(self):
        path = self.record("fp.data", ["-g"], "fp_main")
        self.same_shares(path)
        out = path + ".pb"
        r = run_profcap(["convert", "-o", out, path])
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, text = check_conformance(out, profcheck="required")
        self.assertTrue(ok, text)
        # --from perf-data reads it the same; on other input it reads no
        # other kind: one error line, exit 1.
        forced = path + ".forced.pb"
        r = run_profcap(["convert", "--from", "perf-data", "-o", forced, path])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(profcap_shares(forced)[0], profcap_shares(out)[0])
        r = run_profcap(["convert", "--from", "perf-data", "-o", forced + ".2", out])
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("perf.data", lines[0])

    def test_dwarf_callchains(self):
        path = self.record("dwarf.data", ["--call-graph", "dwarf"], "nofp_main")
        self.same_shares(path)
        # The user stacks were walked: main is under nearly every sample.
        import json
        r = run_profcap(["report", "--json", "--top", "0", "--inclusive", path])
        rows = {x["name"]: x for x in json.loads(r.stdout)["top"]}
        self.assertGreater(rows["main"]["inclusive_share"], 0.9, rows.get("main"))
        self.assertGreater(rows["run_a"]["inclusive_share"], 0.3, rows.get("run_a"))
        # A library perf kept no build-id for (no sampled IP in it) is named
        # from the file, as perf report names it.
        self.assertGreater(rows["nofp_lib_step"]["inclusive_share"], 0.3, sorted(rows))
        svg = path + ".svg"
        r = run_profcap(["flamegraph", path, "-o", svg])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"cb_a", open(svg, "rb").read())

    def test_pipe_mode(self):
        path = os.path.join(self.dir, "pipe.data")
        with open(path, "wb") as out:
            r = subprocess.run([PERF, "record", "-q", "-F", "499", "-e", "cpu-clock", "-g",
                                "-o", "-", "--", os.path.join(WORKLOADS, "fp_main"), "-d",
                                SECONDS], stdout=out, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.same_shares(path)

    def test_system_wide(self):
        path = self.record("all.data", ["-a", "-g"], "nofp_main")
        kernel = set()
        want, got = perf_shares(path, kernel), profcap_shares(path)[0]
        # Kernel functions are named from this machine's kallsyms (the
        # recording's kernel and boot).
        hot_kernel = [f for f in kernel if want[f] >= 1.0]
        for f in HOT + tuple(hot_kernel):  # the workload's share of all
            self.assertAlmostEqual(got.get(f, 0), want.get(f, 0), delta=1.0,
                                   msg=f"{f}: profcap {got.get(f)} perf {want.get(f)}")
        out = path + ".pb"
        r = run_profcap(["convert", "-o", out, path])
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, text = check_conformance(out, profcheck="required")
        self.assertTrue(ok, text)

    def test_lost_samples(self):
        # A LOST record (id, 5 lost) put at the end of a real file's data
        # section: counted as dropped, said in one warning line.
        import json
        path = self.record("lost.data", ["-g"], "fp_main")
        d = bytearray(open(path, "rb").read())
        data_off, data_size = struct.unpack_from("<QQ", d, 40)
        end = data_off + data_size
        st = struct.unpack_from("<Q", d, 104 + 24)[0]  # first event's sample_type
        trailer = 8 * sum(1 for bit in (1, 2, 6, 9, 7, 16) if st >> bit & 1)
        rec = struct.pack("<IHHQQ", 2, 0, 24 + trailer, 0, 5) + b"\0" * trailer
        bits = struct.unpack_from("<4Q", d, 72)
        nfeat = sum(bin(b).count("1") for b in bits)
        for i in range(nfeat):  # feature sections move by the record's size
            o = end + 16 * i
            struct.pack_into("<Q", d, o, struct.unpack_from("<Q", d, o)[0] + len(rec))
        d[end:end] = rec
        struct.pack_into("<Q", d, 48, data_size + len(rec))
        lost = os.path.join(self.dir, "lost2.data")
        with open(lost, "wb") as f:
            f.write(d)
        r = run_profcap(["report", "--json", lost])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["capture"]["dropped_samples"], 5, r.stdout[:400])
        warn = [l for l in r.stderr.splitlines() if "lost" in l]
        self.assertEqual(len(warn), 1, r.stderr)
        self.assertIn("5 samples lost", warn[0])

    def test_damaged_files(self):
        path = self.record("small.data", ["-g"], "fp_main")
        data = open(path, "rb").read()
        cut = os.path.join(self.dir, "cut.data")
        with open(cut, "wb") as f:
            f.write(data[:len(data) // 2])
        # One bit of a record's size in the data section (the 5th record).
        off = struct.unpack_from("<Q", data, 40)[0]
        for _ in range(4):
            off += struct.unpack_from("<H", data, off + 6)[0]
        flipped = bytearray(data)
        flipped[off + 6] ^= 0x04
        flip = os.path.join(self.dir, "flip.data")
        with open(flip, "wb") as f:
            f.write(flipped)
        for bad in (cut, flip):
            for cmd in (["report", bad], ["convert", "-o", bad + ".pb", bad],
                        ["flamegraph", bad, "-o", bad + ".svg"]):
                r = run_profcap(cmd)
                self.assertEqual(r.returncode, 1, f"{cmd}: {r.stderr}")
                lines = [l for l in r.stderr.splitlines() if l.strip()]
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn("offset", lines[0])


if __name__ == "__main__":
    unittest.main()
