"""End-to-end tests of the OpenTelemetry thread context (OTEP 4947): a
workload (tests/workloads/threadctx_writer.c) exports `otel_thread_ctx_v1`
and switches each of its threads between known spans, timing the CPU it
spends in each; a real capture must link each thread's samples to its spans
in the proportions of that truth, never link a sample to a span its thread
was not in, and give no link to threads whose record is malformed (valid 0,
a pointer to unmapped memory, garbage). The links survive OTLP -> pprof and
OTLP -> OTLP/JSON conversion, and `report --by span` / `--trace-id` /
`--span-id` and `flamegraph --trace-id` read them. Each span's record also
carries attributes (http.route, http.method, and one key index the process
context's key map lacks): the samples of a span carry its values as sample
attributes, the unknown one is dropped and counted. Those attributes become
pprof labels under their keys (in a capture written as pprof, and through
convert both ways), `report --by attr:KEY` gives each value its share of the
writer's CPU time, and `report`/`flamegraph --attr KEY=VALUE` keep only the
samples of one value."""
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from capture_util import Workload, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
if OK and not os.path.exists("/sys/kernel/btf/vmlinux"):
    OK, WHY = False, "no kernel BTF: profcap cannot find threads' TLS (warned, no links)"

SECONDS = 5
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WL = os.path.join(ROOT, "build", "tests", "workloads")
# Sampling noise: a thread gets ~200-600 samples here; a share's standard
# error is <= 3.5 points at 200.
SHARE_TOL = 0.08
# Shares of the whole process (~1000-2500 samples): a share's standard error
# is <= 1.6 points at 1000.
PROC_SHARE_TOL = 0.05


def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def _fields(b):
    """(field number, value) of a protobuf message: ints, or bytes for
    length-delimited fields. Independent of profcap's own reader."""
    i = 0
    while i < len(b):
        tag, i = _varint(b, i)
        wt = tag & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            v, i = int.from_bytes(b[i:i + n], "little"), i + n
        else:
            raise ValueError(f"wire type {wt}")
        yield tag >> 3, v


def pprof_samples(path):
    """[(first value, {label key: str or num})] of a gzip'd pprof Profile."""
    with open(path, "rb") as f:
        data = gzip.decompress(f.read())
    strings, raw = [], []
    for num, v in _fields(data):
        if num == 6:
            strings.append(v.decode())
        elif num == 2:
            raw.append(v)
    out = []
    for sm in raw:
        values, labels = [], {}
        for num, v in _fields(sm):
            if num == 2:
                if isinstance(v, bytes):  # packed
                    j = 0
                    while j < len(v):
                        x, j = _varint(v, j)
                        values.append(x)
                else:
                    values.append(v)
            elif num == 3:
                lab = dict(_fields(v))
                key = strings[lab.get(1, 0)]
                labels[key] = strings[lab[2]] if lab.get(2) else lab.get(3, 0)
        out.append((values[0], labels))
    return out


class _Capture:
    """A capture of one writer variant and the checks every variant must
    pass: links and shares against the truth, malformed records unlinked."""
    WORKLOAD = ("threadctx_writer",)
    WRITER_ARGS = ("-m",)
    CAPTURE_ARGS = ()
    SECONDS = SECONDS
    PPROF_TOO = False  # also capture the run as pprof (cls.pprof_out)

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        go, truth = os.path.join(d, "go"), os.path.join(d, "truth.json")
        cls.out = os.path.join(d, "cpu.pb")
        # With PPROF_TOO, a second capture of the same run, written as pprof
        # by capture itself.
        cls.pprof_out = os.path.join(d, "cpu.pb.gz")
        outs = [(cls.out, ["-v", *cls.CAPTURE_ARGS])]
        if cls.PPROF_TOO:
            outs.append((cls.pprof_out, []))
        with Workload(*cls.WORKLOAD, "-g", go, "-d", str(cls.SECONDS), "-o", truth,
                      "-t", "2", *cls.WRITER_ARGS) as w:
            cls.pid = w.pid
            caps = [subprocess.Popen(
                [os.path.join(ROOT, "build", "profcap"),
                 "capture", "-p", str(w.pid), "--seconds", str(cls.SECONDS + 1), "-F", "499",
                 "-o", out, *extra],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for out, extra in outs]
            time.sleep(0.5)  # attached before the threads start
            open(go, "w").close()
            cls.stdout, cls.stderr = caps[0].communicate(timeout=120)
            cls.rc = caps[0].returncode
            cls.pprof_rc, cls.pprof_stderr = None, ""
            if cls.PPROF_TOO:
                _, cls.pprof_stderr = caps[1].communicate(timeout=120)
                cls.pprof_rc = caps[1].returncode
            line = w.proc.stdout.readline()
        cls.done = line.startswith("done")
        with open(truth) as f:
            cls.truth = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def samples_by_tid(self):
        self.assertEqual(self.rc, 0, self.stderr)
        self.assertTrue(self.done, "the workload did not finish")
        by = {}
        data = decode(self.out)
        strings = data["data"].dictionary.string_table
        for res in data["resources"]:
            if res["attrs"].get("process.pid") != self.pid:
                continue
            if strings[res["profile"].sample_type.type_strindex] == "off_cpu":
                continue  # CPU samples only (off-CPU values are nanoseconds)
            for s in res["samples"]:
                by.setdefault(s["attrs"].get("thread.id"), []).append(s)
        return by

    def test_conformance(self):
        ok, report = check_conformance(self.out)
        self.assertTrue(ok, report)
        data = decode(self.out)["data"]
        links = [(l.trace_id, l.span_id) for l in data.dictionary.link_table]
        self.assertEqual(links[0], (b"", b""), "link_table[0] must be Link{}")
        self.assertEqual(len(links), len(set(links)), "duplicate links")
        used = {s.link_index for rp in data.resource_profiles for sp in rp.scope_profiles
                for p in sp.profiles for s in p.samples}
        self.assertEqual(used | {0}, set(range(len(links))), "unreferenced links")

    def test_links_match_truth(self):
        by = self.samples_by_tid()
        report = []
        for t in self.truth["threads"]:
            samples = by.get(t["tid"], [])
            total = sum(s["value"] for s in samples)
            self.assertGreater(total, 50, f"too few samples of {t['func']}: {total}")
            spans = t["spans"]
            truth_total = sum(spans.values()) + t["none"]
            wrong = sum(s["value"] for s in samples
                        if s["link"] and (s["link"][0] != t["trace_id"] or s["link"][1] not in spans))
            # Every linked sample names this thread's trace and one of its spans.
            self.assertEqual(wrong, 0, f"{t['func']}: {wrong} samples linked to a span it "
                                       "was not in")
            linked = sum(s["value"] for s in samples if s["link"])
            want_linked = 1 - t["none"] / truth_total
            # >= 95 % of the samples taken while a span was attached carry it.
            self.assertGreaterEqual(linked / total, 0.95 * want_linked - SHARE_TOL / 2,
                                    f"{t['func']}: {linked}/{total} linked, truth "
                                    f"{want_linked:.3f}")
            for span, cpu in spans.items():
                got = sum(s["value"] for s in samples if s["link"] and s["link"][1] == span) / total
                want = cpu / truth_total
                report.append(f"{t['func']} {span}: {got:.3f} vs truth {want:.3f}")
                self.assertLess(abs(got - want), SHARE_TOL,
                                f"{t['func']} span {span}: share {got:.3f}, truth {want:.3f}")
            got_none = 1 - linked / total
            report.append(f"{t['func']} none: {got_none:.3f} vs truth {t['none'] / truth_total:.3f}; "
                          f"linked {linked}/{total}")
        print("\n" + "\n".join(report))

    def test_malformed_no_link(self):
        by = self.samples_by_tid()
        self.assertEqual(len(self.truth["malformed"]), 3)
        for t in self.truth["malformed"]:
            samples = by.get(t["tid"], [])
            self.assertGreater(sum(s["value"] for s in samples), 10,
                               f"{t['func']} was not sampled")
            linked = [s["link"] for s in samples if s["link"]]
            self.assertEqual(linked, [], f"{t['func']}: malformed record linked")


@unittest.skipUnless(OK, WHY)
class ThreadContextTest(_Capture, unittest.TestCase):
    """The variable in the executable, and every view of the links and
    attributes."""
    PPROF_TOO = True

    def test_attributes_match_span(self):
        by = self.samples_by_tid()
        report = []
        for t in self.truth["threads"]:
            good = bad = 0
            for s in by.get(t["tid"], []):
                if not s["link"] or s["link"][1] not in t["attrs"]:
                    # no span: no span attributes either
                    self.assertNotIn("http.route", s["attrs"], f"{t['func']}: route without span")
                    continue
                want = t["attrs"][s["link"][1]]
                got = {k: s["attrs"].get(k) for k in want}
                if got == want:
                    good += s["value"]
                else:
                    bad += s["value"]
                # Only known keys: the entry with index 9 is dropped.
                extra = set(s["attrs"]) - set(want) - {"thread.id", "thread.name"}
                self.assertEqual(extra, set(), f"{t['func']}: unexpected attributes")
            self.assertGreater(good + bad, 50, f"too few linked samples of {t['func']}")
            acc = good / (good + bad)
            report.append(f"{t['func']} attributes right: {good}/{good + bad} = {acc:.3f}")
            self.assertGreaterEqual(acc, 0.95, report[-1])
        print("\n" + "\n".join(report))
        self.assertRegex(self.stderr, r"thread-context attributes: [1-9]\d* samples with "
                                      r"attributes, [1-9]\d* attributes dropped")

    def test_attributes_in_report_json(self):
        d = self.tmp.name
        back = os.path.join(d, "attrs-back.pb")
        mid = os.path.join(d, "attrs-mid.json")
        r = run_profcap(["convert", self.out, "--to", "otlp-json", "-o", mid])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(mid) as f:
            text = f.read()
        route = self.truth["threads"][0]["attrs"]
        for v in route.values():
            self.assertIn(v["http.route"], text)
        r = run_profcap(["convert", mid, "--to", "otlp", "-o", back])
        self.assertEqual(r.returncode, 0, r.stderr)

        def routes(path):
            got = {}
            for res in decode(path)["resources"]:
                for s in res["samples"]:
                    k = s["attrs"].get("http.route")
                    if k:
                        got[k] = got.get(k, 0) + s["value"]
            return got
        self.assertEqual(routes(back), routes(self.out), "attributes changed through OTLP/JSON")
        ok, report = check_conformance(back)
        self.assertTrue(ok, report)

    def truth_by_value(self, key):
        """{value: CPU seconds} of attribute @key, None for CPU time without
        it, and the process's total CPU seconds, from the writer's truth."""
        want, total = {None: 0.0}, 0.0
        for t in self.truth["threads"]:
            for span, cpu in t["spans"].items():
                v = t["attrs"][span][key]
                want[v] = want.get(v, 0.0) + cpu
                total += cpu
            want[None] += t["none"]
            total += t["none"]
        for t in self.truth["malformed"]:
            want[None] += t["cpu"]
            total += t["cpu"]
        return want, total

    def check_shares(self, key, got, got_total, what):
        """@got {value or None: samples} against the truth of @key."""
        want, want_total = self.truth_by_value(key)
        self.assertGreater(got_total, 200, f"{what}: too few samples")
        self.assertEqual(set(got) - set(want), set(), f"{what}: values the writer never set")
        lines = []
        for v, cpu in sorted(want.items(), key=lambda kv: str(kv[0])):
            g, w = got.get(v, 0) / got_total, cpu / want_total
            lines.append(f"{what} {key}={v}: {g:.3f} vs truth {w:.3f}")
            self.assertLess(abs(g - w), PROC_SHARE_TOL, lines[-1])
        print("\n" + "\n".join(lines))

    def test_report_by_attr_shares(self):
        for key in ("http.route", "http.method"):
            r = run_profcap(["report", self.out, "--pid", str(self.pid), "--by", f"attr:{key}",
                             "--top", "0", "--json"])
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
            self.assertEqual(doc["by"], f"attr:{key}")
            got = {row["name"]: row["self"] for row in doc["top"]}
            self.assertEqual(sum(got.values()), doc["total"])
            self.check_shares(key, got, doc["total"], "report")
        r = run_profcap(["report", self.out, "--by", "attr:http.route"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Values of http.route", r.stdout)
        self.assertIn("(none)", r.stdout)
        r = run_profcap(["report", self.out, "--by", "attr:"])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_attr_filter(self):
        t, other = self.truth["threads"][0], self.truth["threads"][1]
        span = next(iter(t["spans"]))
        route = t["attrs"][span]["http.route"]
        r = run_profcap(["report", self.out, "--by", "attr:http.route", "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        want = {row["name"]: row["self"] for row in json.loads(r.stdout)["top"]}[route]
        r = run_profcap(["report", self.out, "--attr", f"http.route={route}", "--by", "span",
                         "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["filter"]["attrs"], {"http.route": route})
        self.assertEqual(doc["total"], want)
        self.assertEqual([row["name"] for row in doc["top"]], [f"{t['trace_id']}/{span}"])
        svg = os.path.join(self.tmp.name, "route.svg")
        r = run_profcap(["flamegraph", self.out, "--attr", f"http.route={route}", "-o", svg])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(svg) as f:
            text = f.read()
        self.assertIn(f"<title>{t['func']}\n", text)
        self.assertNotIn(f"<title>{other['func']}\n", text)
        self.assertIn(f"http.route={route} only", text)
        for cmd in (["report", self.out], ["flamegraph", self.out, "-o", svg]):
            r = run_profcap(cmd + ["--attr", "http.route"])
            self.assertEqual(r.returncode, 2)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def check_pprof_labels(self, path, what):
        """Samples of the writer's spans carry their span's http.route and
        http.method labels (>= 95 %), and the labels' shares match the truth."""
        samples = [(v, lab) for v, lab in pprof_samples(path) if lab.get("pid") == self.pid]
        spans = {sp: t["attrs"][sp] for t in self.truth["threads"] for sp in t["spans"]}
        linked = [(v, lab) for v, lab in samples if lab.get("span_id") in spans]
        n = sum(v for v, _ in linked)
        right = sum(v for v, lab in linked
                    if {k: lab.get(k) for k in ("http.route", "http.method")}
                    == spans[lab["span_id"]])
        self.assertGreater(n, 100, f"{what}: too few samples with a span label")
        print(f"\n{what}: {right}/{n} = {right / n:.3f} of the span samples carry their "
              "span's attribute labels")
        self.assertGreaterEqual(right / n, 0.95, what)
        routes = {}
        for v, lab in samples:
            routes[lab.get("http.route")] = routes.get(lab.get("http.route"), 0) + v
        self.check_shares("http.route", routes, sum(v for v, _ in samples), what)
        return samples

    def test_pprof_labels(self):
        # capture -o cpu.pb.gz: pprof written by the capture itself
        self.assertEqual(self.pprof_rc, 0, self.pprof_stderr)
        self.check_pprof_labels(self.pprof_out, "capture pprof")
        # convert OTLP -> pprof: the same values under the same labels
        mid = os.path.join(self.tmp.name, "labels.pb.gz")
        r = run_profcap(["convert", self.out, "--to", "pprof", "-o", mid])
        self.assertEqual(r.returncode, 0, r.stderr)
        samples = self.check_pprof_labels(mid, "convert pprof")
        got, want = {}, {}
        for v, lab in samples:
            k = (lab.get("http.route"), lab.get("http.method"))
            got[k] = got.get(k, 0) + v
        for res in decode(self.out)["resources"]:
            if res["attrs"].get("process.pid") != self.pid:
                continue
            for s in res["samples"]:
                k = (s["attrs"].get("http.route"), s["attrs"].get("http.method"))
                want[k] = want.get(k, 0) + s["value"]
        self.assertEqual(got, want, "attribute labels differ from the OTLP attributes")
        go = shutil.which("go")
        if go:  # Debian's golang-go ships `go tool pprof`: it lists the labels as tags
            r = subprocess.run([go, "tool", "pprof", "-tags", "-symbolize=none", mid],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("http.route: Total", r.stdout)
            for t in self.truth["threads"]:
                for a in t["attrs"].values():
                    self.assertIn(f": {a['http.route']}\n", r.stdout)

    def test_summary(self):
        self.assertRegex(self.stderr, r"thread context: \d+ samples linked to a span")

    def test_convert_round_trips(self):
        d = self.tmp.name
        want = {}
        for res in decode(self.out)["resources"]:
            for s in res["samples"]:
                if s["link"]:
                    want[s["link"]] = want.get(s["link"], 0) + s["value"]
        self.assertTrue(want)
        want_attrs = {}
        for res in decode(self.out)["resources"]:
            for s in res["samples"]:
                k = (s["link"], s["attrs"].get("http.route"), s["attrs"].get("http.method"))
                want_attrs[k] = want_attrs.get(k, 0) + s["value"]
        for fmt, ext in (("pprof", "pb.gz"), ("otlp-json", "json")):
            mid = os.path.join(d, f"mid.{ext}")
            back = os.path.join(d, f"back-{fmt}.pb")
            r = run_profcap(["convert", self.out, "--to", fmt, "-o", mid])
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run_profcap(["convert", mid, "--to", "otlp", "-o", back])
            self.assertEqual(r.returncode, 0, r.stderr)
            got = {}
            for res in decode(back)["resources"]:
                for s in res["samples"]:
                    if s["link"]:
                        got[s["link"]] = got.get(s["link"], 0) + s["value"]
            self.assertEqual(got, want, f"links changed through {fmt}")
            got = {}
            for res in decode(back)["resources"]:
                for s in res["samples"]:
                    k = (s["link"], s["attrs"].get("http.route"), s["attrs"].get("http.method"))
                    got[k] = got.get(k, 0) + s["value"]
            self.assertEqual(got, want_attrs, f"attributes changed through {fmt}")
            ok, report = check_conformance(back)
            self.assertTrue(ok, report)

    def test_report_by_span(self):
        t = self.truth["threads"][0]
        span = next(iter(t["spans"]))
        r = run_profcap(["report", self.out, "--by", "span"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for tt in self.truth["threads"]:
            for sp in tt["spans"]:
                self.assertIn(sp, r.stdout)
        r = run_profcap(["report", self.out, "--trace-id", t["trace_id"]])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(t["func"], r.stdout)
        other = self.truth["threads"][1]["func"]
        self.assertNotIn(other, r.stdout)
        r = run_profcap(["report", self.out, "--span-id", span])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(t["func"], r.stdout)
        self.assertNotIn(other, r.stdout)
        svg = os.path.join(self.tmp.name, "trace.svg")
        r = run_profcap(["flamegraph", self.out, "--trace-id", t["trace_id"], "-o", svg])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(svg) as f:
            text = f.read()
        self.assertIn(f"<title>{t['func']}\n", text)
        self.assertNotIn(f"<title>{other}\n", text)
        r = run_profcap(["report", self.out, "--trace-id", "zz"])
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()


class _LibraryContext(_Capture):
    """The variable in a shared library instead of the executable: the
    same truth checks, and where the reader found it (-v)."""
    SECONDS = 3
    WHERE = "from the thread pointer"

    def test_found_in_library(self):
        self.assertIn(f"process {self.pid}: thread context at ", self.stderr)
        self.assertIn(self.WHERE, self.stderr)


@unittest.skipUnless(OK, WHY)
class TlsdescLibraryTest(_LibraryContext, unittest.TestCase):
    """TLSDESC (the OTEP's recommended dialect) in a library linked at
    start: the loader gives it static TLS, the GOT descriptor holds the
    offset from the thread pointer."""
    WORKLOAD = ("threadctx_writer_desc",)


@unittest.skipUnless(OK, WHY)
class GeneralDynamicLibraryTest(_LibraryContext, unittest.TestCase):
    """Legacy general dynamic in a library linked at start: the GOT holds
    the module id; the block is found in each thread's dtv."""
    WORKLOAD = ("threadctx_writer_gd",)
    WHERE = "in the TLS block of module"


@unittest.skipUnless(OK, WHY)
class DlopenGeneralDynamicTest(_LibraryContext, unittest.TestCase):
    """A general-dynamic library dlopen()ed: dynamic TLS, allocated per
    thread in its dtv at the thread's first access."""
    WORKLOAD = ("threadctx_writer_dl", "-L", os.path.join(WL, "libotelctx_gd.so"))
    WHERE = "in the TLS block of module"


@unittest.skipUnless(OK, WHY)
class DlopenTlsdescTest(_LibraryContext, unittest.TestCase):
    """A TLSDESC library dlopen()ed: glibc places it in its static TLS
    surplus when there is room (else dynamic TLS, as above)."""
    WORKLOAD = ("threadctx_writer_dl", "-L", os.path.join(WL, "libotelctx_desc.so"))
    WHERE = "thread context at"


@unittest.skipUnless(OK, WHY)
class OffCpuLinkTest(_Capture, unittest.TestCase):
    """Off-CPU waits carry the span the thread waited in: a thread sleeps
    10 ms at a time with a span attached (the variable in a general-dynamic
    library, read through the dtv at the wait's end)."""
    WORKLOAD = ("threadctx_writer_gd",)
    WRITER_ARGS = ("-m", "-w")
    CAPTURE_ARGS = ("--off-cpu",)
    SECONDS = 3

    def off_cpu_by_tid(self):
        self.assertEqual(self.rc, 0, self.stderr)
        data = decode(self.out)
        strings = data["data"].dictionary.string_table
        by = {}
        for res in data["resources"]:
            st = res["profile"].sample_type
            if strings[st.type_strindex] != "off_cpu" or res["attrs"].get("process.pid") != self.pid:
                continue
            for s in res["samples"]:
                by.setdefault(s["attrs"].get("thread.id"), []).append(s)
        return by

    def test_wait_linked_to_its_span(self):
        w = self.truth["waiter"]
        self.assertGreater(w["sleeps"], 100, "the waiter hardly slept")
        by = self.off_cpu_by_tid()
        waits = by.get(w["tid"], [])
        total = sum(s["value"] for s in waits)
        # each sleep asks for 10 ms (a loaded machine wakes it later, and
        # may keep it runnable, which is not off-CPU time by default)
        self.assertGreater(total, 0.8 * w["sleeps"] * 0.010e9, f"off-CPU time {total} ns")
        linked = sum(s["value"] for s in waits if s["link"] == (w["trace_id"], w["span_id"]))
        other = [s["link"] for s in waits if s["link"] and s["link"] != (w["trace_id"], w["span_id"])]
        self.assertEqual(other, [], "a wait linked to another span")
        print(f"\nwaiter: {linked / total:.3f} of {total / 1e9:.2f} s off-CPU linked to its span")
        self.assertGreaterEqual(linked / total, 0.95)
        # nobody else waited in the waiter's span
        for tid, samples in by.items():
            if tid != w["tid"]:
                self.assertFalse(any(s["link"] == (w["trace_id"], w["span_id"]) for s in samples),
                                 f"thread {tid} linked to the waiter's span")
