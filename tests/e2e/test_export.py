"""End-to-end tests of exporting captures to OTLP endpoints: `profcap capture
--endpoint ...` and `profcap upload`, against real receivers on 127.0.0.1
(receivers.py: python3-grpcio and http.server; tls.py: openssl-made CAs).

Every delivered payload is decoded with our schema and the upstream one and
checked with otlp_check's rules. Exit codes: 0 delivered, 3 captured but not
delivered (spooled), 1 capture failure / corrupt upload, 2 usage error."""
import gzip
import os
import shutil
import re
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, Workload, can_sample, check_conformance
import receivers
from receivers import (HTTP_PATH, GrpcReceiver, GrpcReply, HttpReceiver, HttpReply,
                       SilentPort, TcpCounter, check_payload, closed_port, grpc_missing)
from tls import TestPKI

OK, WHY = can_sample()
GRPC_WHY = grpc_missing()


SECRET_FLAG = "flag-secret-7f3a9c"
SECRET_ENV = "env-secret-51d0e2"
SECRET_PROFILES = "profiles-secret-c4b8"

PKI = None
WORKLOAD = None


def setUpModule():
    global PKI, WORKLOAD
    if OK:
        PKI = TestPKI()
        WORKLOAD = Workload("groundtruth")


def tearDownModule():
    if WORKLOAD:
        WORKLOAD.stop()
    if PKI:
        PKI.cleanup()


def clean_env(**extra):
    """The test runner's environment without OTEL_*, PROFCAP_* or proxies."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OTEL_", "PROFCAP_")) and "proxy" not in k.lower()}
    env.update(extra)
    return env


class ExportCase(unittest.TestCase):
    """Shared helpers: a temp dir (cwd of profcap) with a spool dir inside."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="profcap-export.")
        self.dir = self.tmp.name
        self.spool = os.path.join(self.dir, "spool")

    def tearDown(self):
        self.tmp.cleanup()

    def profcap(self, args, env=None, timeout=90):
        t0 = time.monotonic()
        r = subprocess.run([PROFCAP] + list(args), capture_output=True, text=True,
                           timeout=timeout, cwd=self.dir, env=clean_env(**(env or {})))
        r.elapsed = time.monotonic() - t0
        return r

    def capture(self, *args, env=None, seconds="0.5", target=None, spool=True, timeout=90):
        """`profcap capture` of the module's workload (or @target args)."""
        target = target or ["-p", str(WORKLOAD.pid)]
        argv = ["capture", "--seconds", seconds] + target
        if spool:
            argv += ["--spool-dir", self.spool]
        return self.profcap(argv + list(args), env=env, timeout=timeout)

    def upload(self, *args, env=None, timeout=90):
        return self.profcap(["upload"] + list(args), env=env, timeout=timeout)

    def spooled(self):
        if not os.path.isdir(self.spool):
            return []
        return sorted(os.path.join(self.spool, f) for f in os.listdir(self.spool))

    def stray_files(self):
        """Capture files written into profcap's cwd (there must be none
        without -o)."""
        return [f for f in os.listdir(self.dir) if f.endswith(".pb")]

    # -- assertions ---------------------------------------------------------

    def assertNoSecrets(self, r, *secrets):
        for s in secrets or (SECRET_FLAG, SECRET_ENV, SECRET_PROFILES):
            self.assertNotIn(s, r.stderr, "a header value leaked into stderr")
            self.assertNotIn(s, r.stdout, "a header value leaked into stdout")

    def assertPayloadOK(self, req, pid=None):
        """@req decodes with both schemas, passes the conformance rules and
        (with @pid) holds samples of that process. Returns the summary."""
        self.assertIsNone(req.error, "receiver could not decode the request: %s" % req.error)
        ok, report, summary = check_payload(req.payload)
        self.assertTrue(ok, "payload fails otlp_check (both schemas):\n" + report)
        self.assertTrue(summary and summary["resources"], "payload has no resources")
        if pid is not None:
            res = [x for x in summary["resources"] if x["attributes"].get("process.pid") == pid]
            self.assertTrue(res, "no resource for pid %d in the payload" % pid)
            self.assertGreater(res[0]["samples"], 0, "no samples for pid %d" % pid)
        return summary

    def assertDelivered(self, r, rcv, requests=1):
        """Exit 0, @requests requests of which exactly the last was accepted,
        a conforming payload with the workload's samples, nothing spooled."""
        self.assertEqual(r.returncode, 0, "export failed (rc %d):\n%s" % (r.returncode, r.stderr))
        reqs = rcv.requests
        self.assertEqual(len(reqs), requests, "receiver saw %r" % reqs)
        self.assertEqual(len(rcv.accepted()), 1, "delivered %d times" % len(rcv.accepted()))
        self.assertTrue(reqs[-1].accepted)
        self.assertEqual(self.spooled(), [], "a delivered capture was spooled")
        return self.assertPayloadOK(reqs[-1], WORKLOAD.pid)

    def assertSpooled(self, r):
        """Exit 3, one spool file named on stderr with how to send it with
        `profcap upload`, and the spooled capture conforms. Returns its path."""
        self.assertEqual(r.returncode, 3, "want 3 (captured, not delivered), got %d:\n%s"
                         % (r.returncode, r.stderr))
        files = self.spooled()
        self.assertEqual(len(files), 1, "want one spooled capture, have %r" % files)
        self.assertIn(files[0], r.stderr, "stderr does not name the spool file")
        self.assertIn("profcap upload", r.stderr, "stderr does not say how to send it")
        ok, report = check_conformance(files[0])
        self.assertTrue(ok, "spooled capture fails otlp_check:\n" + report)
        return files[0]

    def assertOneErrorLine(self, r, pattern):
        """Exactly one stderr line says error, and it matches @pattern."""
        errs = [ln for ln in r.stderr.splitlines() if "error" in ln.lower()]
        self.assertEqual(len(errs), 1, "want one error line:\n" + r.stderr)
        self.assertRegex(errs[0], pattern)


@unittest.skipUnless(OK, WHY)
@unittest.skipIf(GRPC_WHY, GRPC_WHY)
class GrpcExportTest(ExportCase):
    def test_delivery(self):
        with GrpcReceiver() as g:
            r = self.capture("--endpoint", g.url)
            self.assertDelivered(r, g)
        self.assertEqual(self.stray_files(), [], "--endpoint without -o must not write a file")

    def test_gzip_on_the_wire(self):
        with GrpcReceiver() as g, TcpCounter(g.port) as tap:
            r = self.capture("--endpoint", tap.url, "--compression", "gzip")
            self.assertDelivered(r, g)
            size = len(g.requests[0].payload)
            self.assertEqual(len(tap.grpc_messages), 1, tap.grpc_messages)
            compressed, wire = tap.grpc_messages[0]
            self.assertTrue(compressed, "gRPC message not flagged compressed")
            self.assertLess(wire, size, "gzip did not shrink the message (%d >= %d)" % (wire, size))
            # Default is no compression.
            tap.reset()
            r = self.capture("--endpoint", tap.url)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(tap.grpc_messages), 1, tap.grpc_messages)
            self.assertFalse(tap.grpc_messages[0][0], "default must be uncompressed")
            self.assertEqual(tap.grpc_messages[0][1], len(g.requests[-1].payload))

    def test_headers_arrive_values_not_logged(self):
        with GrpcReceiver() as g:
            r = self.capture("--endpoint", g.url, "-v", "--header", "x-api-key=" + SECRET_FLAG,
                             "--header", "x-tenant=team-a")
            self.assertDelivered(r, g)
            h = g.requests[0].headers
            self.assertEqual(h.get("x-api-key"), SECRET_FLAG)
            self.assertEqual(h.get("x-tenant"), "team-a")
            self.assertNoSecrets(r)
        with GrpcReceiver() as g:
            r = self.capture("--endpoint", g.url, "-v", env={
                "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20" + SECRET_ENV + ",x-b=2"})
            self.assertDelivered(r, g)
            h = g.requests[0].headers
            self.assertEqual(h.get("authorization"), "Bearer " + SECRET_ENV)
            self.assertEqual(h.get("x-b"), "2")
            self.assertNoSecrets(r)

    def test_tls(self):
        with GrpcReceiver(PKI) as g:
            r = self.capture("--endpoint", g.url, "--certificate", PKI.ca)
            self.assertDelivered(r, g)

    def test_mtls(self):
        with GrpcReceiver(PKI, mtls=True) as g:
            r = self.capture("--endpoint", g.url, "--certificate", PKI.ca)
            self.assertSpooled(r)
            self.assertEqual(g.accepted(), [], "accepted without a client certificate")
            r = self.capture("--endpoint", g.url, "--certificate", PKI.ca, "--client-certificate",
                             PKI.client_cert, "--client-key", PKI.client_key, spool=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(g.accepted()), 1)
            self.assertIn("profcap test client", g.accepted()[0].client_cert or "")
            self.assertPayloadOK(g.accepted()[0], WORKLOAD.pid)

    def test_wrong_ca_spools_then_upload_delivers(self):
        # The server's certificate comes from the "other" CA.
        with GrpcReceiver(PKI, server_cert=PKI.other_server_cert,
                          server_key=PKI.other_server_key) as g:
            r = self.capture("--endpoint", g.url, "--certificate", PKI.ca,
                             "--header", "x-api-key=" + SECRET_FLAG)
            spooled = self.assertSpooled(r)
            self.assertOneErrorLine(r, r"(?i)certificate|tls|ssl|verif")
            self.assertNoSecrets(r)
            self.assertEqual(g.requests, [], "a request got through a failed TLS handshake")
            u = self.upload(spooled, "--endpoint", g.url, "--certificate", PKI.other_ca,
                            "--remove-sent")
            self.assertEqual(u.returncode, 0, u.stderr)
            self.assertEqual(len(g.accepted()), 1, g.requests)
            self.assertPayloadOK(g.accepted()[0], WORKLOAD.pid)
            self.assertFalse(os.path.exists(spooled), "--remove-sent left the file")

    def test_unavailable_twice_then_ok(self):
        with GrpcReceiver() as g:
            g.script(GrpcReply(receivers.grpc.StatusCode.UNAVAILABLE, "warming up"),
                     GrpcReply(receivers.grpc.StatusCode.UNAVAILABLE, "warming up"))
            r = self.capture("--endpoint", g.url)
            self.assertDelivered(r, g, requests=3)
            reqs = g.requests
            self.assertTrue(reqs[0].payload == reqs[1].payload == reqs[2].payload,
                            "retries must resend the same payload")

    def test_unavailable_then_ok_over_tls(self):
        # Same retry over TLS (ALPN h2): tells an h2c-only problem apart.
        with GrpcReceiver(PKI) as g:
            g.script(GrpcReply(receivers.grpc.StatusCode.UNAVAILABLE, "warming up"))
            r = self.capture("--endpoint", g.url, "--certificate", PKI.ca)
            self.assertDelivered(r, g, requests=2)

    def test_insecure_bare_host_port(self):
        with GrpcReceiver() as g:
            r = self.capture("--endpoint", "127.0.0.1:%d" % g.port, "--insecure")
            self.assertDelivered(r, g)
        with GrpcReceiver() as g:
            r = self.capture(env={"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:%d" % g.port,
                                  "OTEL_EXPORTER_OTLP_INSECURE": "true"})
            self.assertDelivered(r, g)

    def test_resource_exhausted_with_retry_info(self):
        with GrpcReceiver() as g:
            g.script(GrpcReply(receivers.grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down",
                               retry_delay=1.5))
            r = self.capture("--endpoint", g.url)
            self.assertDelivered(r, g, requests=2)
            gap = g.requests[1].time - g.requests[0].time
            self.assertGreaterEqual(gap, 1.3, "RetryInfo of 1.5 s not honoured (%.2f s)" % gap)

    def test_permanent_errors_not_retried(self):
        codes = receivers.grpc.StatusCode
        for reply in (GrpcReply(codes.INVALID_ARGUMENT, "bad profile"),
                      GrpcReply(codes.RESOURCE_EXHAUSTED, "quota gone"),  # no RetryInfo
                      GrpcReply(codes.PERMISSION_DENIED, "who are you")):
            with self.subTest(code=reply.code.name), GrpcReceiver() as g:
                for f in self.spooled():
                    os.unlink(f)
                g.script(reply)
                r = self.capture("--endpoint", g.url)
                self.assertSpooled(r)
                self.assertEqual(len(g.requests), 1, "%s was retried" % reply.code.name)
                self.assertIn(reply.message, r.stderr, "the server's message is not shown")

    def test_partial_success_reported(self):
        with GrpcReceiver() as g:
            g.script(GrpcReply(rejected=3, partial_message="too old"))
            r = self.capture("--endpoint", g.url)
            self.assertDelivered(r, g)
            line = [ln for ln in r.stderr.splitlines() if "too old" in ln]
            self.assertTrue(line, "partial_success message not reported:\n" + r.stderr)
            self.assertRegex(line[0], r"\b3\b", "rejected count not reported")

    def test_deadline(self):
        with SilentPort() as s:
            r = self.capture("--endpoint", "http://127.0.0.1:%d" % s.port, "--timeout", "2")
            self.assertSpooled(r)
            self.assertLess(r.elapsed, 0.5 + 2 + 4, "--timeout 2 not honoured")
            for f in self.spooled():
                os.unlink(f)
            # OTEL_EXPORTER_OTLP_TIMEOUT is in milliseconds; the flag wins.
            r = self.capture("--endpoint", "http://127.0.0.1:%d" % s.port,
                             env={"OTEL_EXPORTER_OTLP_TIMEOUT": "1500"})
            self.assertSpooled(r)
            self.assertLess(r.elapsed, 0.5 + 1.5 + 4, "OTEL_EXPORTER_OTLP_TIMEOUT (ms) ignored")
            for f in self.spooled():
                os.unlink(f)
            r = self.capture("--endpoint", "http://127.0.0.1:%d" % s.port, "--timeout", "1",
                             env={"OTEL_EXPORTER_OTLP_TIMEOUT": "60000"})
            self.assertSpooled(r)
            self.assertLess(r.elapsed, 0.5 + 1 + 4, "--timeout must beat the variable")


@unittest.skipUnless(OK, WHY)
class HttpExportTest(ExportCase):
    H = ("--protocol", "http/protobuf")

    def test_delivery(self):
        with HttpReceiver() as h:
            r = self.capture("--endpoint", h.url, *self.H)
            self.assertDelivered(r, h)
            req = h.requests[0]
            self.assertEqual(req.method, "POST")
            self.assertEqual(req.path, HTTP_PATH)
            self.assertEqual(req.headers.get("content-type"), "application/x-protobuf")
            self.assertTrue(req.headers.get("user-agent", "").startswith("profcap/"),
                            req.headers.get("user-agent"))
            self.assertIsNone(req.encoding, "default must be uncompressed")
        self.assertEqual(self.stray_files(), [], "--endpoint without -o must not write a file")

    def test_gzip(self):
        with HttpReceiver() as h:
            r = self.capture("--endpoint", h.url, *self.H, "--compression", "gzip")
            self.assertDelivered(r, h)
            req = h.requests[0]
            self.assertEqual(req.encoding, "gzip")
            self.assertLess(req.wire_size, len(req.payload), "gzip did not shrink the body")

    def test_headers_arrive_values_not_logged(self):
        with HttpReceiver() as h:
            r = self.capture("--endpoint", h.url, *self.H, "-v",
                             "--header", "x-api-key=" + SECRET_FLAG)
            self.assertDelivered(r, h)
            self.assertEqual(h.requests[0].headers.get("x-api-key"), SECRET_FLAG)
            self.assertNoSecrets(r)
        with HttpReceiver() as h:
            r = self.capture("--endpoint", h.url, *self.H, "-v", env={
                "OTEL_EXPORTER_OTLP_PROFILES_HEADERS": "authorization=Basic%20" + SECRET_PROFILES})
            self.assertDelivered(r, h)
            self.assertEqual(h.requests[0].headers.get("authorization"), "Basic " + SECRET_PROFILES)
            self.assertNoSecrets(r)

    def test_tls_by_ip_and_name(self):
        with HttpReceiver(PKI) as h:
            r = self.capture("--endpoint", h.url, *self.H, "--certificate", PKI.ca)
            self.assertDelivered(r, h)
            r = self.capture("--endpoint", "https://localhost:%d" % h.port, *self.H,
                             "--certificate", PKI.ca)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(h.accepted()), 2)

    def test_mtls(self):
        with HttpReceiver(PKI, mtls=True) as h:
            r = self.capture("--endpoint", h.url, *self.H, "--certificate", PKI.ca)
            self.assertSpooled(r)
            self.assertEqual(h.requests, [])
            for f in self.spooled():
                os.unlink(f)
            r = self.capture("--endpoint", h.url, *self.H, "--certificate", PKI.ca,
                             "--client-certificate", PKI.client_cert,
                             "--client-key", PKI.client_key)
            self.assertDelivered(r, h)
            self.assertIn("profcap test client", h.requests[0].client_cert or "")

    def test_wrong_ca(self):
        with HttpReceiver(PKI, server_cert=PKI.other_server_cert,
                          server_key=PKI.other_server_key) as h:
            r = self.capture("--endpoint", h.url, *self.H, "--certificate", PKI.ca)
            self.assertSpooled(r)
            self.assertOneErrorLine(r, r"(?i)certificate|tls|ssl|verif")
            self.assertEqual(h.requests, [])

    def test_503_twice_then_200_delivers_once(self):
        with HttpReceiver() as h:
            h.script(HttpReply(503), HttpReply(503))
            r = self.capture("--endpoint", h.url, *self.H)
            self.assertDelivered(r, h, requests=3)

    def test_retry_after_and_429(self):
        with HttpReceiver() as h:
            h.script(HttpReply(503, retry_after="2"), HttpReply(429))
            r = self.capture("--endpoint", h.url, *self.H)
            self.assertDelivered(r, h, requests=3)
            gap = h.requests[1].time - h.requests[0].time
            self.assertGreaterEqual(gap, 1.8, "Retry-After: 2 not honoured (%.2f s)" % gap)

    def test_400_not_retried(self):
        with HttpReceiver() as h:
            h.script(HttpReply(400, message="malformed profile"))
            r = self.capture("--endpoint", h.url, *self.H)
            self.assertSpooled(r)
            self.assertEqual(len(h.requests), 1, "a 400 was retried")
            self.assertIn("400", r.stderr)

    def test_partial_success_reported(self):
        with HttpReceiver() as h:
            h.script(HttpReply(200, rejected=3, partial_message="too old"))
            r = self.capture("--endpoint", h.url, *self.H)
            self.assertDelivered(r, h)
            line = [ln for ln in r.stderr.splitlines() if "too old" in ln]
            self.assertTrue(line, "partial_success message not reported:\n" + r.stderr)
            self.assertRegex(line[0], r"\b3\b", "rejected count not reported")

    def test_endpoint_down_spools_then_upload_delivers(self):
        port = closed_port()
        r = self.capture("--endpoint", "http://127.0.0.1:%d" % port, *self.H,
                         "--header", "x-api-key=" + SECRET_FLAG)
        spooled = self.assertSpooled(r)
        self.assertNoSecrets(r)
        self.assertLess(r.elapsed, 0.5 + 10 + 4, "gave up later than the default 10 s deadline")
        with HttpReceiver() as h:
            u = self.upload(spooled, "--endpoint", h.url, *self.H)
            self.assertEqual(u.returncode, 0, u.stderr)
            self.assertEqual(len(h.accepted()), 1)
            got = self.assertPayloadOK(h.accepted()[0], WORKLOAD.pid)
        self.assertTrue(os.path.exists(spooled), "upload without --remove-sent removed the file")
        ok, _, want = check_payload(open(spooled, "rb").read())
        self.assertEqual(got, want, "upload sent something else than the spooled capture")


@unittest.skipUnless(OK, WHY)
class ConfigTest(ExportCase):
    """Environment variables against flags, and OTLP/HTTP URL rules."""

    def test_flag_endpoint_beats_env(self):
        with HttpReceiver() as a, HttpReceiver() as b:
            r = self.capture("--endpoint", b.url, env={
                "OTEL_EXPORTER_OTLP_ENDPOINT": a.url,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
            self.assertDelivered(r, b)
            self.assertEqual(a.requests, [])

    def test_profiles_endpoint_beats_generic_and_is_used_as_is(self):
        with HttpReceiver() as a, HttpReceiver() as b:
            r = self.capture(env={
                "OTEL_EXPORTER_OTLP_ENDPOINT": a.url,
                "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT": b.url + "/custom/ingest",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
            self.assertDelivered(r, b)
            self.assertEqual(b.requests[0].path, "/custom/ingest")
            self.assertEqual(a.requests, [])

    def test_generic_endpoint_gets_signal_path(self):
        env = {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
        for suffix, want in (("/base", "/base" + HTTP_PATH), ("/", HTTP_PATH)):
            with self.subTest(suffix=suffix), HttpReceiver() as h:
                r = self.capture(env=dict(env, OTEL_EXPORTER_OTLP_ENDPOINT=h.url + suffix))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual([q.path for q in h.requests], [want])
        with HttpReceiver() as h:  # --endpoint is a base URL too
            r = self.capture("--endpoint", h.url + "/base", "--protocol", "http/protobuf")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual([q.path for q in h.requests], ["/base" + HTTP_PATH])

    @unittest.skipIf(GRPC_WHY, GRPC_WHY)
    def test_protocol_precedence(self):
        with HttpReceiver() as h:
            r = self.capture("--endpoint", h.url, env={
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL": "http/protobuf"})
            self.assertDelivered(r, h)
        with GrpcReceiver() as g:
            r = self.capture("--endpoint", g.url, "--protocol", "grpc", env={
                "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL": "http/protobuf"})
            self.assertDelivered(r, g)

    def test_compression_env_and_flag(self):
        with HttpReceiver() as h:
            r = self.capture("--endpoint", h.url, "--protocol", "http/protobuf",
                             env={"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"})
            self.assertEqual(r.returncode, 0, r.stderr)
            r = self.capture("--endpoint", h.url, "--protocol", "http/protobuf",
                             "--compression", "none",
                             env={"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual([q.encoding for q in h.requests], ["gzip", None])

    def test_tls_from_env(self):
        # Generic variables name the wrong client identity; _PROFILES_ wins.
        with HttpReceiver(PKI, mtls=True) as h:
            r = self.capture(env={
                "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT": h.url + HTTP_PATH,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                "OTEL_EXPORTER_OTLP_CERTIFICATE": PKI.ca,
                "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": PKI.other_client_cert,
                "OTEL_EXPORTER_OTLP_CLIENT_KEY": PKI.other_client_key,
                "OTEL_EXPORTER_OTLP_PROFILES_CLIENT_CERTIFICATE": PKI.client_cert,
                "OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY": PKI.client_key})
            self.assertDelivered(r, h)

    def test_spool_dir_from_env(self):
        env = {"PROFCAP_SPOOL_DIR": self.spool}
        r = self.capture("--endpoint", "http://127.0.0.1:%d" % closed_port(),
                         "--timeout", "1", env=env, spool=False)
        self.assertSpooled(r)

    def test_service_name_and_resource_attributes(self):
        with HttpReceiver() as h:
            r = self.capture("--endpoint", h.url, "--protocol", "http/protobuf",
                             target=["-a"], env={
                                 "OTEL_SERVICE_NAME": "checkout",
                                 "OTEL_RESOURCE_ATTRIBUTES":
                                     "deployment.environment=e2e,team=perf%20ops,"
                                     "service.name=overridden"})
            self.assertEqual(r.returncode, 0, r.stderr)
            summary = self.assertPayloadOK(h.accepted()[0])
            self.assertGreater(len(summary["resources"]), 1, "want several processes")
            for res in summary["resources"]:
                a = res["attributes"]
                self.assertEqual(a.get("service.name"), "checkout",
                                 "OTEL_SERVICE_NAME wins over OTEL_RESOURCE_ATTRIBUTES")
                self.assertEqual(a.get("deployment.environment"), "e2e")
                self.assertEqual(a.get("team"), "perf ops", "values are percent-decoded")
                self.assertIn("process.pid", a, "own attributes must stay")

    def test_bad_values_exit_2(self):
        ep = ["--endpoint", "http://127.0.0.1:%d" % closed_port()]
        cases = [
            (["--protocol", "bogus"] + ep, {}),
            (["--compression", "zstd"] + ep, {}),
            (["--header", "novalue"] + ep, {}),
            (["--timeout", "abc"] + ep, {}),
            (["--timeout", "-1"] + ep, {}),
            (["--certificate", "/nonexistent/ca.pem"] + ep, {}),
            (["--client-key", PKI.client_key] + ep, {}),  # key without certificate
            (ep, {"OTEL_EXPORTER_OTLP_PROTOCOL": "bogus"}),
            (ep, {"OTEL_EXPORTER_OTLP_HEADERS": "x-key=" + SECRET_ENV + ",broken"}),
            (ep, {"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}),
        ]
        for args, env in cases:
            with self.subTest(args=args, env=env):
                r = self.capture(*args, env=env, seconds="5", timeout=20)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertLess(r.elapsed, 3, "usage errors must come before sampling")
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertTrue(lines[0].startswith("profcap: error: "), lines[0])
                self.assertNoSecrets(r)
        self.assertEqual(self.spooled(), [])


@unittest.skipUnless(OK, WHY)
class UploadTest(ExportCase):
    H = ("--protocol", "http/protobuf")

    def make_capture(self, name):
        path = os.path.join(self.dir, name)
        r = self.capture("-o", path, "-q", spool=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        return path

    def corrupt(self, name):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(b"\xff\xff\xff\xffthis is not a profile\n" * 8)
        return path

    def test_corrupt_file_rejected_and_left(self):
        bad = self.corrupt("bad.pb")
        with HttpReceiver() as h:
            u = self.upload(bad, "--endpoint", h.url, *self.H, "--remove-sent")
            self.assertEqual(u.returncode, 1, u.stderr)
            self.assertIn(bad, u.stderr, "the corrupt file is not named")
            self.assertEqual(h.requests, [], "a corrupt file was sent")
        self.assertTrue(os.path.exists(bad), "the corrupt file was removed")

    def test_mixed_good_and_corrupt(self):
        good, bad = self.make_capture("good.pb"), self.corrupt("bad.pb")
        with HttpReceiver() as h:
            u = self.upload(bad, good, "--endpoint", h.url, *self.H)
            self.assertEqual(u.returncode, 1, u.stderr)
            self.assertEqual(len(h.accepted()), 1, "the good file was not delivered")
            self.assertPayloadOK(h.accepted()[0], WORKLOAD.pid)
        self.assertTrue(os.path.exists(good) and os.path.exists(bad))

    def test_undeliverable_left_in_place(self):
        a, b = self.make_capture("a.pb"), self.make_capture("b.pb")
        u = self.upload(a, b, "--endpoint", "http://127.0.0.1:%d" % closed_port(), *self.H,
                        "--timeout", "1", "--remove-sent")
        self.assertEqual(u.returncode, 3, u.stderr)
        self.assertTrue(os.path.exists(a) and os.path.exists(b))

    @unittest.skipIf(GRPC_WHY, GRPC_WHY)
    def test_remove_sent_and_quiet(self):
        a, b = self.make_capture("a.pb"), self.make_capture("b.pb")
        with GrpcReceiver() as g:
            u = self.upload(a, b, "--endpoint", g.url, "--remove-sent", "-q")
            self.assertEqual(u.returncode, 0, u.stderr)
            self.assertEqual(u.stderr, "", "-q must keep stderr silent on success")
            self.assertEqual(len(g.accepted()), 2)
            for req in g.accepted():
                self.assertPayloadOK(req, WORKLOAD.pid)
        self.assertFalse(os.path.exists(a) or os.path.exists(b), "--remove-sent left files")

    def test_gzip_json_and_a_spool_directory(self):
        """What report reads, upload sends (as binary OTLP); a directory
        sends its spool files."""
        good = self.make_capture("good.pb")
        with open(good, "rb") as f:
            raw = f.read()
        gz = os.path.join(self.dir, "good.pb.gz")
        with gzip.open(gz, "wb") as f:
            f.write(raw)
        js = os.path.join(self.dir, "good.json")
        r = self.profcap(["convert", "--to", "otlp-json", "-o", js, good])
        self.assertEqual(r.returncode, 0, r.stderr)
        spool = os.path.join(self.dir, "spooldir")
        os.mkdir(spool)
        for n in ("a.pb", "b.pb"):
            shutil.copy(good, os.path.join(spool, n))
        with open(os.path.join(spool, ".a.pb.tmp.1.x"), "wb") as f:
            f.write(b"partial")
        with HttpReceiver() as h:
            u = self.upload(gz, js, spool, "--endpoint", h.url, *self.H, "--remove-sent")
            self.assertEqual(u.returncode, 0, u.stderr)
            self.assertEqual(len(h.accepted()), 4, u.stderr)
            for req in h.accepted():
                self.assertPayloadOK(req, WORKLOAD.pid)
        self.assertEqual(os.listdir(spool), [".a.pb.tmp.1.x"])

    def test_upload_needs_an_endpoint(self):
        a = self.corrupt("x.pb")
        u = self.upload(a)
        self.assertEqual(u.returncode, 2, u.stderr)
        self.assertTrue(os.path.exists(a))


@unittest.skipUnless(OK, WHY)
@unittest.skipIf(GRPC_WHY, GRPC_WHY)
class FileAndExportTest(ExportCase):
    def test_output_and_endpoint(self):
        out = os.path.join(self.dir, "both.pb")
        with GrpcReceiver() as g:
            r = self.capture("-o", out, "--endpoint", g.url)
            sent = self.assertDelivered(r, g)
        ok, report, written = check_payload(open(out, "rb").read())
        self.assertTrue(ok, report)
        self.assertEqual(written, sent, "the file and the export hold different captures")

    def test_output_kept_when_export_fails(self):
        out = os.path.join(self.dir, "kept.pb")
        r = self.capture("-o", out, "--endpoint", "http://127.0.0.1:%d" % closed_port(),
                         "--timeout", "1")
        self.assertEqual(r.returncode, 3, r.stderr)
        ok, report = check_conformance(out)
        self.assertTrue(ok, report)
        self.assertIn("profcap upload", r.stderr)
        named = [f for f in [out] + self.spooled() if f in r.stderr]
        self.assertTrue(named, "stderr names no file to upload:\n" + r.stderr)


if __name__ == "__main__":
    unittest.main()
