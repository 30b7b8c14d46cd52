"""The time-ordered exports in the real viewer: speedscope's own build (its
npm package, installed at test time into a cache directory) loads
`convert --to speedscope` and `convert --to perf-script` output in Debian's
headless Chromium, from a local http.server bound to 127.0.0.1 (the
profile as `#profileURL=`, speedscope's sandwich view, whose table is in
the DOM that --dump-dom returns). The input is the phase workload of
test_time.py (two threads, 1 s in phase_a then 1 s in phase_b) recorded
with `perf record -g -k monotonic` at test time. From the DOM:
- the profile loaded under its name (the page title), one profile per
  thread, named with its pid and tid;
- each thread's total: for speedscope's format, exactly the sum of the
  file's weights (as speedscope prints it); for perf script, its wall
  time (speedscope weighs a sample by the time to the next);
- phase_a and phase_b each hold about half of a thread's time.
The npm cache is PROFCAP_TEST_CACHE (default /var/tmp/profcap-test-cache).
Skipped (counted) without npm, Chromium, perf or gcc."""
import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import unittest
import urllib.parse

from capture_util import can_sample, run_profcap
from test_time import HZ, PHASE_C

OK, WHY = can_sample()
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
NPM = shutil.which("npm")
PERF = shutil.which("perf")
GCC = shutil.which("gcc")
CACHE = os.environ.get("PROFCAP_TEST_CACHE", "/var/tmp/profcap-test-cache")


def speedscope_release():
    """speedscope's built viewer (dist/release), installed into the cache
    the first time; None when npm cannot get it."""
    prefix = os.path.join(CACHE, "speedscope")
    release = os.path.join(prefix, "node_modules", "speedscope", "dist", "release")
    if not os.path.exists(os.path.join(release, "index.html")):
        os.makedirs(prefix, exist_ok=True)
        r = subprocess.run([NPM, "install", "--no-audit", "--no-fund", "--prefix", prefix,
                            "speedscope"], capture_output=True, text=True, timeout=300)
        if r.returncode or not os.path.exists(os.path.join(release, "index.html")):
            return None
    return release


def chromium(url, tmp, timeout=90):
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--disable-extensions", "--disable-default-apps", "--mute-audio",
           "--window-size=1200,800", "--virtual-time-budget=20000",
           "--user-data-dir=" + os.path.join(tmp, "chrome"), "--dump-dom", url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def page_text(dom):
    """The DOM's text, one space between nodes."""
    text = re.sub(r"<script.*?</script>|<style.*?</style>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text))).strip()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


SCALE = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1, "min": 60}


def seconds(s):
    """speedscope's duration text (2.04s, 434.78ms, 12.00µs) in seconds."""
    m = re.fullmatch(r"([\d.]+)(ns|µs|us|ms|s|min)", s)
    return float(m.group(1)) * SCALE[m.group(2)]


def rounding(s):
    """Half a unit of the last digit speedscope printed in @s, in seconds
    (2.04s: 0.005 s): how far its text may be from the exact value."""
    m = re.fullmatch(r"\d*(?:\.(\d+))?(ns|µs|us|ms|s|min)", s)
    return 0.5 * 10 ** -len(m.group(1) or "") * SCALE[m.group(2)]


@unittest.skipUnless(OK, WHY)
@unittest.skipUnless(BROWSER, "chromium is not installed (apt-get install chromium)")
@unittest.skipUnless(NPM, "npm is not installed (apt-get install npm)")
@unittest.skipUnless(PERF and GCC, "needs perf and gcc")
class TimeViewersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="profcap-viewers-")
        release = speedscope_release()
        if not release:
            raise unittest.SkipTest("npm install speedscope failed (no registry?)")
        cls.www = os.path.join(cls.dir, "www")
        shutil.copytree(release, cls.www)
        src = os.path.join(cls.dir, "phase.c")
        exe = os.path.join(cls.dir, "phase")
        with open(src, "w") as f:
            f.write(PHASE_C)
        subprocess.run([GCC, "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", src, "-o", exe],
                       check=True, timeout=120)
        data = os.path.join(cls.dir, "phase.data")
        r = subprocess.run([PERF, "record", "-q", "-g", "--sample-cpu", "-k", "monotonic", "-F",
                            str(HZ), "-e", "cpu-clock", "-o", data, "--", exe],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise unittest.SkipTest("perf record failed: " + r.stderr.strip()[-200:])
        cls.tids = sorted(int(ln.split()[1]) for ln in r.stdout.splitlines()
                          if ln.startswith("tid "))
        for to, name in (("speedscope", "phase.speedscope.json"),
                         ("perf-script", "phase.perf.txt")):
            r = run_profcap(["convert", data, "--to", to, "-o", os.path.join(cls.www, name)],
                            timeout=300)
            assert r.returncode == 0, r.stderr
        handler = functools.partial(QuietHandler, directory=cls.www)
        cls.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        cls.base = "http://127.0.0.1:%d/" % cls.httpd.server_address[1]
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "httpd", None):
            cls.httpd.shutdown()
            cls.httpd.server_close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def load(self, name):
        """The text of speedscope's sandwich view of www/@name."""
        url = self.base + "index.html#" + urllib.parse.urlencode(
            {"profileURL": self.base + name, "view": "sandwich"})
        r = chromium(url, self.dir)
        self.assertEqual(r.returncode, 0, r.stderr[-500:])
        text = page_text(r.stdout)
        self.assertNotIn("Something went wrong", text)
        return text

    def phase_shares(self, text):
        """{function: total share} of the sandwich table (the active thread)."""
        rows = re.findall(r"(\S+) \(([\d.]+)%\) \S+ \([<\d.]+%\) (phase_[ab]|main|run)\b", text)
        return {fn: float(share) / 100 for _, share, fn in rows}

    def check_phases(self, text, what):
        shares = self.phase_shares(text)
        for fn in ("phase_a", "phase_b"):
            self.assertIn(fn, shares, (what, text[:800]))
            self.assertGreater(shares[fn], 0.35, (what, shares))
            self.assertLess(shares[fn], 0.65, (what, shares))

    def test_speedscope_format(self):
        with open(os.path.join(self.www, "phase.speedscope.json")) as f:
            doc = json.load(f)
        text = self.load("phase.speedscope.json")
        self.assertIn("%s - speedscope" % doc["name"], text)
        self.assertIn("(1/%d)" % len(doc["profiles"]), text)
        self.assertEqual(len(doc["profiles"]), 2)
        for prof in doc["profiles"]:
            # the thread list: its name, then its total weight as speedscope prints it
            m = re.search(re.escape(prof["name"]) + r" (\S+)", text.split("Total Weight", 1)[1])
            self.assertIsNotNone(m, (prof["name"], text[:800]))
            shown, total = seconds(m.group(1)), sum(prof["weights"]) / 1e9
            self.assertAlmostEqual(shown, total, delta=rounding(m.group(1)) + total * 0.001,
                                   msg=prof["name"])
            self.assertTrue(any(str(t) in prof["name"] for t in self.tids), prof["name"])
        self.check_phases(text, "speedscope")

    def test_perf_script(self):
        text = self.load("phase.perf.txt")
        self.assertIn("phase.perf.txt - speedscope", text)
        self.assertIn("(1/2)", text)
        for tid in self.tids:
            m = re.search(r"phase pid: \d+ tid: %d (\S+)" % tid, text.split("Total Weight", 1)[1])
            self.assertIsNotNone(m, (tid, text[:800]))
            # each thread ran for the workload's 2 s of wall time
            self.assertGreater(seconds(m.group(1)), 1.7, m.group(0))
            self.assertLess(seconds(m.group(1)), 2.5, m.group(0))
        self.check_phases(text, "perf script")


if __name__ == "__main__":
    unittest.main()
