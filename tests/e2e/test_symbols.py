"""End-to-end ground truth for symbols found beyond the binary's own .symtab
(root: real BPF sampling): a debug file by build-id (--debug-dir), a
.gnu_debuglink target in .debug/ (validated by build-id, or by CRC when the
binary has none), MiniDebugInfo, glibc internals named by libc6-dbg, C++ and
Rust (legacy and v0) demangling, stripped Go binaries (.gopclntab) and Go
PIEs (the pclntab in .data.rel.ro.gopclntab, or inside .data.rel.ro for cgo),
PLT stubs named "abs@plt", a debug file downloaded from a debuginfod server on 127.0.0.1, and the htlhash/Go
build-id mapping attributes. Each case checks that the hot function is named
in >= 90 % of the workload's samples, and controls (no debug dir, a debug file
of another build) check that nothing is named from a wrong file."""
import hashlib
import http.server
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import unittest

from capture_util import WORKLOADS, can_sample, check_conformance, decode

OK, WHY = can_sample()
SYMWORK = os.path.join(WORKLOADS, "symwork")
CXXWORK = os.path.join(WORKLOADS, "cxxwork")
# Debian's rustc (build.sh installs it) first: what CI has.
RUSTC = "/usr/bin/rustc" if os.path.exists("/usr/bin/rustc") else shutil.which("rustc")
GO = shutil.which("go") or ("/usr/bin/go" if os.path.exists("/usr/bin/go") else None)
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(REPO, "tests", "workloads")
GOLEAF = os.path.join(REPO, "tests", "unit", "fixtures", "goleaf")
# The unit tests' Go build cache (build/tests/fixtures/go): shared, safe.
GO_CACHE = os.path.join(REPO, "build", "tests", "fixtures", "go")


def sh(*cmd, **kw):
    r = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return r.stdout


def build_id(path):
    out = sh("readelf", "-n", path)
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None


def htlhash(path):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(4096)
        f.seek(max(0, size - 4096))
        tail = f.read(4096)
    return hashlib.sha256(head + tail + struct.pack(">Q", size)).hexdigest()[:32]


def functions(res_data):
    """{name: system_name} of the function table."""
    d = res_data.dictionary
    s = d.string_table
    return {s[f.name_strindex]: s[f.system_name_strindex] for f in d.function_table[1:]}


def mapping_attrs(res_data):
    """{mapping filename: {attr key: value}}."""
    d = res_data.dictionary
    s = d.string_table
    out = {}
    for m in d.mapping_table[1:]:
        attrs = {}
        for i in m.attribute_indices:
            a = d.attribute_table[i]
            attrs[s[a.key_strindex]] = a.value.string_value
        out[s[m.filename_strindex]] = attrs
    return out


# Calls abs() through its PLT stub in a loop: the stub's one jump is a fair
# share of each iteration, so samples land in it.
PLT_WORK = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	volatile int v = -3;
	volatile long sum = 0;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		sum += abs(v);
	return (int)sum;
}
"""


class _Handler(http.server.BaseHTTPRequestHandler):
    root = None
    requests = []

    def do_GET(self):
        _Handler.requests.append(self.path)
        parts = self.path.strip("/").split("/")
        path = None
        if len(parts) == 3 and parts[0] == "buildid" and parts[2] == "debuginfo":
            path = os.path.join(_Handler.root, parts[1] + ".debug")
        if not path or not os.path.exists(path):
            self.send_response(404)
            self.end_headers()
            return
        with open(path, "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@unittest.skipUnless(OK, WHY)
class SymbolsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def capture(self, argv, seconds="3", extra=(), env=None):
        out = os.path.join(self.dir, "cpu.pb")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            self.assertTrue(line.startswith("ready"), f"{argv[0]} did not start: {line!r}")
            r = subprocess.run([os.path.join(REPO, "build", "profcap"), "capture", "-o", out, "-p",
                                str(proc.pid), "--seconds", seconds, "-F", "499", "--no-kernel"]
                               + list(extra), capture_output=True, text=True, timeout=120,
                               env=env)
        finally:
            proc.kill()
            proc.wait()
        self.assertEqual(r.returncode, 0, f"capture failed: {r.stderr}")
        ok, why = check_conformance(out)
        self.assertTrue(ok, why)
        res = decode(out)
        return res, r.stderr

    def share(self, res, name):
        """Fraction of samples with a frame named @name (and the total)."""
        total = hit = 0
        for rp in res["resources"]:
            for s in rp["samples"]:
                total += s["value"]
                if any(fn == name for fn, *_ in s["frames"]):
                    hit += s["value"]
        return (hit / total if total else 0.0), total

    def assertHot(self, res, name, at_least=0.9):
        frac, total = self.share(res, name)
        self.assertGreater(total, 100, "too few samples")
        self.assertGreaterEqual(frac, at_least, f"{name} in {frac:.1%} of {total} samples")
        print(f"  {self._testMethodName}: {name} in {frac:.1%} of {total} samples", file=sys.stderr)
        return frac

    def stripped_copy(self, name, keep_build_id=True):
        """A copy of symwork in its own directory, and its --only-keep-debug file."""
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        binary = os.path.join(d, "symwork")
        shutil.copy(SYMWORK, binary)
        if not keep_build_id:
            sh("objcopy", "--remove-section", ".note.gnu.build-id", binary)
        debug = os.path.join(d, "symwork.full.debug")
        sh("objcopy", "--only-keep-debug", binary, debug)
        sh("strip", "--strip-all", binary)
        return binary, debug

    # ---- separate debug files -------------------------------------------------

    def test_build_id_debug_dir(self):
        binary, debug = self.stripped_copy("bid")
        bid = build_id(binary)
        ddir = os.path.join(self.dir, "bid-debug")
        os.makedirs(os.path.join(ddir, ".build-id", bid[:2]), exist_ok=True)
        shutil.move(debug, os.path.join(ddir, ".build-id", bid[:2], bid[2:] + ".debug"))
        # Control: without the debug directory the static function is unnamed.
        res, _ = self.capture([binary])
        frac, _ = self.share(res, "hot_static_work")
        self.assertEqual(frac, 0.0, "named without its debug file")
        res, _ = self.capture([binary], extra=["--debug-dir", ddir])
        self.assertHot(res, "hot_static_work")
        attrs = mapping_attrs(res["data"])[binary]
        self.assertEqual(attrs.get("process.executable.build_id.gnu"), bid)
        self.assertEqual(attrs.get("process.executable.build_id.htlhash"), htlhash(binary))

    def test_build_id_mismatch_is_not_trusted(self):
        binary, _ = self.stripped_copy("mism")
        bid = build_id(binary)
        ddir = os.path.join(self.dir, "mism-debug")
        os.makedirs(os.path.join(ddir, ".build-id", bid[:2]), exist_ok=True)
        # The debug file of another build (the C++ workload) at this build-id.
        other = os.path.join(self.dir, "other.debug")
        sh("objcopy", "--only-keep-debug", CXXWORK, other)
        shutil.move(other, os.path.join(ddir, ".build-id", bid[:2], bid[2:] + ".debug"))
        res, err = self.capture([binary], extra=["--debug-dir", ddir])
        self.assertEqual(self.share(res, "hot_static_work")[0], 0.0)
        names = functions(res["data"])
        self.assertFalse(any("Basket" in n for n in names), "named from a mismatched debug file")
        self.assertEqual(err.count("warning:"), 1, f"expected one warning: {err}")
        self.assertIn("skipped", err)

    def test_debuglink_dot_debug(self):
        binary, debug = self.stripped_copy("dl")
        os.makedirs(os.path.join(os.path.dirname(binary), ".debug"), exist_ok=True)
        target = os.path.join(os.path.dirname(binary), ".debug", "symwork.debug")
        shutil.move(debug, target)
        sh("objcopy", f"--add-gnu-debuglink={target}", binary)
        res, _ = self.capture([binary])
        self.assertHot(res, "hot_static_work")

    def test_debuglink_crc_without_build_id(self):
        binary, debug = self.stripped_copy("crc", keep_build_id=False)
        self.assertIsNone(build_id(binary))
        target = os.path.join(os.path.dirname(binary), "symwork.debug")
        shutil.move(debug, target)
        sh("objcopy", f"--add-gnu-debuglink={target}", binary)
        res, _ = self.capture([binary])
        self.assertHot(res, "hot_static_work")
        # A debug file whose CRC does not match is skipped with one warning.
        with open(target, "r+b") as f:
            f.seek(-1, 2)
            last = f.read(1)
            f.seek(-1, 2)
            f.write(bytes([last[0] ^ 0xff]))
        res, err = self.capture([binary])
        self.assertEqual(self.share(res, "hot_static_work")[0], 0.0)
        self.assertIn("CRC", err)

    def test_minidebuginfo(self):
        d = os.path.join(self.dir, "mini")
        os.makedirs(d, exist_ok=True)
        binary = os.path.join(d, "symwork")
        shutil.copy(SYMWORK, binary)
        dyn = sh("nm", "-D", "--format=posix", "--defined-only", binary).split("\n")
        dyn = {line.split()[0] for line in dyn if line.strip()}
        funcs = sh("nm", "--format=posix", "--defined-only", binary).split("\n")
        keep = sorted({line.split()[0] for line in funcs
                       if line.strip() and line.split()[1] in ("T", "t")} - dyn)
        self.assertIn("hot_static_work", keep)
        with open(os.path.join(d, "keep"), "w") as f:
            f.write("\n".join(keep) + "\n")
        mini = os.path.join(d, "mini_debuginfo")
        sh("objcopy", "--only-keep-debug", binary, mini)
        sh("objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
           f"--keep-symbols={os.path.join(d, 'keep')}", mini)
        sh("strip", "--strip-all", "-R", ".comment", binary)
        sh("xz", "-f", mini)
        sh("objcopy", f"--add-section", f".gnu_debugdata={mini}.xz", binary)
        res, _ = self.capture([binary])
        self.assertHot(res, "hot_static_work")

    # ---- distribution debug files ---------------------------------------------

    def test_libc_internals_with_libc6_dbg(self):
        libc = "/lib/x86_64-linux-gnu/libc.so.6"
        bid = build_id(libc) if os.path.exists(libc) else None
        if not bid or not os.path.exists(f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug"):
            self.skipTest("libc6-dbg is not installed (build.sh installs it)")
        res, _ = self.capture([SYMWORK, "-q"], seconds="4")
        total = hit = 0
        for rp in res["resources"]:
            for s in rp["samples"]:
                if any(m.endswith("libc.so.6") for _, _, m, _ in s["frames"]):
                    total += s["value"]
                    # gcc splits it: msort_with_tmp.part.0, as perf shows.
                    if any(fn.startswith("msort_with_tmp") for fn, *_ in s["frames"]):
                        hit += s["value"]
        self.assertGreater(total, 100)
        self.assertGreaterEqual(hit / total, 0.9, f"msort_with_tmp in {hit}/{total} libc samples")
        print(f"  libc: msort_with_tmp* in {hit / total:.1%} of {total} samples with a libc frame",
              file=sys.stderr)

    # ---- demangling ---------------------------------------------------------------

    def test_cxx_demangled(self):
        res, _ = self.capture([CXXWORK])
        name = "shop::Basket<long>::checksum() const"
        self.assertHot(res, name)
        self.assertEqual(functions(res["data"])[name], "_ZNK4shop6BasketIlE8checksumEv")

    def rust(self, mangling):
        if not RUSTC:
            self.skipTest("rustc not installed (build.sh installs Debian's rustc)")
        out = os.path.join(self.dir, f"rustwork-{mangling}")
        flags = ["-C", f"symbol-mangling-version={mangling}"]
        if mangling == "legacy":
            flags = []  # the default of every rustc release
        sh(RUSTC, "-O", "-g", *flags, "-o", out, os.path.join(SRC, "rust", "rustwork.rs"))
        res, _ = self.capture([out])
        name = "rustwork::shop::hot_rust_work"
        self.assertHot(res, name)
        return functions(res["data"])[name]

    def test_rust_legacy(self):
        sysname = self.rust("legacy")
        self.assertTrue(sysname.startswith("_ZN"), sysname)

    def test_rust_v0(self):
        sysname = self.rust("v0")
        self.assertTrue(sysname.startswith("_R"), sysname)

    # ---- PLT stubs ------------------------------------------------------------------

    def plt_ranges(self, binary):
        """[(start, end)] of the PLT sections of a non-PIE @binary (absolute)."""
        out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True,
                             check=True).stdout
        ranges = []
        for line in out.splitlines():
            f = line.replace("[ ", "[").split()
            if len(f) > 5 and f[1] in (".plt", ".plt.sec", ".plt.got"):
                addr, size = int(f[3], 16), int(f[5], 16)
                ranges.append((addr, addr + size))
        return ranges

    def test_plt_stub_named(self):
        """Samples in a PLT stub are named after the function it calls. The
        stub is one jump, so how many samples land in it varies with the
        CPU (none in some runs): every sample whose leaf lies in the PLT
        must read abs@plt, over captures until some do."""
        if not shutil.which("gcc") or not shutil.which("readelf"):
            self.skipTest("gcc or readelf is not installed")
        src = os.path.join(self.dir, "pltwork.c")
        binary = os.path.join(self.dir, "pltwork")
        with open(src, "w") as f:
            f.write(PLT_WORK)
        sh("gcc", "-O1", "-fno-builtin", "-no-pie", "-o", binary, src)
        ranges = self.plt_ranges(binary)
        self.assertTrue(ranges, "no PLT section")
        in_stub = named = total = 0
        for _ in range(6):
            res, _ = self.capture([binary])
            for rp in res["resources"]:
                for smp in rp["samples"]:
                    total += smp["value"]
                    fn, _, mapping, addr = smp["frames"][0]
                    if mapping.endswith("pltwork") and any(a <= addr < b for a, b in ranges):
                        in_stub += smp["value"]
                        named += smp["value"] if fn == "abs@plt" else 0
            if in_stub:
                break
        print(f"  {self._testMethodName}: {in_stub} of {total} samples in the PLT, "
              f"{named} named abs@plt", file=sys.stderr)
        self.assertGreater(total, 100, "too few samples")
        if not in_stub:
            self.skipTest("no sample landed in the PLT stub in 6 captures")
        self.assertEqual(named, in_stub)
        out = os.path.join(self.dir, "cpu.pb")
        r = subprocess.run([os.path.join(REPO, "build", "profcap"), "report", out, "--top", "10"],
                           capture_output=True, text=True, timeout=60)
        self.assertIn("abs@plt", r.stdout)

    # ---- Go -----------------------------------------------------------------------

    def test_go_stripped(self):
        if not GO:
            self.skipTest("go not installed (build.sh installs golang-go)")
        d = os.path.join(self.dir, "go")
        os.makedirs(d, exist_ok=True)
        out = os.path.join(d, "gowork")
        env = dict(os.environ, GOCACHE=os.path.join(d, "cache"), GOPATH=os.path.join(d, "gopath"),
                   GO111MODULE="off", CGO_ENABLED="0", GOFLAGS="")
        sh(GO, "build", "-ldflags=-s -w", "-o", out, os.path.join(SRC, "go", "gowork.go"), env=env)
        self.assertNotIn(".symtab", sh("readelf", "-S", "-W", out))
        res, _ = self.capture([out])
        self.assertHot(res, "main.hotGoWork")
        attrs = mapping_attrs(res["data"])[out]
        gobid = sh(GO, "tool", "buildid", out, env=env).strip()
        self.assertEqual(attrs.get("process.executable.build_id.go"), gobid)
        self.assertEqual(attrs.get("process.executable.build_id.htlhash"), htlhash(out))

    def go_stripped_pie(self, cgo):
        """goleaf as a stripped PIE, made by the system linker with @cgo, else
        by Go's own: no .symtab and no .gopclntab section."""
        if not GO:
            self.skipTest("go not installed (build.sh installs golang-go)")
        out = os.path.join(self.dir, f"goleaf_{'cgo' if cgo else 'go'}_pie_s")
        env = dict(os.environ, GOCACHE=os.path.join(GO_CACHE, "cache"),
                   GOPATH=os.path.join(GO_CACHE, "gopath"), GOFLAGS="-mod=mod",
                   CGO_ENABLED="1" if cgo else "0")
        r = subprocess.run([GO, "build", "-ldflags=-s -w", "-buildmode=pie", "-o", out, "."],
                           cwd=GOLEAF, env=env, capture_output=True, text=True, timeout=600)
        if r.returncode and cgo:
            self.skipTest(f"the cgo build failed (no C compiler?): {r.stderr.strip()}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("DYN", sh("readelf", "-h", out))
        sections = [line.split("]", 1)[1].split()[0] for line in
                    sh("readelf", "-S", "-W", out).splitlines() if "] ." in line]
        self.assertNotIn(".symtab", sections)
        self.assertNotIn(".gopclntab", sections)
        self.assertEqual(".data.rel.ro.gopclntab" in sections, not cgo)
        return out

    def test_go_stripped_pie(self):
        # Go's own linker: the pclntab in .data.rel.ro.gopclntab.
        res, _ = self.capture([self.go_stripped_pie(cgo=False)], seconds="5")
        self.assertHot(res, "main.hotGoWork")
        self.assertHot(res, "main.main")

    def test_go_stripped_cgo_pie(self):
        # The system linker: the pclntab inside .data.rel.ro, its text
        # address in .rela.dyn.
        res, _ = self.capture([self.go_stripped_pie(cgo=True)], seconds="5")
        self.assertHot(res, "main.hotGoWork")
        self.assertHot(res, "main.main")

    # ---- debuginfod ---------------------------------------------------------------

    def test_debuginfod_download(self):
        binary, debug = self.stripped_copy("dinfod")
        bid = build_id(binary)
        served = os.path.join(self.dir, "served")
        os.makedirs(served, exist_ok=True)
        shutil.move(debug, os.path.join(served, bid + ".debug"))
        _Handler.root = served
        _Handler.requests = []
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        th = threading.Thread(target=srv.serve_forever, daemon=True)
        th.start()
        cache = os.path.join(self.dir, "dcache")
        try:
            env = dict(os.environ, DEBUGINFOD_URLS=f"http://127.0.0.1:{srv.server_address[1]}/",
                       DEBUGINFOD_CACHE_PATH=cache)
            res, _ = self.capture([binary], env=env)
            self.assertHot(res, "hot_static_work")
            self.assertIn(f"/buildid/{bid}/debuginfo", _Handler.requests)
            self.assertTrue(os.path.exists(os.path.join(cache, bid, "debuginfo")))
            # Over DEBUGINFOD_MAXSIZE: not kept, not used, one warning.
            env = dict(env, DEBUGINFOD_CACHE_PATH=os.path.join(self.dir, "dcache-small"),
                       DEBUGINFOD_MAXSIZE="1000")
            res, err = self.capture([binary], seconds="1", env=env)
            self.assertEqual(self.share(res, "hot_static_work")[0], 0.0)
            self.assertIn("DEBUGINFOD_MAXSIZE", err)
            self.assertFalse(os.path.exists(os.path.join(self.dir, "dcache-small", bid, "debuginfo")))
            # Unset: no request at all (air-gapped hosts).
            _Handler.requests = []
            env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
            res, _ = self.capture([binary], seconds="1", env=env)
            self.assertEqual(_Handler.requests, [])
        finally:
            srv.shutdown()
            srv.server_close()


if __name__ == "__main__":
    unittest.main()
