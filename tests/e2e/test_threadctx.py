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
attributes, the unknown one is dropped and counted."""
import json
import os
import tempfile
import time
import unittest

from capture_util import Workload, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
if OK and not os.path.exists("/sys/kernel/btf/vmlinux"):
    OK, WHY = False, "no kernel BTF: profcap cannot find threads' TLS (warned, no links)"

SECONDS = 5
# Sampling noise: a thread gets ~200-600 samples here; a share's standard
# error is <= 3.5 points at 200.
SHARE_TOL = 0.08


@unittest.skipUnless(OK, WHY)
class ThreadContextTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        go, truth = os.path.join(d, "go"), os.path.join(d, "truth.json")
        cls.out = os.path.join(d, "cpu.pb")
        with Workload("threadctx_writer", "-g", go, "-d", str(SECONDS), "-o", truth,
                      "-t", "2", "-m") as w:
            cls.pid = w.pid
            import subprocess
            cap = subprocess.Popen(
                [os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
                    os.path.abspath(__file__)))), "build", "profcap"),
                 "capture", "-p", str(w.pid), "--seconds", str(SECONDS + 1), "-F", "499",
                 "-o", cls.out],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)  # attached before the threads start
            open(go, "w").close()
            cls.stdout, cls.stderr = cap.communicate(timeout=120)
            cls.rc = cap.returncode
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
        for res in decode(self.out)["resources"]:
            if res["attrs"].get("process.pid") != self.pid:
                continue
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
