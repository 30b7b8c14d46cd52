"""End-to-end tests of JIT frames named by perf maps (root: real BPF sampling).

jitloop runs two machine-code functions from an anonymous page and names them
in /tmp/perf-<pid>.map; node --perf-basic-prof does the same for JavaScript."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from capture_util import (WORKLOADS, Workload, can_sample, check_conformance, decode, run_profcap)

OK, WHY = can_sample()
NODE = shutil.which("node") or shutil.which("nodejs")
UNSHARE = shutil.which("unshare")


def jit_frames(res):
    """{function: (samples, set of types, set of mappings)} of every frame."""
    out = {}
    for s in res["samples"]:
        for fn, ftype, mapping, _addr in s["frames"]:
            n, types, maps = out.get(fn, (0, set(), set()))
            types.add(ftype)
            maps.add(mapping)
            out[fn] = (n + s["value"], types, maps)
    return out


def children_of(ppid):
    """Pids whose parent is @ppid."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status") as f:
                for line in f:
                    if line.startswith("PPid:") and int(line.split()[1]) == ppid:
                        pids.append(int(d))
                        break
        except OSError:
            pass
    return pids


@unittest.skipUnless(OK, WHY)
class PerfMapTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def capture(self, pid, seconds="3"):
        out = os.path.join(self.dir, "cpu.pb")
        r = run_profcap(["capture", "-o", out, "-p", str(pid), "--seconds", seconds, "-F", "999"])
        self.assertEqual(r.returncode, 0, f"capture failed: {r.stderr}")
        ok, report = check_conformance(out)
        self.assertTrue(ok, f"conformance check failed:\n{report}")
        d = decode(out)
        self.assertEqual(len(d["resources"]), 1, "one resource for the one target process")
        return d["resources"][0], r

    def check_jitloop(self, res, hot, cold, want_type):
        frames = jit_frames(res)
        self.assertNotIn("stale_blob", frames, "an older perf map line won over a later one")
        for name in (hot, cold):
            self.assertIn(name, frames, f"no {name} frame; frames: {sorted(frames)[:20]}")
            _n, types, maps = frames[name]
            self.assertEqual(types, {want_type}, f"{name} frame types")
            self.assertEqual(maps, {"[anon]"}, f"{name} mappings")
        # 3 jit_hot calls per jit_cold one, same work each: 75 % of the JIT time.
        nh, nc = frames[hot][0], frames[cold][0]
        self.assertGreater(nh + nc, 300, "too few JIT samples")
        self.assertAlmostEqual(nh / (nh + nc), 0.75, delta=0.08, msg=f"{hot} {nh} vs {cold} {nc}")
        # JIT frames sit in complete stacks: leaf, then run_jit, then main.
        full = 0
        for s in res["samples"]:
            names = [f[0] for f in s["frames"] if f[1] != "kernel"]
            if names and names[0] == hot and names[1].startswith("run_jit") and "main" in names:
                full += s["value"]
        self.assertGreater(full, 0, f"no {hot} <- run_jit <- main stack")

    def jitloop(self, *args):
        """Capture a jitloop run (killed afterwards, so its map is removed here)."""
        w = Workload("jitloop", *args)
        try:
            res, _ = self.capture(w.pid)
        finally:
            w.stop()
            try:
                os.unlink(f"/tmp/perf-{w.pid}.map")
            except OSError:
                pass
        return res

    def test_jit_workload_named_from_perf_map(self):
        res = self.jitloop()
        self.assertEqual(res["attrs"]["process.executable.name"], "jitloop")
        # An unknown runtime: named, but native.
        self.check_jitloop(res, "jit_hot", "jit_cold", "native")

    def test_python_perf_trampolines_are_cpython(self):
        res = self.jitloop("-y")
        self.check_jitloop(res, "py::hot:/jit/loop.py", "py::cold:/jit/loop.py", "cpython")

    @unittest.skipUnless(UNSHARE, "unshare (util-linux) is not installed")
    def test_pid_and_mount_namespace(self):
        # jitloop is pid 1 in a new PID namespace with its own /tmp: its map
        # is /tmp/perf-1.map there, read through /proc/<pid>/root. A decoy
        # /tmp/perf-1.map on the host must not be used.
        decoy = "/tmp/perf-1.map"
        made_decoy = False
        if not os.path.exists(decoy):
            with open(decoy, "w") as f:
                f.write("0 ffffffffffff host_decoy\n")
            made_decoy = True
        # The new /tmp hides a checkout under /tmp: the binary is opened
        # before the mount and copied into it.
        script = (f"exec 3<{os.path.join(WORKLOADS, 'jitloop')} && mount -t tmpfs tmpfs /tmp && "
                  "cat /proc/self/fd/3 > /tmp/jitloop && chmod +x /tmp/jitloop && exec 3<&- && "
                  "exec /tmp/jitloop")
        proc = subprocess.Popen([UNSHARE, "--pid", "--mount", "--fork", "--kill-child",
                                 "sh", "-c", script], stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            self.assertTrue(line.startswith("ready 1 "), f"jitloop in a namespace: {line!r}")
            kids = children_of(proc.pid)
            self.assertEqual(len(kids), 1, f"children of unshare: {kids}")
            pid = kids[0]
            with open(f"/proc/{pid}/status") as f:
                nspid = [l.split()[1:] for l in f if l.startswith("NSpid:")][0]
            self.assertEqual(nspid, [str(pid), "1"])
            self.assertFalse(os.path.exists(f"/tmp/perf-{pid}.map"))
            res, _ = self.capture(pid)
        finally:
            proc.kill()
            proc.wait()
            if made_decoy:
                os.unlink(decoy)
        self.assertNotIn("host_decoy", jit_frames(res))
        self.check_jitloop(res, "jit_hot", "jit_cold", "native")

    def node_capture(self):
        """Capture node --perf-basic-prof running a JS CPU loop (default mode)."""
        script = ("function hotLoopJs(n) { let x = 0; for (let i = 0; i < n; i++)"
                  " { x = (x * 31 + i) | 0; } return x; }\n"
                  "let s = 0; const t0 = Date.now();\n"
                  "while (Date.now() - t0 < 500) s += hotLoopJs(100000);\n"
                  "console.log('ready ' + process.pid); \n"
                  "for (;;) s += hotLoopJs(100000);\n")
        path = os.path.join(self.dir, "hot.js")
        with open(path, "w") as f:
            f.write(script)
        # cwd: node also writes an isolate-*-v8.log there.
        proc = subprocess.Popen([NODE, "--perf-basic-prof", path], stdout=subprocess.PIPE,
                                text=True, cwd=self.dir)
        try:
            line = proc.stdout.readline()
            self.assertTrue(line.startswith("ready"), f"node did not start: {line!r}")
            res, r = self.capture(proc.pid)
        finally:
            proc.kill()
            proc.wait()
            try:
                os.unlink(f"/tmp/perf-{proc.pid}.map")
            except OSError:
                pass
        return res, r

    @unittest.skipUnless(NODE, "node is not installed (apt-get install nodejs)")
    def test_node_stacks_complete_through_builtins(self):
        # V8's builtins (Builtins_InterpreterEntryTrampoline, Builtins_JSEntry)
        # sit in node's .text without CFI and JS code in anonymous memory:
        # the unwinder crosses them with frame pointers and goes back to the
        # tables in node's C++ code, down to node::Start and _start.
        res, r = self.node_capture()
        total = done = named = 0
        for s in res["samples"]:
            user = [f for f in s["frames"] if f[1] != "kernel"]
            names = [f[0] for f in user]
            total += s["value"]
            if any(n.startswith("node::Start(") or "4node5StartE" in n for n in names):
                done += s["value"]
            if any(f[1] == "v8js" and "hotLoopJs" in f[0] for f in user):
                named += s["value"]
        self.assertGreater(total, 300, r.stderr)
        print(f"# node: {done}/{total} samples ({100 * done / total:.1f} %) reach node::Start, "
              f"{named} with the perf map's JS name")
        self.assertGreaterEqual(done / total, 0.99,
                                f"{done}/{total} samples reach node::Start\n{r.stderr}")
        self.assertGreater(named / total, 0.5, f"JS frames named from the perf map: {named}/{total}")

    @unittest.skipUnless(NODE, "node is not installed (apt-get install nodejs)")
    def test_node_perf_basic_prof_v8js(self):
        res, _ = self.node_capture()
        frames = jit_frames(res)
        hot = {fn: v for fn, v in frames.items() if "hotLoopJs" in fn}
        self.assertTrue(hot, f"no hotLoopJs frame; top frames: {sorted(frames)[:30]}")
        total = sum(s["value"] for s in res["samples"])
        nhot = sum(v[0] for v in hot.values())
        self.assertGreater(nhot / total, 0.5, f"hotLoopJs in {nhot} of {total} samples")
        for fn, (_n, types, _maps) in hot.items():
            self.assertEqual(types, {"v8js"}, f"{fn} frame types")
        # Frames of node's own binary stay native.
        native = [fn for fn, v in frames.items() if v[1] == {"native"} and v[2] - {"[anon]"}]
        self.assertTrue(native, "no native frames of node itself")


if __name__ == "__main__":
    unittest.main()
