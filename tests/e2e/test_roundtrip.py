"""End-to-end round trips between the formats `convert` writes and reads, on
a corpus of real captures: CPU with inlined frames, system-wide CPU and
off-CPU with truncated stacks (a small unwind row store), thread context
with links and attributes.

For each capture:
  OTLP -> OTLP/JSON -> OTLP   gives back the very bytes OTLP -> OTLP does,
                              and every field of the original;
  OTLP -> pprof -> OTLP       keeps every field pprof can hold (each value
                              type on its own, `convert --type`): samples,
                              values, stacks, locations with all their lines
                              in order, functions (name, system name, file,
                              start line), mappings (range, offset, file,
                              build id, has_* flags), thread and process
                              attributes, links, off-CPU labels, thread-
                              context attributes, value types, period, time,
                              duration and the loss counts;
  pprof -> OTLP -> pprof      gives back the same pprof bytes;
  `go tool pprof -raw`        (when Go is installed) reads the same samples,
                              locations with their inline chains, mappings
                              and comments from profcap's pprof as profcap
                              reads back.
The official checker runs on every OTLP file (check_conformance).
"""
import collections
import contextlib
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from capture_util import (PROFCAP, WORKLOADS, Workload, _anyvalue, _pb2, can_sample,  # noqa: E402
                          check_conformance, run_profcap)

LOC_HEAD = re.compile(r"^\s*(\d+): (0x[0-9a-f]+)(?: M=(\d+))? ?(.*)$")
# "  VALUE [VALUE...]: LOCATION_ID..." of a sample.
SAMPLE_LINE = re.compile(r"^\s+(\d+)(?:\s+\d+)*: ((?:\d+ ?)*)$")
# "function file:line s=start_line", then "(system name)" when it differs.
# A file may hold spaces when it is a <pseudo file> (CPython's "<frozen
# importlib._bootstrap>"): the shortest function name that leaves one.
LOC_LINE = re.compile(r"^(.*?) (<[^>]*>|\S*):(-?\d+) s=(-?\d+)(?:\((.*)\))?$")
GO = shutil.which("go") or ("/usr/bin/go" if os.path.exists("/usr/bin/go") else None)

# What pprof has no place for: resource attributes other than the process's
# own, scope, profile ids, mapping ids other than the GNU build id.
PPROF_RESOURCE_KEYS = {"process.pid", "process.executable.name", "process.executable.path",
                       "process.command_line", "container.id"}
PPROF_MAPPING_KEYS = {"process.executable.build_id.gnu", "pprof.mapping.has_functions",
                      "pprof.mapping.has_filenames", "pprof.mapping.has_line_numbers",
                      "pprof.mapping.has_inline_frames"}


def load(path):
    data = _pb2().ProfilesData()
    with open(path, "rb") as f:
        data.ParseFromString(f.read())
    return data


def canonical(path, pprof_view=False, sample_type=None):
    """Everything a capture says, with dictionary indices resolved, as
    sorted plain data. @pprof_view leaves out what pprof cannot hold;
    @sample_type keeps only the Profiles of that type."""
    d = load(path)
    t = d.dictionary
    s = t.string_table

    def attr(i):
        a = t.attribute_table[i]
        return (s[a.key_strindex], _anyvalue(a.value), s[a.unit_strindex])

    def mapping(i):
        if not i:
            return None
        m = t.mapping_table[i]
        attrs = sorted((attr(j) for j in m.attribute_indices
                        if not pprof_view or attr(j)[0] in PPROF_MAPPING_KEYS), key=repr)
        return (m.memory_start, m.memory_limit, m.file_offset, s[m.filename_strindex],
                tuple(attrs))

    def function(i):
        f = t.function_table[i]
        return (s[f.name_strindex], s[f.system_name_strindex], s[f.filename_strindex],
                f.start_line)

    def frame_attr(j):
        a = attr(j)
        # pprof has no frame types: it keeps kernel and native apart by the
        # mapping, and reads any other (cpython, v8js, ...) back as native;
        # convert names those in its "cannot hold" line.
        if pprof_view and a[0] == "profile.frame.type" and a[1] not in ("native", "kernel"):
            return (a[0], "native", a[2])
        return a

    def location(i):
        loc = t.location_table[i]
        lines = tuple((function(ln.function_index), ln.line, ln.column) for ln in loc.lines)
        return (mapping(loc.mapping_index), loc.address, lines,
                tuple(sorted((frame_attr(j) for j in loc.attribute_indices), key=repr)))

    def link(i):
        if not i:
            return None
        ln = t.link_table[i]
        return (ln.trace_id.hex(), ln.span_id.hex())

    out, facts = [], {}
    for rp in d.resource_profiles:
        rattrs = sorted((kv.key, _anyvalue(kv.value)) for kv in rp.resource.attributes
                        if not pprof_view or kv.key in PPROF_RESOURCE_KEYS)
        profs = []
        for sp in rp.scope_profiles:
            for p in sp.profiles:
                st = (s[p.sample_type.type_strindex], s[p.sample_type.unit_strindex])
                # Capture-wide facts (loss counts, pprof fields), summed
                # over every Profile whatever its type.
                for j in p.attribute_indices:
                    k, v, u = attr(j)
                    facts[(k, u)] = facts.get((k, u), 0) + v if isinstance(v, int) else v
                if sample_type and st[0] != sample_type:
                    continue
                samples = sorted(
                    ((tuple(location(li) for li in t.stack_table[x.stack_index].location_indices),
                      tuple(sorted((attr(j) for j in x.attribute_indices), key=repr)), link(x.link_index),
                      tuple(x.values), len(x.timestamps_unix_nano))
                     for x in p.samples), key=repr)
                profs.append((st, (s[p.period_type.type_strindex], s[p.period_type.unit_strindex]),
                              p.period, p.time_unix_nano, p.duration_nano, tuple(samples)))
        if profs or not sample_type:
            out.append((tuple(rattrs), tuple(profs)))
    return sorted(facts.items()), sorted(out, key=repr)


def sample_types(path):
    d = load(path)
    s = d.dictionary.string_table
    return sorted({s[p.sample_type.type_strindex] for rp in d.resource_profiles
                   for sp in rp.scope_profiles for p in sp.profiles})


def go_raw(path, home):
    """`go tool pprof -raw` of @path as (samples, locations, mappings,
    comments): samples a Counter of (first value, location ids); locations
    id -> (address, mapping id, ((function, file, line, start line), ...));
    mappings as printed after their id."""
    r = subprocess.run([GO, "tool", "pprof", "-raw", "-symbolize=none", path],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, HOME=home))
    if r.returncode:
        raise AssertionError("go tool pprof -raw failed: " + r.stderr)
    samples, locs, maps, comments = collections.Counter(), {}, {}, []
    section, cur = None, None
    for line in r.stdout.splitlines():
        if line.startswith("Comment:") or line.startswith("Comments:"):
            comments.append(line.split(":", 1)[1].strip())
            continue
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        m = SAMPLE_LINE.match(line) if section == "Samples:" else None
        if m:  # labels (a value may hold a newline) are other lines
            samples[(int(m.group(1)), tuple(int(x) for x in m.group(2).split()))] += 1
        elif section == "Locations":
            m = LOC_HEAD.match(line)
            if m:
                cur = int(m.group(1))
                locs[cur] = [int(m.group(2), 16), int(m.group(3) or 0), []]
                rest = m.group(4)
            else:
                rest = line.strip()
            m = LOC_LINE.match(rest)
            if rest.strip() and not m:
                raise AssertionError("go tool pprof -raw: unexpected line " + repr(line))
            if m:
                fn, fname, lno, start, sysname = m.groups()
                locs[cur][2].append((fn, sysname or fn, fname, int(lno), int(start)))
        elif section == "Mappings" and ":" in line:
            mid, rest = line.split(":", 1)
            maps[int(mid)] = rest.strip()
    return samples, {k: (a, m, tuple(ln)) for k, (a, m, ln) in locs.items()}, maps, comments


def go_view(raw):
    """go_raw()'s samples as a Counter of (value, ((file, file address,
    lines), ...)): comparable with profcap_view() whatever the ids. pprof
    merges the locations of one library mapped at different addresses in
    several processes, so a frame is named by its file and file address."""
    samples, locs, maps, _ = raw
    out = collections.Counter()

    def frame(i):
        addr, mid, lines = locs[i]
        if not mid:
            return ("", addr, lines)
        start, _, offset = (int(x, 16) for x in maps[mid].split()[0].split("/"))
        return (maps[mid].split()[1], addr - start + offset, lines)

    for (value, ids), n in samples.items():
        out[(value, tuple(frame(i) for i in ids))] += n
    return out


def profcap_view(path):
    """The same view of an OTLP file profcap wrote back from pprof."""
    d = load(path)
    t = d.dictionary
    s = t.string_table
    out = collections.Counter()
    for rp in d.resource_profiles:
        for sp in rp.scope_profiles:
            for p in sp.profiles:
                for x in p.samples:
                    frames = []
                    for li in t.stack_table[x.stack_index].location_indices:
                        loc = t.location_table[li]
                        fns = [t.function_table[ln.function_index] for ln in loc.lines]
                        lines = tuple((s[f.name_strindex], s[f.system_name_strindex] or
                                       s[f.name_strindex], s[f.filename_strindex], ln.line,
                                       f.start_line) for f, ln in zip(fns, loc.lines))
                        if loc.mapping_index:
                            m = t.mapping_table[loc.mapping_index]
                            frames.append((s[m.filename_strindex],
                                           loc.address - m.memory_start + m.file_offset, lines))
                        else:
                            frames.append(("", loc.address, lines))
                    out[(x.values[0], tuple(frames))] += 1
    return out


@unittest.skipUnless(can_sample()[0], can_sample()[1])
class TestRoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.corpus = {}
        d = cls.tmp.name
        # CPU of a process whose hot loop is an inlined function.
        path = os.path.join(d, "inline.pb")
        with Workload("inlined") as w:
            r = run_profcap(["capture", "-q", "-p", str(w.pid), "--seconds", "2", "-F", "499",
                             "-o", path])
        cls.assert_rc(r)
        cls.corpus["inline"] = path
        # System-wide CPU and off-CPU; a small unwind row store leaves
        # stacks truncated, so the loss counts are set.
        path = os.path.join(d, "system.pb")
        sleeper = subprocess.Popen(["sh", "-c", "while :; do sleep 0.01; done"])
        try:
            with Workload("inlined"):
                r = run_profcap(["capture", "-q", "--off-cpu", "--seconds", "2", "-F", "199",
                                 "-o", path], env={"PROFCAP_UNWIND_ROWS": "64"})
        finally:
            sleeper.kill()
            sleeper.wait()
        cls.assert_rc(r)
        cls.corpus["system"] = path
        # Thread context: links (trace and span ids) and attributes.
        path = os.path.join(d, "tctx.pb")
        gofile, truth = os.path.join(d, "go"), os.path.join(d, "truth.json")
        with Workload("threadctx_writer", "-g", gofile, "-d", "2", "-o", truth, "-t", "2",
                      "-m") as w:
            cap = subprocess.Popen([PROFCAP, "capture", "-q", "-p", str(w.pid), "--seconds", "3",
                                    "-F", "499", "-o", path],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            open(gofile, "w").close()
            _, err = cap.communicate(timeout=120)
        if cap.returncode:
            raise AssertionError("capture failed: " + err)
        cls.corpus["tctx"] = path

    @classmethod
    def assert_rc(cls, r):
        if r.returncode:
            raise AssertionError("capture failed: " + r.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @contextlib.contextmanager
    def where(self, what):
        """Name the capture in a failure (the runner prints no subtests)."""
        try:
            yield
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}") from None

    def convert(self, src, dst, *args):
        r = run_profcap(["convert", src, "-o", dst, *args])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def conformant(self, path):
        ok, out = check_conformance(path)
        self.assertTrue(ok, out)

    def test_corpus_has_what_it_should(self):
        """The corpus holds inline chains, truncation counts, off-CPU and
        links, so the round trips below check them."""
        _, inline = canonical(self.corpus["inline"])
        self.assertTrue(any(len(loc[2]) > 1 for _, profs in inline for p in profs
                            for smp in p[5] for loc in smp[0]), "no inline chain")
        facts, _ = canonical(self.corpus["system"])
        self.assertIn("profcap.samples.truncated", {k for (k, _), _ in facts})
        self.assertIn("off_cpu", sample_types(self.corpus["system"]))
        _, tctx = canonical(self.corpus["tctx"])
        self.assertTrue(any(smp[2] for _, profs in tctx for p in profs for smp in p[5]),
                        "no link")

    def test_otlp_json_otlp(self):
        for name, src in self.corpus.items():
            with self.where(name):
                self.conformant(src)
                js = os.path.join(self.tmp.name, name + ".json")
                back = os.path.join(self.tmp.name, name + ".json.pb")
                same = os.path.join(self.tmp.name, name + ".otlp.pb")
                self.convert(src, js)
                self.convert(js, back)
                self.convert(src, same)
                self.conformant(back)
                with open(back, "rb") as a, open(same, "rb") as b:
                    self.assertEqual(a.read(), b.read(), "OTLP/JSON changed the bytes")
                self.assertEqual(canonical(back), canonical(src))

    def test_otlp_pprof_otlp(self):
        for name, src in self.corpus.items():
            for st in sample_types(src):
                with self.where(f"{name} ({st})"):
                    kind = "off_cpu" if st == "off_cpu" else "cpu"
                    f = os.path.join(self.tmp.name, f"{name}.{kind}.")
                    pp, back, again = f + "pb.gz", f + "back.pb", f + "again.pb.gz"
                    self.convert(src, pp, "--type", kind)
                    self.convert(pp, back)
                    self.conformant(back)
                    want = canonical(src, pprof_view=True, sample_type=st)
                    got = canonical(back, pprof_view=True)
                    self.assertEqual(got, want)
                    # pprof -> OTLP -> pprof, from the pprof profcap wrote
                    # (the first one's string table also holds strings of
                    # what pprof cannot carry): the same pprof bytes.
                    # --from otlp: cli/input.c takes some OTLP files whose
                    # first 4 KiB are mostly strings for text.
                    self.convert(back, again, "--from", "otlp")
                    back2, again2 = f + "back2.pb", f + "again2.pb.gz"
                    self.convert(again, back2)
                    self.convert(back2, again2, "--from", "otlp")
                    with gzip.open(again) as a, gzip.open(again2) as b:
                        self.assertEqual(a.read(), b.read(), "pprof -> OTLP -> pprof differs")
                    if GO:
                        raw = go_raw(pp, self.tmp.name)
                        self.same_view(go_view(raw), profcap_view(back))
                        self.assertEqual(go_view(go_raw(again, self.tmp.name)), go_view(raw))

    def same_view(self, go, ours):
        """go_view() == profcap_view(), failing with the first frames that
        differ rather than a diff of the whole views."""
        if go == ours:
            return

        def lines(v):
            return {ln for (_, frames) in v for f in frames for ln in f[2]}

        a, b = lines(go), lines(ours)
        self.fail(f"go and profcap read the pprof apart: only go {sorted(a - b, key=repr)[:4]}, "
                  f"only profcap {sorted(b - a, key=repr)[:4]}, "
                  f"samples {sum(go.values())} vs {sum(ours.values())}")

    def test_go_sees_inline_chains_and_losses(self):
        if not GO:
            self.skipTest("go is not installed (go tool pprof)")
        pp = os.path.join(self.tmp.name, "inline.go.pb.gz")
        self.convert(self.corpus["inline"], pp)
        _, locs, maps, _ = go_raw(pp, self.tmp.name)
        self.assertTrue(any(len(ln) > 1 for _, _, ln in locs.values()), "no inline chain")
        self.assertTrue(any("[IN]" in m for m in maps.values()))
        pp = os.path.join(self.tmp.name, "system.go.pb.gz")
        self.convert(self.corpus["system"], pp)
        _, _, _, comments = go_raw(pp, self.tmp.name)
        self.assertTrue(any(c.startswith("profcap.samples.truncated=") for c in comments),
                        comments)

    def test_convert_names_what_pprof_cannot_hold(self):
        """One stderr line names the OTLP-only fields the capture has."""
        pp = os.path.join(self.tmp.name, "sys.names.pb.gz")
        r = self.convert(self.corpus["system"], pp)
        lines = [ln for ln in r.stderr.splitlines() if "pprof cannot hold" in ln]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("host.name", lines[0])
        self.assertIn("off_cpu", lines[0])


if __name__ == "__main__":
    unittest.main()
