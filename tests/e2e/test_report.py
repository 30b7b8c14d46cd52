"""End-to-end tests of `profcap report` and `profcap flamegraph`: synthetic
OTLP files with known contents (no root needed), and a real capture of the
ground-truth workload (root)."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

from capture_util import PROFCAP, Workload, can_sample, run_profcap

HERE = os.path.dirname(os.path.abspath(__file__))
SVG_NS = "{http://www.w3.org/2000/svg}"


def _pb():
    # Generated on first use: this suite may run before any conformance check.
    import otlp_check  # noqa: E402

    gen = otlp_check.generate("ours") or os.path.join(HERE, "gen", "ours")
    if gen not in sys.path:
        sys.path.insert(0, gen)
    from opentelemetry.proto.profiles.v1development import profiles_pb2  # noqa: E402
    return profiles_pb2


def write_capture(path, processes, host="synth-host", period=1001001, duration=2_000_000_000,
                  time_ns=1_700_000_000_000_000_000, compress=False):
    """Write a ProfilesData file the way another OTLP tool might.

    processes: [{"pid": int, "exe": str, "samples": [(tid, thread_name,
    [(function, frame_type, mapping_path), ...leaf first], value), ...]}]."""
    pb = _pb()
    data = pb.ProfilesData()
    d = data.dictionary
    strings, attrs, funcs, maps, locs, stacks = {}, {}, {}, {}, {}, {}

    def s(v):
        if v not in strings:
            strings[v] = len(d.string_table)
            d.string_table.append(v)
        return strings[v]

    def attr(key, value):
        k = (key, value)
        if k not in attrs:
            attrs[k] = len(d.attribute_table)
            a = d.attribute_table.add(key_strindex=s(key))
            if isinstance(value, int):
                a.value.int_value = value
            else:
                a.value.string_value = value
        return attrs[k]

    def mapping(p):
        if p not in maps:
            maps[p] = len(d.mapping_table)
            d.mapping_table.add(memory_start=0x1000 * len(maps), memory_limit=0x1000 * len(maps) + 0x1000,
                                filename_strindex=s(p))
        return maps[p]

    def loc(frame):
        if frame not in locs:
            fn, ftype, mp = frame
            if fn not in funcs:
                funcs[fn] = len(d.function_table)
                d.function_table.add(name_strindex=s(fn), system_name_strindex=s(fn))
            locs[frame] = len(d.location_table)
            l = d.location_table.add(mapping_index=mapping(mp), address=0x1000 + len(locs))
            l.lines.add(function_index=funcs[fn])
            l.attribute_indices.append(attr("profile.frame.type", ftype))
        return locs[frame]

    def stack(frames):
        k = tuple(loc(f) for f in frames)
        if k not in stacks:
            stacks[k] = len(d.stack_table)
            d.stack_table.add(location_indices=list(k))
        return stacks[k]

    s("")
    d.mapping_table.add()
    d.location_table.add()
    d.function_table.add()
    d.link_table.add()
    d.attribute_table.add()
    d.stack_table.add()
    for proc in processes:
        rp = data.resource_profiles.add()
        for key, value in (("process.pid", proc["pid"]), ("process.executable.name", proc["exe"]),
                           ("host.name", host)):
            kv = rp.resource.attributes.add(key=key)
            if isinstance(value, int):
                kv.value.int_value = value
            else:
                kv.value.string_value = value
        sp = rp.scope_profiles.add()
        sp.scope.name = "synth"
        prof = sp.profiles.add(time_unix_nano=time_ns, duration_nano=duration, period=period)
        prof.sample_type.type_strindex = s("samples")
        prof.sample_type.unit_strindex = s("count")
        prof.period_type.type_strindex = s("cpu")
        prof.period_type.unit_strindex = s("nanoseconds")
        for tid, tname, frames, value in proc["samples"]:
            smp = prof.samples.add(stack_index=stack(frames), values=[value])
            smp.attribute_indices.append(attr("thread.id", tid))
            if tname:
                smp.attribute_indices.append(attr("thread.name", tname))
    raw = data.SerializeToString()
    with open(path, "wb") as f:
        f.write(gzip.compress(raw) if compress else raw)


def N(fn):
    return (fn, "native", "/usr/bin/app")


def K(fn):
    return (fn, "kernel", "[kernel.kallsyms]")


# app (pid 10): main thread burn_a 50, burn_b 30 (via middle_b), recursive
# rec<-rec<-rec 10, a kernel frame 10; worker thread burn_w 40.
# db (pid 20): query 60, a function with XML/JSON-hostile characters 20.
HOSTILE = 'op<T>&"x"'
SYNTH = [
    {"pid": 10, "exe": "app", "samples": [
        (10, "app-main", [N("burn_a"), N("chain_a"), N("main")], 50),
        (10, "app-main", [N("burn_b"), N("middle_b"), N("chain_b"), N("main")], 30),
        (10, "app-main", [N("rec"), N("rec"), N("rec"), N("main")], 10),
        (10, "app-main", [K("do_syscall_64"), N("write"), N("main")], 10),
        (11, "app-worker", [N("burn_w"), N("worker")], 40),
    ]},
    {"pid": 20, "exe": "db", "samples": [
        (20, "db", [N("query"), N("main")], 60),
        (21, "db-io", [N(HOSTILE), N("main")], 20),
    ]},
]


class SynthReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(PROFCAP):
            raise unittest.SkipTest("build/profcap is missing: run ./build.sh")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.pb = os.path.join(cls.tmp.name, "synth.pb")
        write_capture(cls.pb, SYNTH)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, *args, stdin=None, code=0):
        r = subprocess.run([PROFCAP, "report"] + list(args), input=stdin, capture_output=True,
                           timeout=30)
        self.assertEqual(r.returncode, code, r.stderr.decode())
        return r

    def json(self, *args):
        return json.loads(self.report(self.pb, "--json", *args).stdout)

    def test_text(self):
        out = self.report(self.pb).stdout.decode()
        self.assertIn("host        synth-host", out)
        self.assertIn("time        2023-11-14 22:13:20 UTC", out)
        self.assertIn("frequency   999 Hz", out)
        self.assertIn("total       220 samples", out)
        self.assertIn("processes   2", out)
        lines = out.splitlines()
        top = lines[lines.index(next(l for l in lines if l.startswith("Top ") and "functions by self value" in l)) + 2]
        self.assertTrue(top.endswith("query"), top)
        self.assertIn("27.27%", top)  # 60 / 220
        self.assertTrue(any(l.endswith("  kernel   do_syscall_64") for l in lines), out)
        self.assertIn("Processes (2):", out)
        self.assertIn("Threads (4):", out)

    def test_json_self_inclusive(self):
        d = self.json("--top", "0")
        self.assertEqual(d["total"], 220)
        self.assertEqual(d["capture"]["host"], "synth-host")
        self.assertAlmostEqual(d["capture"]["frequency_hz"], 999.0, places=2)
        self.assertEqual(d["capture"]["duration_seconds"], 2.0)
        self.assertEqual(d["capture"]["sample_type"], "samples")
        rows = {r["name"]: r for r in d["top"]}
        self.assertEqual(rows["burn_a"]["self"], 50)
        self.assertEqual(rows["main"]["self"], 0)
        self.assertEqual(rows["main"]["inclusive"], 180)
        self.assertEqual(rows["rec"]["self"], 10)
        self.assertEqual(rows["rec"]["inclusive"], 10)  # recursion counts once
        self.assertEqual(rows["do_syscall_64"]["type"], "kernel")
        self.assertEqual(rows[HOSTILE]["self"], 20)
        self.assertEqual(sum(r["self"] for r in d["top"]), 220)
        self.assertEqual([r["self"] for r in d["top"]], sorted((r["self"] for r in d["top"]), reverse=True))
        incl = self.json("--inclusive")
        self.assertEqual(incl["sort"], "inclusive")
        self.assertEqual(incl["top"][0]["name"], "main")

    def test_by_process_thread_mapping(self):
        d = self.json("--by", "process")
        self.assertEqual([(r["name"], r["pid"], r["self"]) for r in d["top"]], [("app", 10, 140), ("db", 20, 80)])
        self.assertEqual(d["processes"][0], {"pid": 10, "exe": "app", "value": 140, "share": round(140 / 220, 6)})
        d = self.json("--by", "thread")
        self.assertEqual([(r["name"], r["tid"], r["self"]) for r in d["top"]],
                         [("app-main", 10, 100), ("db", 20, 60), ("app-worker", 11, 40), ("db-io", 21, 20)])
        d = self.json("--by", "mapping")
        self.assertEqual({r["name"]: r["self"] for r in d["top"]},
                         {"/usr/bin/app": 210, "[kernel.kallsyms]": 10})

    def test_filters(self):
        d = self.json("--pid", "20")
        self.assertEqual(d["total"], 80)
        self.assertEqual(d["filter"], {"pid": 20, "comm": None})
        self.assertEqual([p["pid"] for p in d["processes"]], [20])
        d = self.json("--comm", "app-main")
        self.assertEqual(d["total"], 100)
        self.assertEqual(d["top"][0]["name"], "burn_a")
        self.assertEqual(d["top"][0]["self_share"], 0.5)
        d = self.json("--comm", "db")  # exe name: both threads of db
        self.assertEqual(d["total"], 80)

    def test_stdin_and_gzip(self):
        gz = os.path.join(self.tmp.name, "synth.pb.gz")
        write_capture(gz, SYNTH, compress=True)
        with open(gz, "rb") as f:
            r = self.report("-", "--json", stdin=f.read())
        d = json.loads(r.stdout)
        self.assertEqual(d["total"], 220)
        self.assertEqual(d["file"], "-")

    def test_malformed_input(self):
        bad = os.path.join(self.tmp.name, "bad.pb")
        with open(self.pb, "rb") as f:
            raw = f.read()
        for name, blob in (("truncated", raw[: len(raw) // 2]), ("garbage", b"\xff" * 64),
                           ("gzip-garbage", b"\x1f\x8b\x08\x00garbage"),
                           ("empty", b""), ("gzip-of-empty", gzip.compress(b""))):
            with open(bad, "wb") as f:
                f.write(blob)
            for cmd in (["report", bad], ["flamegraph", bad, "-o", bad + ".svg"]):
                r = subprocess.run([PROFCAP] + cmd, capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 1, f"{name} {cmd}: {r.stderr}")
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, f"{name}: {r.stderr}")
                self.assertTrue(lines[0].startswith("profcap: error: ") and bad in lines[0], lines[0])
                self.assertEqual(r.stdout, "")
        r = subprocess.run([PROFCAP, "report", "-"], input="", capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("empty input", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = subprocess.run([PROFCAP, "report", os.path.join(self.tmp.name, "missing.pb")],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_bad_flags(self):
        for args in (["--by", "color", self.pb], ["--top", "x", self.pb], ["--bogus", self.pb], [],
                     [self.pb, "--pid"], [self.pb, self.pb, self.pb]):
            r = subprocess.run([PROFCAP, "report"] + args, capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2, f"{args}: {r.stderr}")
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, f"{args}: {r.stderr}")
            self.assertTrue(r.stderr.startswith("profcap: error: "))
        # Two files compare in-use bytes (report A B): CPU captures have none,
        # which one line says, naming the type they have.
        r = subprocess.run([PROFCAP, "report", self.pb, self.pb], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("no 'inuse_space' profile: pick --type", r.stderr)
        for args in ([self.pb], ["-o", "x.svg"], [self.pb, "-o", "x.svg", "--pid", "abc"]):
            r = subprocess.run([PROFCAP, "flamegraph"] + args, capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2, f"{args}: {r.stderr}")
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, f"{args}: {r.stderr}")

    def test_help(self):
        # The options are one indented block ending with -h; notes follow
        # it. FILE may be any form cli/input.c reads.
        for cmd in ("report", "flamegraph", "convert"):
            r = subprocess.run([PROFCAP, cmd, "--help"], capture_output=True, text=True,
                               timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = r.stdout.splitlines()
            start = lines.index("Options:") + 1
            end = lines.index("", start)
            block = lines[start:end]
            self.assertTrue(all(l.startswith(" ") for l in block), f"{cmd}: {block}")
            self.assertIn("-h, --help", block[-1], cmd)
            intro = " ".join(lines[:start])
            for form in ("OTLP", "pprof", "perf script", "perf.data"):
                self.assertIn(form, intro, f"{cmd}: {form}")

    def flamegraph(self, *args):
        out = os.path.join(self.tmp.name, "fg.svg")
        r = subprocess.run([PROFCAP, "flamegraph", self.pb, "-o", out] + list(args),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.parse(out).getroot()
        frames = {}
        for g in root.iter(SVG_NS + "g"):
            if g.get("class") != "f":
                continue
            name = g.find(SVG_NS + "title").text.split("\n")[0]
            rect = g.find(SVG_NS + "rect")
            frames.setdefault(name, []).append((int(g.get("data-v")), int(g.get("data-d")),
                                                float(rect.get("width"))))
        return root, frames

    def test_flamegraph_svg(self):
        root, frames = self.flamegraph("--title", "T & <x>")
        self.assertEqual(root.tag, SVG_NS + "svg")
        self.assertEqual(root.find(SVG_NS + "script").get("href"), None)
        self.assertEqual(frames["all"], [(220, 0, 1180.0)])
        self.assertEqual(frames["app"][0][:2], (140, 1))
        self.assertEqual(frames[HOSTILE][0][:2], (20, 3))
        self.assertAlmostEqual(frames["burn_a"][0][2], 1180 * 50 / 220, places=0)
        self.assertEqual(sorted(v for v, d, w in frames["rec"]), [10, 10, 10])
        title = [t for t in root.iter(SVG_NS + "text") if t.get("id") == "fg-title"][0]
        self.assertEqual(title.text, "T & <x>")
        root, frames = self.flamegraph("--inverted", "--pid", "10")
        self.assertEqual(frames["all"][0][0], 140)
        self.assertNotIn("query", frames)
        # Callers below the leaves: main ends each chain at its own depth.
        self.assertEqual(sorted((v, d) for v, d, w in frames["main"]), [(10, 4), (10, 5), (30, 5), (50, 4)])
        self.assertIn((50, 2), [(v, d) for v, d, w in frames["burn_a"]])  # leaf right under the process

    def test_flamegraph_merges_processes_of_one_executable(self):
        pb = os.path.join(self.tmp.name, "two-db.pb")
        out = os.path.join(self.tmp.name, "two-db.svg")
        db2 = {"pid": 30, "exe": "db", "samples": [(30, "db", [N("query"), N("main")], 20)]}
        write_capture(pb, SYNTH + [db2])

        def towers(*args):
            r = subprocess.run([PROFCAP, "flamegraph", pb, "-o", out] + list(args),
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            got = {}
            for g in ET.parse(out).getroot().iter(SVG_NS + "g"):
                if g.get("class") == "f" and g.get("data-d") == "1":
                    got[g.find(SVG_NS + "title").text.split("\n")[0]] = int(g.get("data-v"))
            return got

        self.assertEqual(towers(), {"app": 140, "db": 100})
        self.assertEqual(towers("--per-pid"), {"app [10]": 140, "db [20]": 80, "db [30]": 20})


OK, WHY = can_sample()


@unittest.skipUnless(OK, WHY)
class CaptureReportTest(unittest.TestCase):
    def test_ground_truth(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "gt.pb")
            with Workload("groundtruth", "-t") as w:
                r = run_profcap(["capture", "-p", str(w.pid), "--seconds", "2", "-F", "999", "-q", "-o", out])
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run_profcap(["report", out, "--json", "--comm", "gt-main", "--top", "0"])
            self.assertEqual(r.returncode, 0, r.stderr)
            d = json.loads(r.stdout)
            # 2 s at 999 Hz: ~2000 on an idle CPU; a CI host running other
            # suites beside this one gives the thread a fraction of a CPU.
            self.assertGreater(d["total"], 200)
            rows = {t["name"]: t for t in d["top"]}
            for fn, want in (("burn_a", 0.5), ("burn_b", 0.3), ("burn_c", 0.2)):
                self.assertAlmostEqual(rows[fn]["self_share"], want, delta=0.06, msg=f"{fn}: {d['top'][:6]}")
            self.assertAlmostEqual(rows["chain_a"]["inclusive_share"], 0.5, delta=0.06)
            self.assertAlmostEqual(rows["main"]["inclusive_share"], 1.0, delta=0.02)
            self.assertEqual([p["pid"] for p in d["processes"]], [w.pid])
            self.assertEqual({t["name"] for t in d["threads"]}, {"gt-main"})
            d = json.loads(run_profcap(["report", out, "--json", "--by", "thread"]).stdout)
            names = {t["name"] for t in d["top"]}
            self.assertTrue({"gt-main", "gt-worker"} <= names, names)
            text = run_profcap(["report", out, "--pid", str(w.pid)]).stdout
            self.assertIn("burn_a", text)
            self.assertIn("groundtruth", text)
            with open(out, "rb") as f:
                r = subprocess.run([PROFCAP, "report", "-", "--by", "process", "--json"], input=f.read(),
                                   capture_output=True, timeout=30)
            self.assertEqual(json.loads(r.stdout)["top"][0]["pid"], w.pid)
            svg = os.path.join(tmp, "gt.svg")
            # One level per program; --per-pid: per process.
            for args, program in (([], "groundtruth"), (["--per-pid"], f"groundtruth [{w.pid}]")):
                r = run_profcap(["flamegraph", out, "-o", svg] + args)
                self.assertEqual(r.returncode, 0, r.stderr)
                names = {g.find(SVG_NS + "title").text.split("\n")[0]
                         for g in ET.parse(svg).getroot().iter(SVG_NS + "g")
                         if g.get("class") == "f"}
                self.assertTrue({"all", program, "burn_a", "chain_b"} <= names, (args, names))


if __name__ == "__main__":
    unittest.main()
