"""End-to-end tests of running as another user with capabilities (setpriv):
CAP_BPF + CAP_PERFMON sample, and profcap says exactly what else is missing
and what it costs; with the extra capabilities nothing is lost."""
import os
import shutil
import subprocess
import tempfile
import unittest

from capture_util import PROFCAP, Workload, can_sample, decode

OK, WHY = can_sample()
if OK and not shutil.which("setpriv"):
    OK, WHY = False, "setpriv (util-linux) is not installed"


def sysctl(name):
    with open(f"/proc/sys/kernel/{name}") as f:
        return int(f.read())


def as_nobody(caps, args):
    c = ",".join(f"+{x}" for x in caps)
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           f"--inh-caps={c}", f"--ambient-caps={c}", PROFCAP] + args,
                          capture_output=True, text=True, timeout=60)


def names_of(d, pid):
    return {f[0] for r in d["resources"] if r["attrs"]["process.pid"] == pid
            for s in r["samples"] for f in s["frames"] if f[0]}


@unittest.skipUnless(OK, WHY)
class PrivilegesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="profcap-privs-")
        os.chmod(self.dir, 0o777)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_bpf_and_perfmon_only_say_what_is_missing(self):
        out = os.path.join(self.dir, "min.pb")
        with Workload("groundtruth") as w:  # a root process: another user's
            r = as_nobody(["bpf", "perfmon"], ["capture", "--seconds", "1.5", "-p", str(w.pid),
                                               "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("running as uid 65534 without CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH: "
                      "processes of other users get no symbols and no table unwinding",
                      r.stderr)
        kptr, paranoid = sysctl("kptr_restrict"), sysctl("perf_event_paranoid")
        if kptr == 0 and paranoid > 1:
            self.assertIn(f"kernel symbols are hidden: kernel frames keep addresses only; "
                          f"kernel.perf_event_paranoid is {paranoid} (above 1) and profcap "
                          f"lacks CAP_SYSLOG", r.stderr)
            self.assertNotIn("kernel.kptr_restrict is", r.stderr)
        elif kptr == 1:
            self.assertIn("kernel.kptr_restrict is 1 and profcap lacks CAP_SYSLOG", r.stderr)
        d = decode(out)
        self.assertTrue(d["resources"], r.stderr)
        # What the warning says it costs: no symbols for the root process.
        self.assertFalse(names_of(d, w.pid) & {"main", "chain_a", "burn_a"}, r.stderr)

    def test_with_ptrace_dac_and_syslog_nothing_is_lost(self):
        out = os.path.join(self.dir, "full.pb")
        with Workload("groundtruth") as w:
            r = as_nobody(["bpf", "perfmon", "sys_ptrace", "dac_read_search", "syslog"],
                          ["capture", "--seconds", "1.5", "-p", str(w.pid), "-o", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("without CAP_", r.stderr)
        self.assertNotIn("kernel symbols are hidden", r.stderr)
        d = decode(out)
        self.assertTrue(names_of(d, w.pid) & {"main", "chain_a", "burn_a"}, r.stderr)


if __name__ == "__main__":
    unittest.main()
