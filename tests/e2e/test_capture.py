"""End-to-end tests of `profcap capture` (root: real BPF sampling)."""
import bisect
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from capture_util import (PROFCAP, Workload, can_sample, check_conformance, decode, run_profcap)

OK, WHY = can_sample()


def chain_shares(res, roots=("chain_a", "chain_b", "chain_c")):
    """Share of the main thread's samples whose stack contains each root."""
    totals = {r: 0 for r in roots}
    n = 0
    for s in res["samples"]:
        if s["attrs"].get("thread.name") != "gt-main":
            continue
        names = [f[0] for f in s["frames"]]
        n += s["value"]
        for r in roots:
            if r in names:
                totals[r] += s["value"]
    return {r: (v / n if n else 0.0) for r, v in totals.items()}, n


@unittest.skipUnless(OK, WHY)
class CaptureTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def capture(self, *args, name="cpu.pb", timeout=120, env=None):
        out = os.path.join(self.dir, name)
        r = run_profcap(["capture", "-o", out] + list(args), timeout=timeout, env=env)
        self.assertEqual(r.returncode, 0, f"capture failed: {r.stderr}")
        ok, report = check_conformance(out)
        self.assertTrue(ok, f"conformance check failed:\n{report}")
        return out, r

    def test_ground_truth_chain_shares(self):
        with Workload("groundtruth", "-t") as w:
            out, r = self.capture("-p", str(w.pid), "--seconds", "3", "-F", "999")
        d = decode(out)
        self.assertEqual(len(d["resources"]), 1, "one resource for the one target process")
        res = d["resources"][0]
        self.assertEqual(res["attrs"]["process.pid"], w.pid)
        self.assertEqual(res["attrs"]["process.executable.name"], "groundtruth")
        self.assertTrue(res["attrs"]["process.executable.path"].endswith("/groundtruth"))
        self.assertEqual(res["attrs"]["host.name"], socket.gethostname())
        self.assertEqual(res["attrs"]["os.type"], "linux")
        self.assertIn("host.arch", res["attrs"])
        self.assertEqual(res["scope"].name, "profcap")

        shares, n = chain_shares(res)
        # ~3000 on an idle machine; a busy one gives the workload less CPU.
        # 500 samples still put a 5-point delta at more than 4 standard errors.
        self.assertGreater(n, 500, "expected up to ~3000 main-thread samples at 999 Hz for 3 s")
        for root, want in (("chain_a", 0.50), ("chain_b", 0.30), ("chain_c", 0.20)):
            self.assertAlmostEqual(shares[root], want, delta=0.05,
                                   msg=f"{root}: {shares[root]:.3f} vs {want} ({shares})")
        # Complete chains: the leaf's callers down to main.
        full = 0
        for s in res["samples"]:
            names = [f[0] for f in s["frames"]]
            if names[:3] == ["burn_b", "middle_b", "chain_b"] and "main" in names:
                full += s["value"]
        self.assertGreater(full, 0, "no complete burn_b <- middle_b <- chain_b <- main stack")
        # The worker thread is told apart by its attributes.
        worker = [s for s in res["samples"] if s["attrs"].get("thread.name") == "gt-worker"]
        self.assertTrue(worker, "no samples from the gt-worker thread")
        self.assertTrue(all(s["attrs"]["thread.id"] != w.pid for s in worker))
        self.assertTrue(any("burn_w" in [f[0] for f in s["frames"]] for s in worker))
        # Every user frame is native with a mapping; the binary has a build-id.
        dictionary = d["data"].dictionary
        strings = dictionary.string_table
        build_ids = [a for a in dictionary.attribute_table
                     if strings[a.key_strindex] == "process.executable.build_id.gnu"]
        self.assertTrue(build_ids, "no mapping carries a GNU build-id")
        for s in res["samples"]:
            for fn, ftype, mapping, addr in s["frames"]:
                self.assertIn(ftype, ("native", "kernel"))
        prof = res["profile"]
        self.assertEqual(strings[prof.sample_type.type_strindex], "samples")
        self.assertEqual(strings[prof.sample_type.unit_strindex], "count")
        self.assertEqual(strings[prof.period_type.type_strindex], "cpu")
        self.assertEqual(strings[prof.period_type.unit_strindex], "nanoseconds")
        self.assertEqual(prof.period, 1000000000 // 999)
        self.assertAlmostEqual(prof.duration_nano / 1e9, 3.0, delta=0.5)
        self.assertLess(abs(prof.time_unix_nano / 1e9 - time.time()), 60)

    def test_system_wide_has_kernel_frames(self):
        load = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=4k"],
                                stderr=subprocess.DEVNULL)
        try:
            out, r = self.capture("-a", "--seconds", "1.5")
        finally:
            load.kill()
            load.wait()
        d = decode(out)
        self.assertGreater(len(d["resources"]), 1, "system-wide capture saw one process only")
        kernel = [f for res in d["resources"] for s in res["samples"] for f in s["frames"]
                  if f[1] == "kernel"]
        self.assertTrue(kernel, "no kernel frames in a system-wide capture")
        self.assertTrue(all(f[2] == "[kernel.kallsyms]" for f in kernel))
        named = [f for f in kernel if f[0] != "?"]
        self.assertGreater(len(named) / len(kernel), 0.9, "kernel frames lack symbols")
        dd = [res for res in d["resources"] if res["attrs"].get("process.pid") == load.pid]
        self.assertTrue(dd, "the dd load is missing from the capture")
        # dd copies in the kernel: most of its stacks start with kernel frames
        # and continue into user space.
        mixed = [s for s in dd[0]["samples"]
                 if s["frames"] and s["frames"][0][1] == "kernel" and s["frames"][-1][1] == "native"]
        self.assertTrue(mixed, "no kernel -> user stacks for dd")

    def test_kernel_names_by_the_kernel(self):
        """Kernel frames named by the kernel's own lookup (bpf/kname_prog.bpf.c)
        name the same functions /proc/kallsyms does (an alias at the same
        address counts); PROFCAP_KALLSYMS_FILE=1 reads the file instead."""
        load = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=4k"],
                                stderr=subprocess.DEVNULL)
        try:
            out, r = self.capture("-a", "--seconds", "1", "-v")
            out2, r2 = self.capture("-a", "--seconds", "1", "-v", name="file.pb",
                                    env={"PROFCAP_KALLSYMS_FILE": "1"})
        finally:
            load.kill()
            load.wait()
        self.assertIn("named in", r.stderr)
        self.assertIn("(by the kernel)", r.stderr)
        self.assertIn("(from /proc/kallsyms)", r2.stderr)
        syms = {}
        with open("/proc/kallsyms") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in "tTwW":
                    syms.setdefault(int(parts[0], 16), set()).add(parts[2])
        starts = sorted(syms)
        checked = 0
        for path in (out, out2):
            for res in decode(path)["resources"]:
                for smp in res["samples"]:
                    for name, kind, _, addr in smp["frames"]:
                        if kind != "kernel" or name == "?":
                            continue
                        i = bisect.bisect_right(starts, addr) - 1
                        self.assertGreaterEqual(i, 0, hex(addr))
                        self.assertIn(name, syms[starts[i]], hex(addr))
                        checked += 1
        print(f"# {checked} kernel frames checked against /proc/kallsyms")
        self.assertGreater(checked, 20)

    def test_no_kernel_and_no_user(self):
        with Workload("groundtruth") as w:
            out, _ = self.capture("-p", str(w.pid), "--seconds", "1", "--no-kernel", name="u.pb")
        # dd copies in the kernel, so --no-user still has frames to keep:
        # the check below cannot pass on an empty capture.
        load = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=4k"],
                                stderr=subprocess.DEVNULL)
        try:
            out2, _ = self.capture("-p", str(load.pid), "--seconds", "1", "--no-user",
                                   name="k.pb")
        finally:
            load.kill()
            load.wait()
        types = {f[1] for res in decode(out)["resources"] for s in res["samples"] for f in s["frames"]}
        self.assertEqual(types, {"native"})
        types2 = {f[1] for res in decode(out2)["resources"] for s in res["samples"] for f in s["frames"]}
        self.assertEqual(types2, {"kernel"}, "--no-user: expected kernel frames only")

    def test_truncated_stacks_are_counted_in_the_file(self):
        # 600 frames of deep() exceed the 512-frame user limit of the table
        # unwinder: every main-thread sample is truncated, says so on stderr
        # and in the file, and the report shows the count.
        with Workload("groundtruth", "-r", "600") as w:
            out, r = self.capture("-p", str(w.pid), "--seconds", "1", "-F", "499")
        self.assertIn("depth limit", r.stderr)
        rep = run_profcap(["report", out, "--json"])
        self.assertEqual(rep.returncode, 0, rep.stderr)
        cap = json.loads(rep.stdout)["capture"]
        self.assertGreater(cap["total"], 100)
        self.assertGreater(cap["truncated_samples"], 0.9 * cap["total"], cap)
        self.assertLessEqual(cap["truncated_samples"], cap["total"], cap)
        self.assertEqual(cap["dropped_samples"], 0, cap)
        # The cause travels in the file: these were cut at the depth limit.
        self.assertGreater(cap["truncated_depth_limit_samples"], 0.9 * cap["total"], cap)
        self.assertEqual(cap["truncated_depth_limit_samples"] + cap["truncated_unwind_samples"],
                         cap["truncated_samples"], cap)
        text = run_profcap(["report", out]).stdout
        self.assertIn("  truncated   %d samples (%d cut at the stack depth limit"
                      % (cap["truncated_samples"], cap["truncated_depth_limit_samples"]), text)
        # The deepest frames kept are the leaf end: burn_r under deep().
        names = [f[0] for res in decode(out)["resources"] for s in res["samples"]
                 for f in s["frames"][:3]]
        self.assertIn("burn_r", names)
        self.assertIn("deep", names)

    def test_sigint_writes_valid_profile(self):
        out = os.path.join(self.dir, "int.pb")
        with Workload("groundtruth") as w:
            p = subprocess.Popen([PROFCAP, "capture", "-p", str(w.pid), "--seconds", "60", "-o", out],
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(2.0)
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=20)
            stop_latency = time.monotonic() - t0
        self.assertEqual(p.returncode, 0, err)
        self.assertLess(stop_latency, 5.0, "capture took too long to stop after SIGINT")
        ok, report = check_conformance(out)
        self.assertTrue(ok, report)
        prof = decode(out)["resources"][0]["profile"]
        self.assertGreater(prof.duration_nano / 1e9, 1.0)
        self.assertLess(prof.duration_nano / 1e9, 10.0, "duration must be the real one, not 60 s")
        self.assertEqual([f for f in os.listdir(self.dir) if f != "int.pb"], [],
                         "temporary files left behind")

    def test_sigterm_writes_valid_profile(self):
        out = os.path.join(self.dir, "term.pb")
        p = subprocess.Popen([PROFCAP, "capture", "-a", "--seconds", "60", "-q", "-o", out],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=20)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(err, "", "-q must keep stderr silent")
        ok, report = check_conformance(out)
        self.assertTrue(ok, report)

    def test_unwritable_output_fails_before_sampling(self):
        for bad in ("/nonexistent-dir/x.pb", self.dir):
            t0 = time.monotonic()
            r = run_profcap(["capture", "--seconds", "30", "-o", bad], timeout=20)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertLess(time.monotonic() - t0, 3.0, "the output must be checked before sampling")
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn("-o", lines[0])

    def test_unprivileged_gets_one_line_hint(self):
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            "--inh-caps=-all", PROFCAP, "capture", "--seconds", "1",
                            "-o", "/tmp/never-written.pb"],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("CAP_BPF", lines[0])
        self.assertIn("CAP_PERFMON", lines[0])
        self.assertFalse(os.path.exists("/tmp/never-written.pb"))

    def test_default_name_never_clobbers(self):
        for _ in range(2):
            r = run_profcap(["capture", "--seconds", "0.3", "-q", "-p", str(os.getpid())], cwd=self.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
        files = sorted(os.listdir(self.dir))
        self.assertEqual(len(files), 2, files)
        host = socket.gethostname()
        for f in files:
            self.assertTrue(f.startswith(f"profcap-{host}-") and f.endswith(".pb"), f)
            ok, report = check_conformance(os.path.join(self.dir, f))
            self.assertTrue(ok, report)

    def test_file_format_follows_the_output_name(self):
        """-o NAME picks the file format as convert does; --format wins."""
        want = {"c.svg": b"<?xml", "c.json": b"{", "c.folded": None, "c.pb.gz": b"\x1f\x8b",
                "c.pb": b"\x0a"}
        for name, head in want.items():
            out = os.path.join(self.dir, name)
            r = run_profcap(["capture", "--seconds", "0.3", "-q", "-a", "-o", out])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                data = f.read()
            if head is None:  # folded: "comm;frames count" lines
                self.assertRegex(data.decode().splitlines()[0], r"^\S.* \d+$", name)
            else:
                self.assertTrue(data.startswith(head), (name, data[:16]))
        out = os.path.join(self.dir, "forced.svg")
        r = run_profcap(["capture", "--seconds", "0.3", "-q", "-a", "--format", "otlp", "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        ok, report = check_conformance(out)
        self.assertTrue(ok, report)

    def test_exited_process_is_still_symbolized(self):
        out = os.path.join(self.dir, "exit.pb")
        p = subprocess.Popen([PROFCAP, "capture", "-a", "--seconds", "4", "-o", out, "-q"],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        w = Workload("groundtruth", "-d", "1")
        w.proc.wait()
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)
        res = [x for x in decode(out)["resources"] if x["attrs"].get("process.pid") == w.pid]
        self.assertTrue(res, "the short-lived workload is missing")
        self.assertEqual(res[0]["attrs"].get("process.executable.name"), "groundtruth")
        names = {f[0] for s in res[0]["samples"] for f in s["frames"]}
        self.assertTrue({"burn_a", "chain_a", "main"} <= names, names)

    def test_pid_filter_excludes_others(self):
        with Workload("groundtruth") as a, Workload("groundtruth") as b:
            out, _ = self.capture("-p", str(a.pid), "--seconds", "1")
        pids = {res["attrs"]["process.pid"] for res in decode(out)["resources"]}
        self.assertEqual(pids, {a.pid})


class CliTest(unittest.TestCase):
    """Argument errors need no privileges: one line, exit code 2."""

    @unittest.skipUnless(os.path.exists(PROFCAP), "build/profcap is missing")
    def test_bad_flags_exit_2_with_one_line(self):
        cases = [
            ["capture", "--bogus"],
            ["capture", "-F", "0"],
            ["capture", "-F", "abc"],
            ["capture", "--seconds", "-1"],
            ["capture", "--seconds", "nan"],
            ["capture", "-p", "12x"],
            ["capture", "-p", "1,"],
            ["capture", "-a", "-p", "1"],
            ["capture", "--no-user", "--no-kernel"],
            ["capture", "extra"],
            ["capture", "-F"],
            ["frobnicate"],
            ["capture", "-p", "999999999"],
        ]
        for args in cases:
            r = run_profcap(args, timeout=10)
            self.assertEqual(r.returncode, 2, f"{args}: {r.stderr}")
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, f"{args}: {r.stderr}")
            self.assertTrue(lines[0].startswith("profcap: error: "), lines[0])

    @unittest.skipUnless(os.path.exists(PROFCAP), "build/profcap is missing")
    def test_help(self):
        for args in (["--help"], ["capture", "--help"], ["help", "capture"]):
            r = run_profcap(args, timeout=10)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Usage: profcap", r.stdout)
        r = run_profcap(["capture", "--help"], timeout=10)
        for flag in ("--seconds", "-F", "-a", "-p", "--no-kernel", "--no-user", "-o", "-q"):
            self.assertIn(flag, r.stdout)

    @unittest.skipUnless(os.path.exists(PROFCAP), "build/profcap is missing")
    def test_binary_is_static(self):
        r = subprocess.run(["file", "-L", PROFCAP], capture_output=True, text=True)
        self.assertIn("statically linked", r.stdout)


if __name__ == "__main__":
    unittest.main()
