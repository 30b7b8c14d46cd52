"""End-to-end tests of the OpenTelemetry process context (OTEP 4719): a
workload publishes its resource attributes through a memfd and through a
named anonymous mapping; a real capture must put them on that process's
resource (the detected process.* attributes still win), and leave processes
without a context alone."""
import json
import os
import tempfile
import unittest

from capture_util import Workload, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()


@unittest.skipUnless(OK, WHY)
class ProcessContextTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def capture(self, *args, name="cpu.pb"):
        out = os.path.join(self.dir, name)
        r = run_profcap(["capture", "-o", out] + list(args))
        self.assertEqual(r.returncode, 0, f"capture failed: {r.stderr}")
        if not name.endswith(".json"):
            ok, report = check_conformance(out)
            self.assertTrue(ok, f"conformance check failed:\n{report}")
        return out

    def start(self, mode, service):
        try:
            return Workload("procctx_writer", mode, service)
        except RuntimeError as e:
            if mode == "anon":
                self.skipTest("kernel cannot name anonymous mappings (needs Linux 5.17+ with "
                              f"CONFIG_ANON_VMA_NAME; prctl refused): {e}")
            raise

    def check_context(self, mode, service, json_too=False):
        with self.start(mode, service) as w, Workload("groundtruth") as plain:
            with open(f"/proc/{w.pid}/maps") as f:
                maps = f.read()
            self.assertIn("/memfd:OTEL_CTX" if mode == "memfd" else "[anon:OTEL_CTX]", maps)
            out = self.capture("-p", f"{w.pid},{plain.pid}", "--seconds", "2", "-F", "199")
            if json_too:
                jout = self.capture("-p", str(w.pid), "--seconds", "1", "-F", "99",
                                    "--format", "otlp-json", name="cpu.json")
        by_pid = {res["attrs"].get("process.pid"): res["attrs"] for res in decode(out)["resources"]}
        self.assertIn(w.pid, by_pid, f"no resource for the {mode} writer")
        a = by_pid[w.pid]
        self.assertEqual(a.get("service.name"), service, a)
        self.assertEqual(a.get("service.instance.id"), f"{mode}-{w.pid}", a)
        self.assertEqual(a.get("deployment.environment.name"), "e2e", a)
        # The published process.pid "1" loses to the detected pid.
        self.assertEqual(a.get("process.pid"), w.pid, a)
        self.assertEqual(a.get("process.executable.name"), "procctx_writer", a)
        self.assertIn(plain.pid, by_pid)
        p = by_pid[plain.pid]
        self.assertNotIn("service.instance.id", p, "a process without a context got one")
        self.assertNotIn("deployment.environment.name", p)
        # A round trip through convert keeps each resource's own attributes
        # (none leak from the writer onto the plain process).
        conv = os.path.join(self.dir, "conv.json")
        r = run_profcap(["convert", out, "-o", conv, "--to", "otlp-json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(conv) as f:
            doc = json.load(f)
        conv_attrs = {}
        for rp in doc["resourceProfiles"]:
            kv = {a["key"]: a["value"] for a in rp["resource"]["attributes"]}
            pid = kv.get("process.pid", {})
            conv_attrs[int(pid.get("intValue", pid.get("stringValue", -1)))] = kv
        self.assertEqual(conv_attrs[w.pid]["service.instance.id"]["stringValue"],
                         f"{mode}-{w.pid}")
        self.assertNotIn("service.instance.id", conv_attrs[plain.pid])
        if json_too:
            with open(jout) as f:
                text = f.read()
            self.assertIn(f'"stringValue":"{service}"', text.replace(" ", ""))
            self.assertIn(f"{mode}-{w.pid}", text)
        return w

    def test_memfd_context_on_its_resource(self):
        self.check_context("memfd", "svc-memfd", json_too=True)

    def test_anon_context_on_its_resource(self):
        # Needs CONFIG_ANON_VMA_NAME (Linux 5.17+): skipped where prctl refuses.
        self.check_context("anon", "svc-anon")


if __name__ == "__main__":
    unittest.main()
