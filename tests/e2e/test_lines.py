"""End-to-end ground truth for source lines and inlined frames: capture the
`inlined` workload (a -O2 -g binary whose hot loop is an always-inlined
helper) and check, per sample, that the leaf location reads
    mix (inlined, a line of its loop)  <-  hot_caller (the call site's line)
in at least 80 % of the workload's samples; then that every encoder shows
them (report --lines, folded, pprof, OTLP-JSON, flame graph)."""
import gzip
import subprocess
import json
import os
import re
import shutil
import tempfile
import unittest

from capture_util import (PROFCAP, WORKLOADS, Workload, can_sample, check_conformance,
                          run_profcap, _pb2)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "workloads", "inlined.c")


def marker_lines():
    """Line numbers of the MIX_FIRST, MIX_LAST and CALL_SITE markers."""
    out = {}
    with open(SRC) as f:
        for n, line in enumerate(f, 1):
            for m in ("MIX_FIRST", "MIX_LAST", "CALL_SITE"):
                if "/* %s */" % m in line:
                    out[m] = n
    return out


def inline_share(path, m):
    """(samples whose leaf reads mix (inlined, its loop) <- hot_caller (the call
    site), samples in hot_caller or mix) of the capture at @path."""
    pb = _pb2()
    data = pb.ProfilesData()
    with open(path, "rb") as f:
        data.ParseFromString(f.read())
    d = data.dictionary
    s = d.string_table
    total = right = 0
    for rp in data.resource_profiles:
        for sp in rp.scope_profiles:
            for prof in sp.profiles:
                for smp in prof.samples:
                    locs = d.stack_table[smp.stack_index].location_indices
                    if not locs:
                        continue
                    v = sum(smp.values) or 1
                    loc = d.location_table[locs[0]]
                    fns = [d.function_table[l.function_index] for l in loc.lines]
                    names = [s[f.name_strindex] for f in fns]
                    if "hot_caller" not in names and "mix" not in names:
                        continue  # the workload's main loop, libc
                    total += v
                    if (len(loc.lines) >= 2 and names[0] == "mix"
                            and names[1] == "hot_caller"
                            and m["MIX_FIRST"] <= loc.lines[0].line <= m["MIX_LAST"]
                            and loc.lines[1].line == m["CALL_SITE"]
                            and s[fns[0].filename_strindex].endswith("inlined.c")):
                        right += v
    return right, total


class LinesGroundTruth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ok, why = can_sample()
        if not ok:
            raise unittest.SkipTest(why)
        if not os.path.exists(os.path.join(WORKLOADS, "inlined")):
            raise unittest.SkipTest("build/tests/workloads/inlined is missing: run make")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.pb = os.path.join(cls.tmp.name, "lines.pb")
        with Workload("inlined") as w:
            cls.pid = w.pid
            r = run_profcap(["capture", "-p", str(w.pid), "--seconds", "2", "-F", "499",
                             "--no-kernel", "-o", cls.pb])
        if r.returncode != 0:
            raise AssertionError("capture failed: " + r.stderr)
        cls.marks = marker_lines()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_conformant(self):
        ok, out = check_conformance(self.pb)
        self.assertTrue(ok, out)

    def test_inlined_frame_and_line(self):
        right, total = inline_share(self.pb, self.marks)
        self.assertGreater(total, 100, "too few samples in hot_caller")
        share = right / total
        print("\n# inlined frame + line right in %d of %d samples (%.1f %%)"
              % (right, total, 100.0 * share))
        self.assertGreaterEqual(share, 0.80)

    def test_mapping_attributes(self):
        pb = _pb2()
        data = pb.ProfilesData()
        with open(self.pb, "rb") as f:
            data.ParseFromString(f.read())
        d = data.dictionary
        s = d.string_table
        for mp in d.mapping_table:
            if s[mp.filename_strindex].endswith("/inlined"):
                attrs = {s[d.attribute_table[i].key_strindex]: d.attribute_table[i].value
                         for i in mp.attribute_indices}
                for k in ("has_functions", "has_filenames", "has_line_numbers",
                          "has_inline_frames"):
                    self.assertTrue(attrs["pprof.mapping." + k].bool_value, k)
                return
        self.fail("no mapping of the workload")

    def test_report_lines(self):
        r = run_profcap(["report", self.pb, "--lines", "--pid", str(self.pid), "--top", "0"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"mix \[inlined\] \S*inlined\.c:\d+")
        self.assertRegex(r.stdout, r"hot_caller \S*inlined\.c:%d" % self.marks["CALL_SITE"])

    def test_encoders(self):
        out = {}
        for fmt in ("folded", "otlp-json", "pprof", "svg"):
            path = os.path.join(self.tmp.name, "out." + fmt)
            r = run_profcap(["convert", self.pb, "-o", path, "--to", fmt])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path, "rb") as f:
                out[fmt] = f.read()
        self.assertRegex(out["folded"].decode(), r"hot_caller;mix_\[i\] \d+")
        j = json.loads(out["otlp-json"])
        locs = j["dictionary"]["locationTable"]
        self.assertTrue(any(len(l.get("lines", [])) >= 2 and "line" in l["lines"][0]
                            for l in locs))
        svg = out["svg"].decode()
        self.assertRegex(svg, r"<title>mix\n[^<]*inlined")
        self.assertRegex(svg, r"inlined\.c(:\d+| \(several lines\))")
        pp = out["pprof"]
        if pp[:2] == b"\x1f\x8b":
            pp = gzip.decompress(pp)
        # The pprof encoder's lines are checked field by field in
        # tests/unit/test_pprof.c; here: both functions are named.
        self.assertIn(b"hot_caller", pp)
        self.assertIn(b"mix", pp)


if __name__ == "__main__":
    unittest.main()


class SymbolizeLater(unittest.TestCase):
    """A capture of a stripped copy (no symbols, no DWARF: frames unnamed),
    symbolized afterwards with the debug file given by --debug-dir."""

    @classmethod
    def setUpClass(cls):
        ok, why = can_sample()
        if not ok:
            raise unittest.SkipTest(why)
        src = os.path.join(WORKLOADS, "inlined")
        if not os.path.exists(src):
            raise unittest.SkipTest("build/tests/workloads/inlined is missing: run make")
        cls.tmp = tempfile.TemporaryDirectory()
        t = cls.tmp.name
        cls.bin = os.path.join(t, "inlined_stripped")
        subprocess.run(["cp", src, cls.bin], check=True)
        notes = subprocess.run(["readelf", "-n", cls.bin], capture_output=True, text=True).stdout
        bid = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
        cls.dbg = os.path.join(t, "dbg")
        os.makedirs(os.path.join(cls.dbg, ".build-id", bid[:2]))
        subprocess.run(["objcopy", "--only-keep-debug", cls.bin,
                        os.path.join(cls.dbg, ".build-id", bid[:2], bid[2:] + ".debug")],
                       check=True)
        subprocess.run(["strip", "--strip-all", cls.bin], check=True)
        cls.pb = os.path.join(t, "stripped.pb")
        w = subprocess.Popen([cls.bin], stdout=subprocess.PIPE, text=True)
        try:
            w.stdout.readline()
            r = run_profcap(["capture", "-p", str(w.pid), "--seconds", "1", "-F", "499",
                             "--no-kernel", "-o", cls.pb])
        finally:
            w.kill()
            w.wait()
        if r.returncode != 0:
            raise AssertionError("capture failed: " + r.stderr)
        # Only the debug file knows the names: hide the stripped binary too.
        os.rename(cls.bin, cls.bin + ".moved")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_unnamed_then_named(self):
        before = run_profcap(["report", self.pb, "--top", "0"])
        self.assertEqual(before.returncode, 0, before.stderr)
        self.assertNotIn("hot_caller", before.stdout)
        after = run_profcap(["report", self.pb, "--top", "0", "--lines",
                             "--debug-dir", self.dbg])
        self.assertEqual(after.returncode, 0, after.stderr)
        self.assertRegex(after.stdout, r"mix \[inlined\] \S*inlined\.c:\d+")
        self.assertRegex(after.stdout, r"hot_caller \S*inlined\.c:%d"
                         % marker_lines()["CALL_SITE"])
        self.assertIn("symbolized with", after.stderr)

    def test_convert_symbolized_is_conformant(self):
        out = os.path.join(self.tmp.name, "symbolized.pb")
        r = run_profcap(["convert", self.pb, "--symbolize", "--debug-dir", self.dbg,
                         "--to", "otlp", "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, text = check_conformance(out)
        self.assertTrue(ok, text)
        svg = os.path.join(self.tmp.name, "s.svg")
        r = run_profcap(["flamegraph", self.pb, "--debug-dir", self.dbg, "-o", svg])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(svg) as f:
            self.assertIn("hot_caller", f.read())


class DistroDwarf(unittest.TestCase):
    """What distributions ship: compressed debug sections, clang's DWARF
    without .debug_aranges, and dwz's shared alternate file."""

    @classmethod
    def setUpClass(cls):
        ok, why = can_sample()
        if not ok:
            raise unittest.SkipTest(why)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.marks = marker_lines()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def build(self, name, cc="gcc"):
        out = os.path.join(self.tmp.name, name)
        subprocess.run([cc, "-O2", "-g", "-fno-omit-frame-pointer", "-o", out, SRC], check=True)
        return out

    def assertLines(self, binary):
        pb = binary + ".pb"
        proc = subprocess.Popen([binary], stdout=subprocess.PIPE, text=True)
        try:
            self.assertTrue(proc.stdout.readline().startswith("ready"))
            r = run_profcap(["capture", "-p", str(proc.pid), "--seconds", "2", "-F", "499",
                             "--no-kernel", "-o", pb])
        finally:
            proc.kill()
            proc.wait()
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, why = check_conformance(pb)
        self.assertTrue(ok, why)
        right, total = inline_share(pb, self.marks)
        self.assertGreater(total, 100, "too few samples in hot_caller")
        print("\n# %s: inlined frame + line right in %d of %d samples"
              % (os.path.basename(binary), right, total))
        self.assertGreaterEqual(right / total, 0.80)

    def test_compressed_debug_sections(self):
        b = self.build("inlined_zlib")
        subprocess.run(["objcopy", "--compress-debug-sections=zlib-gabi", b], check=True)
        sections = subprocess.run(["readelf", "-SW", b], capture_output=True, text=True).stdout
        self.assertRegex(sections, r"\.debug_info .* C ", "objcopy did not compress")
        self.assertLines(b)

    def test_clang_without_aranges(self):
        if not shutil.which("clang"):
            self.skipTest("clang not installed (build.sh installs it)")
        b = self.build("inlined_clang", cc="clang")
        sections = subprocess.run(["readelf", "-SW", b], capture_output=True, text=True).stdout
        self.assertNotIn(".debug_aranges", sections)
        self.assertLines(b)

    def test_dwz_alternate_file(self):
        if not shutil.which("dwz"):
            self.skipTest("dwz not installed (build.sh installs it)")
        a, b = self.build("inlined_dwz_a"), self.build("inlined_dwz_b")
        common = os.path.join(self.tmp.name, "common.debug")
        subprocess.run(["dwz", "-m", common, "-M", common, a, b], check=True)
        sections = subprocess.run(["readelf", "-SW", a], capture_output=True, text=True).stdout
        self.assertIn(".gnu_debugaltlink", sections)
        self.assertLines(a)

