"""capture_util.py - shared helpers for the end-to-end capture tests: run the
profcap binary and workloads, decode captures with protobuf modules generated
from our .proto files, and check them with otlp_check.py (both schemas, and
the official profcheck when it is there)."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROFCAP = os.path.join(REPO, "build", "profcap")
WORKLOADS = os.path.join(REPO, "build", "tests", "workloads")
PY = "/usr/bin/python3"


def can_sample():
    """(True, "") when end-to-end captures can run here, else (False, why)."""
    if os.geteuid() != 0:
        return False, "needs root (CAP_BPF + CAP_PERFMON) to load BPF programs"
    if not os.path.exists(PROFCAP):
        return False, "build/profcap is missing: run ./build.sh"
    if not os.path.exists("/sys/fs/bpf") and not os.path.exists("/proc/sys/kernel/bpf_stats_enabled"):
        return False, "this kernel has no BPF support"
    return True, ""


def run_profcap(args, timeout=120, cwd=None, env=None):
    """Run profcap; @env: variables added to this process's environment."""
    full = dict(os.environ, **env) if env else None
    return subprocess.run([PROFCAP] + args, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=full)


class Workload:
    """A workload process started for a test; killed on exit."""

    def __init__(self, name, *args):
        self.proc = subprocess.Popen([os.path.join(WORKLOADS, name)] + list(args),
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError(f"workload {name} did not start: {line!r}")
        self.pid = self.proc.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def check_conformance(path, profcheck="auto"):
    """Run otlp_check.py on @path with both schemas, and profcheck as
    @profcheck says (auto: when it is there; required; off); returns (ok,
    output)."""
    r = subprocess.run([PY, os.path.join(HERE, "otlp_check.py"), path, "--schema", "both",
                        "--profcheck", profcheck], capture_output=True, text=True, timeout=240)
    return r.returncode == 0, r.stdout + r.stderr


def _pb2():
    # Generated on first use: a test may decode before any conformance check ran.
    import otlp_check  # noqa: E402

    gen = otlp_check.generate("ours") or os.path.join(HERE, "gen", "ours")
    if gen not in sys.path:
        sys.path.insert(0, gen)
    from opentelemetry.proto.profiles.v1development import profiles_pb2  # noqa: E402
    return profiles_pb2


def _anyvalue(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def decode(path):
    """Decode a capture into plain Python data:
    {"resources": [{"attrs": {...}, "profile": Profile, "samples": [
        {"frames": [(function, frame_type, mapping_filename, address)], "value": int,
         "attrs": {...}, "link": (trace_id hex, span_id hex) or None}]}],
     "data": ProfilesData}"""
    pb = _pb2()
    data = pb.ProfilesData()
    with open(path, "rb") as f:
        data.ParseFromString(f.read())
    d = data.dictionary
    strings = d.string_table

    def attrs(indices):
        out = {}
        for i in indices:
            a = d.attribute_table[i]
            out[strings[a.key_strindex]] = _anyvalue(a.value)
        return out

    resources = []
    for rp in data.resource_profiles:
        rattrs = {kv.key: _anyvalue(kv.value) for kv in rp.resource.attributes}
        for sp in rp.scope_profiles:
            for prof in sp.profiles:
                samples = []
                for s in prof.samples:
                    frames = []
                    for li in d.stack_table[s.stack_index].location_indices:
                        loc = d.location_table[li]
                        fn = "?"
                        if loc.lines:
                            # The function whose code holds the address: the
                            # last line (inlined callees come before it).
                            fn = strings[d.function_table[loc.lines[-1].function_index].name_strindex]
                        m = d.mapping_table[loc.mapping_index]
                        frames.append((fn, attrs(loc.attribute_indices).get("profile.frame.type"),
                                       strings[m.filename_strindex], loc.address))
                    link = None
                    if s.link_index:
                        ln = d.link_table[s.link_index]
                        link = (ln.trace_id.hex(), ln.span_id.hex())
                    samples.append({"frames": frames, "value": sum(s.values), "attrs": attrs(s.attribute_indices),
                                    "link": link})
                resources.append({"attrs": rattrs, "profile": prof, "samples": samples,
                                  "scope": sp.scope})
    return {"resources": resources, "data": data}


def cgroup2_mount():
    """Where the cgroup v2 hierarchy is mounted, or None (a v1-only host)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.startswith("cgroup2 "):
                return pre.split()[4]
    return None


def wait_file(path, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False
