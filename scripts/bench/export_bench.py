#!/usr/bin/python3
"""export_bench.py - what exporting a capture costs: latency and bytes on the
wire, OTLP/gRPC vs OTLP/HTTP, with and without gzip, to receivers on 127.0.0.1
(tests/e2e/receivers.py: python3-grpcio and http.server).

1. One all-CPU capture (-a -F 99, --seconds 10 by default) with the
   ground-truth workload keeping both CPUs busy, written with -o.
2. For each of grpc/none, grpc/gzip, http/none, http/gzip, --runs times
   (interleaved, so machine noise hits every variant alike):
   `profcap upload FILE --endpoint ... -v` through a byte-counting TCP proxy,
   with the workload stopped (so CPU contention does not blur latencies).
   Measured: wall time of the upload process; latency from process start to
   the request being fully received by the receiver; the exporter's own
   timing when -v prints one; the message bytes on the wire (HTTP: request
   body as received; gRPC: the length-prefixed message inside the HTTP/2 DATA
   frames) and all client->server TCP bytes (HTTP headers/frames included).
3. With --live, also --live-runs captures `capture --endpoint` per variant
   (workload running again), reporting the -v export timing and the time
   from the end of sampling to delivery (-v drain + encode + export steps).
Latencies include the Python receivers' work; -v times have 10 ms resolution.

Prints a table of medians. Usage (root):
  scripts/bench/export_bench.py [--runs 5] [--seconds 10] [--live] [--live-runs 5]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

from receivers import GrpcReceiver, HttpReceiver, TcpCounter  # noqa: E402

PROFCAP = os.path.join(REPO, "build", "profcap")
WORKLOAD = os.path.join(REPO, "build", "tests", "workloads", "groundtruth")
VARIANTS = [("grpc", "none"), ("grpc", "gzip"), ("http/protobuf", "none"),
            ("http/protobuf", "gzip")]
# The line that times an export: "profcap: delivered N bytes to URL in 12 ms
# (1 attempt)" (capture) or "profcap: sent FILE (...) to URL in 12 ms (1 attempt)"
# (upload); and the -v steps between the end of sampling and the export.
TIMING = re.compile(r"\b(?:delivered|sent) .* in (\d+(?:\.\d+)?) (ms|s) \(\d+ attempts?\)")
STEPS = re.compile(r"debug: (?:final drain and symbolization took|profile encoded in) "
                   r"(\d+(?:\.\d+)?) (ms|s)\b")


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("OTEL_", "PROFCAP_")) and "proxy" not in k.lower()}


def exporter_seconds(stderr):
    """The exporter's own timing from -v output, in seconds, or None."""
    best = None
    for line in stderr.splitlines():
        m = TIMING.search(line)
        if m:
            best = float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)
    return best


def post_capture_seconds(stderr):
    """Time from the end of sampling to delivery per -v: drain and
    symbolization + encoding + export; None when a line is missing."""
    steps = [float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)
             for m in (STEPS.search(ln) for ln in stderr.splitlines()) if m]
    export = exporter_seconds(stderr)
    if len(steps) != 2 or export is None:
        return None
    return sum(steps) + export


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, unit):
    if x is None:
        return "-"
    if unit == "ms":
        return "%.1f" % (x * 1000)
    return "%d" % x


class Target:
    """A receiver for one protocol behind a byte-counting proxy."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.rcv = GrpcReceiver() if protocol == "grpc" else HttpReceiver()
        self.rcv.start()
        self.tap = TcpCounter(self.rcv.port)
        self.tap.__enter__()

    def close(self):
        self.tap.close()
        self.rcv.stop()


def one_upload(target, comp, path, tmp):
    """Upload @path once; returns a dict of measurements."""
    target.tap.reset()
    before = len(target.rcv.requests)
    cmd = [PROFCAP, "upload", path, "--endpoint", target.tap.url, "--protocol", target.protocol,
           "--compression", comp, "--spool-dir", os.path.join(tmp, "spool"), "-v"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=120)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError("upload (%s, %s) failed with %d:\n%s"
                           % (target.protocol, comp, r.returncode, r.stderr))
    reqs = target.rcv.wait_requests(before + 1, timeout=5)[before:]
    if len(reqs) != 1 or not reqs[0].accepted:
        raise RuntimeError("receiver saw %r" % reqs)
    req = reqs[0]
    if target.protocol == "grpc":
        msgs = target.tap.grpc_messages
        body = msgs[-1][1] if msgs else None
    else:
        body = req.wire_size
    return {"wall": wall, "arrival": req.time - t0, "exporter": exporter_seconds(r.stderr),
            "body": body, "payload": len(req.payload), "tcp": target.tap.up,
            "stderr": r.stderr}


def one_live(target, comp, secs, tmp):
    target.tap.reset()
    before = len(target.rcv.requests)
    cmd = [PROFCAP, "capture", "-a", "-F", "99", "--seconds", str(secs), "--endpoint",
           target.tap.url, "--protocol", target.protocol, "--compression", comp,
           "--spool-dir", os.path.join(tmp, "spool"), "-v"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=secs + 120,
                       cwd=tmp)
    if r.returncode != 0:
        raise RuntimeError("capture (%s, %s) failed with %d:\n%s"
                           % (target.protocol, comp, r.returncode, r.stderr))
    reqs = target.rcv.wait_requests(before + 1, timeout=5)[before:]
    return {"exporter": exporter_seconds(r.stderr), "end_to_delivery": post_capture_seconds(r.stderr),
            "payload": len(reqs[-1].payload), "stderr": r.stderr}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--live", action="store_true",
                    help="also time exports straight from `capture --endpoint`")
    ap.add_argument("--live-runs", type=int, default=5)
    ap.add_argument("--show-v", action="store_true", help="print one -v output per variant")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("export_bench: needs root (captures load BPF programs)")

    tmp = tempfile.mkdtemp(prefix="profcap-export-bench.")
    path = os.path.join(tmp, "capture.pb")
    load = subprocess.Popen([WORKLOAD, "-t"], stdout=subprocess.DEVNULL)
    targets = {}
    try:
        print("capturing %.0f s, all CPUs, 99 Hz ..." % args.seconds, flush=True)
        r = subprocess.run([PROFCAP, "capture", "-a", "-F", "99", "--seconds", str(args.seconds),
                            "-q", "-o", path], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("capture failed: " + r.stderr)
        size = os.path.getsize(path)
        print("capture file: %d bytes" % size)
        # Uploads run on a quiet machine; live captures get the load back.
        load.kill()
        load.wait()

        targets = {p: Target(p) for p in ("grpc", "http/protobuf")}
        results = {v: [] for v in VARIANTS}
        for i in range(args.runs):
            for proto, comp in VARIANTS:
                results[(proto, comp)].append(one_upload(targets[proto], comp, path, tmp))
        live = {v: [] for v in VARIANTS}
        if args.live:
            load = subprocess.Popen([WORKLOAD, "-t"], stdout=subprocess.DEVNULL)
            for i in range(args.live_runs):
                for proto, comp in VARIANTS:
                    live[(proto, comp)].append(one_live(targets[proto], comp, args.seconds, tmp))

        print()
        print("profcap upload of one %.0f s all-CPU capture (%d bytes), medians of %d runs"
              % (args.seconds, size, args.runs))
        hdr = ("protocol", "gzip", "upload wall ms", "to receiver ms", "exporter ms",
               "message bytes", "tcp bytes up", "ratio")
        if args.live:
            hdr += ("live export ms", "live end->delivery ms")
        rows = [hdr]
        for v in VARIANTS:
            rs = results[v]
            body = med([x["body"] for x in rs])
            row = (v[0], v[1], fmt(med([x["wall"] for x in rs]), "ms"),
                   fmt(med([x["arrival"] for x in rs]), "ms"),
                   fmt(med([x["exporter"] for x in rs]), "ms"),
                   fmt(body, "b"), fmt(med([x["tcp"] for x in rs]), "b"),
                   "%.2f" % (body / rs[0]["payload"]) if body else "-")
            if args.live:
                row += (fmt(med([x["exporter"] for x in live[v]]), "ms"),
                        fmt(med([x["end_to_delivery"] for x in live[v]]), "ms"))
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(hdr))]
        for r in rows:
            print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
        print("\nmessage bytes: HTTP request body / gRPC length-prefixed message as sent;"
              "\ntcp bytes up: everything the client sent (HTTP/2 or HTTP/1.1 framing included);"
              "\nratio: message bytes / uncompressed payload; exporter ms: from -v ('-' if none)"
              "\nlive: `capture --endpoint -v`; end->delivery = drain+symbolize + encode + export")
        if args.show_v:
            for v in VARIANTS:
                print("\n-- -v output, upload %s/%s --\n%s" % (v[0], v[1], results[v][0]["stderr"]))
                if args.live and live[v]:
                    print("-- -v output, capture %s/%s --\n%s" % (v[0], v[1], live[v][0]["stderr"]))
    finally:
        for t in targets.values():
            t.close()
        load.kill()
        load.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
