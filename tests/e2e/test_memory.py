"""End-to-end tests of memory profiles (capture --memory) against the ground
truth of the C workloads in tests/e2e/mem/, compiled here: allocations from
known call sites in known volumes, some freed, some kept (root: real BPF
and uprobes)."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from capture_util import PROFCAP, can_sample, check_conformance, decode, run_profcap

OK, WHY = can_sample()
HERE = os.path.dirname(os.path.abspath(__file__))
MEM = os.path.join(HERE, "mem")
CC = shutil.which("gcc") or shutil.which("cc")
# A smaller mean interval than the default: more samples, so the shares
# below hold with a margin on a run of a few seconds.
RATE = "64KiB"
TYPES = ("alloc_space", "alloc_objects", "inuse_space", "inuse_objects")


def build(src, out, *extra):
    """Compile tests/e2e/mem/@src into @out (no frame pointers: the table
    unwinder has to find main)."""
    subprocess.run([CC, "-O2", "-g", "-fomit-frame-pointer", "-o", out,
                    os.path.join(MEM, src), *extra], check=True)


def by_type(path, pid=None):
    """{sample type: [(frames, value)]} of the capture at @path (only
    process @pid when given); frames are function names, leaf first."""
    d = decode(path)
    strings = d["data"].dictionary.string_table
    out = {}
    for r in d["resources"]:
        if pid is not None and r["attrs"].get("process.pid") != pid:
            continue
        t = strings[r["profile"].sample_type.type_strindex]
        for s in r["samples"]:
            out.setdefault(t, []).append(([f[0] for f in s["frames"]], s["value"]))
    return out


def site_totals(samples, sites):
    """Value per site (the first of @sites on a sample's stack) and the
    total of all samples."""
    per = {s: 0 for s in sites}
    total = 0
    for frames, v in samples:
        total += v
        for s in sites:
            # gcc's clones (site.constprop.0), C++ names (make_big())
            if any(f == s or f.startswith((s + ".", s + "(")) for f in frames):
                per[s] += v
                break
    return per, total


@unittest.skipUnless(OK and CC, WHY if not OK else "no C compiler")
class MemoryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def capture_cmd(self, prog, args, extra=()):
        """capture --memory -- @prog @args: (truth dict from its last
        stdout line, types of the output, stderr)."""
        out = os.path.join(self.dir, "mem.pb")
        r = run_profcap(["capture", "--memory", "--memory-rate", RATE, *extra, "-o", out,
                         "--", prog, *args], timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        check_conformance(out)
        truth = json.loads(r.stdout.strip().splitlines()[-1])
        return truth, by_type(out), r.stderr

    def test_three_sites(self):
        """Shares of allocated bytes within 5 points, objects within 10 %,
        in-use bytes (kept ones, held at exit) within 10 %, stacks complete
        to main."""
        prog = os.path.join(self.dir, "three_sites")
        build("three_sites.c", prog)
        # 2.5 s before allocating: the process's tables are built by then
        truth, types, err = self.capture_cmd(prog, ["300", "2500"])
        for t in TYPES:
            self.assertIn(t, types, err)
        sites = ("site_a", "site_b", "site_c")
        per, total = site_totals(types["alloc_space"], sites)
        true_total = truth["a_bytes"] + truth["b_bytes"] + truth["c_bytes"]
        self.assertLess(abs(total - true_total) / true_total, 0.10, (total, true_total))
        for s, k in zip(sites, "abc"):
            got, want = per[s] / total, truth[k + "_bytes"] / true_total
            self.assertLess(abs(got - want), 0.05, (s, got, want, err))
        per, _ = site_totals(types["alloc_objects"], sites)
        for s, k in zip(sites, "abc"):
            want = truth[k + "_objs"]
            self.assertLess(abs(per[s] - want) / want, 0.10, (s, per[s], want))
        _, inuse = site_totals(types["inuse_space"], sites)
        self.assertLess(abs(inuse - truth["kept_bytes"]) / truth["kept_bytes"], 0.10,
                        (inuse, truth["kept_bytes"]))
        # site_b frees everything it allocates
        per, _ = site_totals(types["inuse_space"], sites)
        self.assertLess(per["site_b"], 0.02 * inuse, per)
        # complete stacks: main under (nearly) every allocated byte
        with_main = sum(v for f, v in types["alloc_space"] if "main" in f)
        self.assertGreater(with_main / total, 0.95, types["alloc_space"][:5])
        self.assertIn("allocations made before the capture started are unknown", err)
        self.check_pprof(os.path.join(self.dir, "mem.pb"))

    def check_pprof(self, pb):
        """pprof output of a memory capture is a heap profile to go tool
        pprof; report shows each type."""
        for t in TYPES:
            r = run_profcap(["report", pb, "--type", t, "--top", "3"])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("value       %s/%s" % (t, "count" if "objects" in t else "bytes"),
                          r.stdout)
        go = shutil.which("go")
        if not go:
            self.skipTest("no go tool to read the pprof output")
        out = os.path.join(self.dir, "heap.pprof")
        r = run_profcap(["convert", pb, "--type", "inuse_space", "--to", "pprof", "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run([go, "tool", "pprof", "-top", out], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Type: inuse_space", r.stdout)
        self.assertIn("site_c", r.stdout)

    def test_pid_live_heap(self):
        """-p on a running process: in-use bytes are those it keeps while
        the capture ends; allocations before the capture are not counted."""
        prog = os.path.join(self.dir, "three_sites")
        build("three_sites.c", prog)
        # It allocates 4 s after its start (profcap is attached by then),
        # prints its truth and stays: the capture ends after that.
        w = subprocess.Popen([prog, "100", "4000", "120"], stdout=subprocess.PIPE, text=True)
        out = os.path.join(self.dir, "pid.pb")
        try:
            time.sleep(0.3)
            p = subprocess.Popen([PROFCAP, "capture", "--memory", "--memory-rate", "16KiB",
                                  "-p", str(w.pid), "--seconds", "300", "-o", out],
                                 stderr=subprocess.PIPE, text=True)
            truth = json.loads(w.stdout.readline())
            time.sleep(0.5)
            p.send_signal(2)
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            check_conformance(out)
        finally:
            w.kill()
            w.wait()
        types = by_type(out)
        _, inuse = site_totals(types.get("inuse_space", []), ())
        self.assertLess(abs(inuse - truth["kept_bytes"]) / truth["kept_bytes"], 0.10,
                        (inuse, truth["kept_bytes"], err))

    def test_usdt_contract(self):
        """The same three sites through the OpenTelemetry contract: the test
        sampler library fires otel_memory:alloc/free, profcap uses those
        (not the allocator probes) with the library's weights."""
        if not os.path.exists("/usr/include/x86_64-linux-gnu/sys/sdt.h"):
            subprocess.run(["apt-get", "install", "-y", "systemtap-sdt-dev"],
                           capture_output=True)
        if not os.path.exists("/usr/include/x86_64-linux-gnu/sys/sdt.h"):
            self.skipTest("systemtap-sdt-dev (sys/sdt.h) is not installed and could not be")
        lib = os.path.join(self.dir, "libotel_sampler.so")
        subprocess.run([CC, "-O2", "-g", "-fPIC", "-shared", "-o", lib,
                        os.path.join(MEM, "otel_sampler.c"), "-lm"], check=True)
        prog = os.path.join(self.dir, "three_sites_usdt")
        build("three_sites.c", prog, "-DOTEL_SAMPLER", "-L" + self.dir,
              "-Wl,-rpath," + self.dir, "-lotel_sampler")
        os.environ["OTEL_SAMPLER_RATE"] = "65536"
        try:
            truth, types, err = self.capture_cmd(prog, ["300", "2500"])
        finally:
            del os.environ["OTEL_SAMPLER_RATE"]
        self.assertIn("otel_memory probes in 1 files", err)
        sites = ("site_a", "site_b", "site_c")
        per, total = site_totals(types["alloc_space"], sites)
        true_total = truth["a_bytes"] + truth["b_bytes"] + truth["c_bytes"]
        self.assertLess(abs(total - true_total) / true_total, 0.10, (total, true_total))
        for s, k in zip(sites, "abc"):
            self.assertLess(abs(per[s] / total - truth[k + "_bytes"] / true_total), 0.05, per)
        per, _ = site_totals(types["alloc_objects"], sites)
        for s, k in zip(sites, "abc"):
            want = truth[k + "_objs"]
            self.assertLess(abs(per[s] - want) / want, 0.10, (s, per[s], want))
        _, inuse = site_totals(types["inuse_space"], ())
        self.assertLess(abs(inuse - truth["kept_bytes"]) / truth["kept_bytes"], 0.10,
                        (inuse, truth["kept_bytes"]))
        # the sampler's own function is the leaf: not libc's malloc
        leaves = {f[0] for f, v in types["alloc_space"] if f and v > total / 100}
        self.assertEqual(leaves, {"otel_sampler_malloc"}, leaves)

    def test_cxx_operator_new(self):
        """C++: operator new (libstdc++'s, calling malloc) under the sites."""
        cxx = shutil.which("g++")
        if not cxx:
            self.skipTest("no C++ compiler")
        prog = os.path.join(self.dir, "cxx_new")
        subprocess.run([cxx, "-O2", "-g", "-o", prog, os.path.join(MEM, "cxx_new.cc")],
                       check=True)
        truth, types, err = self.capture_cmd(prog, ["100", "2500"])
        per, total = site_totals(types["alloc_space"], ("make_big", "make_small"))
        true_total = truth["big_bytes"] + truth["small_bytes"]
        for site, k in (("make_big", "big_bytes"), ("make_small", "small_bytes")):
            self.assertLess(abs(per[site] / total - truth[k] / true_total), 0.05, (per, err))
        new = sum(v for f, v in types["alloc_space"]
                  if any(x.startswith("operator new") for x in f))
        self.assertGreater(new / total, 0.9, types["alloc_space"][:4])
        per, inuse = site_totals(types["inuse_space"], ("make_big",))
        self.assertLess(abs(per["make_big"] - truth["kept_bytes"]) / truth["kept_bytes"], 0.10)

    def test_jemalloc(self):
        """A program linked with jemalloc: its malloc is probed in
        libjemalloc (not libc's, which it does not call)."""
        if not os.path.exists("/usr/include/jemalloc/jemalloc.h"):
            subprocess.run(["apt-get", "install", "-y", "libjemalloc2", "libjemalloc-dev"],
                           capture_output=True)
        if not os.path.exists("/usr/include/jemalloc/jemalloc.h"):
            self.skipTest("libjemalloc-dev is not installed and could not be")
        prog = os.path.join(self.dir, "three_sites_je")
        build("three_sites.c", prog, "-ljemalloc")
        truth, types, err = self.capture_cmd(prog, ["200", "2500"], extra=["-v"])
        self.assertIn("libjemalloc", err)
        per, total = site_totals(types["alloc_space"], ("site_a", "site_b", "site_c"))
        true_total = truth["a_bytes"] + truth["b_bytes"] + truth["c_bytes"]
        self.assertLess(abs(total - true_total) / true_total, 0.10, (total, true_total))
        for s, k in zip(("site_a", "site_b", "site_c"), "abc"):
            self.assertLess(abs(per[s] / total - truth[k + "_bytes"] / true_total), 0.05, per)
        _, inuse = site_totals(types["inuse_space"], ())
        self.assertLess(abs(inuse - truth["kept_bytes"]) / truth["kept_bytes"], 0.10)

    def test_python(self):
        """Python: large objects come from malloc (pymalloc takes up to 512
        bytes), under the interpreter's PyByteArray_Resize."""
        py = "/usr/bin/python3"
        truth, types, err = self.capture_cmd(py, [os.path.join(MEM, "py_alloc.py"), "100",
                                                  "2500"])
        per, total = site_totals(types["alloc_space"], ("PyByteArray_Resize",))
        true_total = truth["keep_bytes"] + truth["churn_bytes"]
        self.assertLess(abs(per["PyByteArray_Resize"] - true_total) / true_total, 0.10,
                        (per, total, true_total))
        per, _ = site_totals(types["inuse_space"], ("PyByteArray_Resize",))
        self.assertLess(abs(per["PyByteArray_Resize"] - truth["kept_bytes"]) /
                        truth["kept_bytes"], 0.15, per)

    def test_agent_leak(self):
        """agent --memory: a stack leaking 1 MiB/s among churn; over 10
        windows its in-use bytes grow by about that, the churn's stay
        flat."""
        prog = os.path.join(self.dir, "leak")
        build("leak.c", prog)
        outdir = os.path.join(self.dir, "windows")
        os.mkdir(outdir)
        w = subprocess.Popen([prog, "60"])
        try:
            time.sleep(0.5)
            a = subprocess.Popen([PROFCAP, "agent", "--memory", "--memory-rate", "64K", "-p",
                                  str(w.pid), "--interval", "1s", "--output-dir", outdir, "-q"],
                                 stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while len(os.listdir(outdir)) < 11 and time.monotonic() < deadline:
                time.sleep(0.2)
            a.send_signal(2)
            _, err = a.communicate(timeout=60)
        finally:
            w.kill()
            w.wait()
        files = sorted(os.listdir(outdir))
        self.assertGreaterEqual(len(files), 11, err)
        leak, churn = [], []
        for f in files[1:11]:  # the first window begins with the probes
            path = os.path.join(outdir, f)
            check_conformance(path)
            per, _ = site_totals(by_type(path).get("inuse_space", []),
                                 ("leak_here", "churn_here"))
            leak.append(per["leak_here"])
            churn.append(per["churn_here"])
        growth = (leak[-1] - leak[0]) / (len(leak) - 1)
        self.assertGreater(growth, 0.6 * (1 << 20), leak)
        self.assertLess(growth, 1.4 * (1 << 20), leak)
        self.assertTrue(all(b >= a * 0.9 for a, b in zip(leak, leak[1:])), leak)
        self.assertLess(max(churn), 256 << 10, churn)
        # report A B: the leak is the stack that grew most
        r = run_profcap(["report", os.path.join(outdir, files[1]),
                         os.path.join(outdir, files[10]), "--top", "3"])
        self.assertEqual(r.returncode, 0, r.stderr)
        first = [l for l in r.stdout.splitlines() if l.strip().startswith(("+", "-"))][0]
        self.assertIn("leak_here", first, r.stdout)
        self.assertIn("MiB", first, r.stdout)

    def test_anonymous_mmap(self):
        """--memory-mmap: the program's own anonymous mappings count, and
        those it unmaps are not in use."""
        prog = os.path.join(self.dir, "mmap_user")
        build("mmap_user.c", prog)
        truth, types, err = self.capture_cmd(prog, ["2500"], extra=["--memory-mmap"])
        per, _ = site_totals(types["alloc_space"], ("map_here",))
        self.assertLess(abs(per["map_here"] - truth["mapped_bytes"]) / truth["mapped_bytes"],
                        0.05, (per, err))
        per, _ = site_totals(types["inuse_space"], ("map_here",))
        self.assertLess(abs(per["map_here"] - truth["kept_bytes"]) / truth["kept_bytes"], 0.05,
                        per)
        # without the flag, mappings are not allocations
        truth, types, err = self.capture_cmd(prog, ["2500"])
        per, _ = site_totals(types.get("alloc_space", []), ("map_here",))
        self.assertEqual(per["map_here"], 0)

    def test_stack_table_recycled(self):
        """More distinct stacks than the stack table holds (32768 over 8 s):
        stacks no live allocation needs are dropped as the table fills, so
        every allocation keeps its stack."""
        prog = os.path.join(self.dir, "many_stacks")
        build("many_stacks.c", prog)
        out = os.path.join(self.dir, "ms.pb")
        r = run_profcap(["capture", "--memory", "--memory-rate", "4096", "-o", out, "--", prog,
                         "1500"], timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        objs = by_type(out)["alloc_objects"]
        total = sum(v for _, v in objs)
        with_leaf = sum(v for f, v in objs if "leaf" in f)
        self.assertGreater(total, 32768 * 0.97, r.stderr)
        self.assertGreater(with_leaf / total, 0.98, (with_leaf, total))

    def test_cpu_samples_do_not_share_the_walk(self):
        """CPU samples at 10 kHz land inside memory programs' stack walks
        (uprobe programs may be interrupted): each walks in a state of its
        own, so no memory stack is two stacks run together."""
        prog = os.path.join(self.dir, "three_sites")
        build("three_sites.c", prog)
        truth, types, err = self.capture_cmd(prog, ["100", "2500"],
                                             extra=["-F", "10000", "--memory-rate", "4096"])
        doubled = [f for f, _ in types["alloc_objects"]
                   if f.count("main") > 1 or f.count("_start") > 1 or f.count("malloc") > 1]
        self.assertGreater(len(types["alloc_objects"]), 0, err)
        self.assertEqual(doubled, [], err)

    def test_children_followed(self):
        """-- CMD that forks and execs the program (a shell): the child's
        allocator is probed at its exec, its allocations counted."""
        prog = os.path.join(self.dir, "three_sites")
        build("three_sites.c", prog)
        truth, types, err = self.capture_cmd("/bin/sh", ["-c", prog + " 60 2500; true"])
        self.assertIn("alloc_space", types, err)
        sites = ("site_a", "site_b", "site_c")
        per, total = site_totals(types["alloc_space"], sites)
        true_total = truth["a_bytes"] + truth["b_bytes"] + truth["c_bytes"]
        self.assertLess(abs(total - true_total) / true_total, 0.10, (total, true_total, err))
        for s, k in zip(sites, "abc"):
            self.assertLess(abs(per[s] / total - truth[k + "_bytes"] / true_total), 0.05, per)

    def losses(self, err):
        """The loss counts of the summary line in @err."""
        line = [l for l in err.splitlines() if "memory: samples lost" in l]
        self.assertEqual(len(line), 1, err)
        nums = [int(w) for w in line[0].replace(",", " ").replace(";", " ").split() if w.isdigit()]
        return dict(zip(("live_full", "live_proc", "counts_full", "profile_full", "throttled"),
                        nums))

    def file_dropped(self, pb):
        """profcap.samples.dropped of the capture at @pb, as report shows it."""
        r = run_profcap(["report", pb, "--type", "alloc_objects", "--top", "1"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for line in r.stdout.splitlines():
            if line.strip().startswith("dropped"):
                return int(line.split()[1])
        return 0

    def test_live_table_full(self):
        """A live table smaller than the kept allocations: those it cannot
        hold are counted, in the summary and in the file's dropped count."""
        prog = os.path.join(self.dir, "three_sites")
        build("three_sites.c", prog)
        out = os.path.join(self.dir, "full.pb")
        r = run_profcap(["capture", "--memory", "--memory-rate", "4096", "-o", out, "--", prog,
                         "40", "2500"], timeout=300, env={"PROFCAP_MEMORY_LIVE": "64"})
        self.assertEqual(r.returncode, 0, r.stderr)
        check_conformance(out)
        lost = self.losses(r.stderr)
        self.assertGreater(lost["live_full"], 0, r.stderr)
        self.assertGreaterEqual(self.file_dropped(out), lost["live_full"], r.stderr)

    def test_live_share_of_several_pids(self):
        """-p A,B: each process may hold half the live table, so the one that
        allocates first cannot leave none to the other."""
        prog = os.path.join(self.dir, "three_sites")
        build("three_sites.c", prog)
        a = subprocess.Popen([prog, "40", "3000", "120"], stdout=subprocess.PIPE, text=True)
        b = subprocess.Popen([prog, "40", "6000", "120"], stdout=subprocess.PIPE, text=True)
        out = os.path.join(self.dir, "two.pb")
        try:
            time.sleep(0.3)
            p = subprocess.Popen([PROFCAP, "capture", "--memory", "--memory-rate", "4096", "-p",
                                  "%d,%d" % (a.pid, b.pid), "--seconds", "300", "-o", out],
                                 stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, PROFCAP_MEMORY_LIVE="256"))
            json.loads(a.stdout.readline())
            json.loads(b.stdout.readline())
            time.sleep(0.5)
            p.send_signal(2)
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            check_conformance(out)
        finally:
            for w in (a, b):
                w.kill()
                w.wait()
                w.stdout.close()
        self.assertGreater(self.losses(err)["live_proc"], 0, err)
        for w in (a, b):
            _, inuse = site_totals(by_type(out, pid=w.pid).get("inuse_objects", []), ())
            self.assertGreater(inuse, 0, (w.pid, err))

    def test_back_pressure_unbiased(self):
        """A budget of 200 sampled calls a second, far below the demand:
        most are dropped (counted) and the kept ones weigh more, so the
        totals and shares still hold. 300 MiB keeps the allocating phase
        long enough for the kept samples to pin the shares."""
        prog = os.path.join(self.dir, "three_sites")
        build("three_sites.c", prog)
        out = os.path.join(self.dir, "bp.pb")
        r = run_profcap(["capture", "--memory", "--memory-rate", "4096", "-o", out, "--", prog,
                         "300", "2500"], timeout=300, env={"PROFCAP_MEMORY_EVENTS": "200"})
        self.assertEqual(r.returncode, 0, r.stderr)
        check_conformance(out)
        truth = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertGreater(self.losses(r.stderr)["throttled"], 1000, r.stderr)
        per, total = site_totals(by_type(out)["alloc_space"], ("site_a", "site_b", "site_c"))
        true_total = truth["a_bytes"] + truth["b_bytes"] + truth["c_bytes"]
        self.assertLess(abs(total - true_total) / true_total, 0.15, (total, true_total))
        for s, k in zip(("site_a", "site_b", "site_c"), "abc"):
            self.assertLess(abs(per[s] / total - truth[k + "_bytes"] / true_total), 0.07, per)

    def test_memory_needs_a_target(self):
        """--memory alone would probe every process: refused without -a."""
        r = run_profcap(["capture", "--memory", "--seconds", "1", "-o",
                         os.path.join(self.dir, "x.pb")])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("-a", r.stderr)


if __name__ == "__main__":
    unittest.main()
