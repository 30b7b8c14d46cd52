"""The SVG flame graph in a real browser: Debian's headless Chromium takes a
screenshot of the SVG, then loads a page with the SVG inline and a script
that drives the embedded JavaScript (search, hover, click-to-zoom, search
while zoomed, reset, Ctrl-F, a narrower container) and writes what it saw
into the DOM, which --dump-dom returns. Two processes of one executable
(db) make one tower, and the graph takes the page's width.

Set PROFCAP_KEEP_SCREENSHOT=/path/shot.png to keep the screenshot."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from capture_util import PROFCAP
from test_report import N, SYNTH, write_capture

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
# A second db process: merged into the one db tower (query 60 + 20).
DB2 = {"pid": 30, "exe": "db", "samples": [(30, "db", [N("query"), N("main")], 20)]}
TOTAL = 240
WINDOW = 1000  # px: the page's width, which the graph takes

HARNESS = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>fg</title></head><body style="margin:0">
<div id="wrap">%(svg)s</div>
<pre id="result">pending</pre>
<script>
function frame(name) {
  return Array.from(document.querySelectorAll("#fg-frames > g.f")).find(
    function (g) { return g.querySelector("title").textContent.split("\\n")[0] === name; });
}
function names(sel) {
  return Array.from(document.querySelectorAll(sel)).map(
    function (g) { return g.querySelector("title").textContent.split("\\n")[0]; }).sort();
}
function hidden() {
  return Array.from(document.querySelectorAll("#fg-frames > g.f")).filter(
    function (g) { return g.style.display === "none"; }).length;
}
function fire(el, type) { el.dispatchEvent(new MouseEvent(type, {bubbles: true})); }
window.addEventListener("load", function () {
  var r = {};
  try {
    var api = window.profcapFlamegraph;
    r.api = !!api;
    r.pageWidth = document.getElementById("wrap").clientWidth;
    r.width = api.width();
    r.svgWidth = Math.round(document.getElementById("fg-svg").getBoundingClientRect().width);
    r.searchX = +document.getElementById("fg-search").getAttribute("x");
    r.frames = document.querySelectorAll("#fg-frames > g.f").length;
    r.height = +document.getElementById("fg-svg").getAttribute("height");
    r.dbTitle = frame("db").querySelector("title").textContent;
    r.share = api.search("^burn_");
    r.highlighted = names("#fg-frames > g.f.hl");
    r.matched = document.getElementById("fg-matched").textContent;
    r.plain = api.search("op<T>&");  /* XML characters in the term and the names */
    api.clear();
    r.afterClear = document.querySelectorAll("#fg-frames > g.f.hl").length;
    var chain = frame("chain_b"), rect = chain.querySelector("rect");
    fire(rect, "mouseover");
    r.status = document.getElementById("fg-status").textContent;
    r.before = +rect.getAttribute("width");
    fire(rect, "click");
    r.zoomed = api.zoomed();
    r.zoomWidth = +rect.getAttribute("width");
    r.zoomText = chain.querySelector("text").textContent;
    r.leafWidth = +frame("burn_b").querySelector("rect").getAttribute("width");
    r.mainWidth = +frame("main").querySelector("rect").getAttribute("width");
    r.hiddenZoomed = hidden();
    r.burnAShown = frame("burn_a").style.display !== "none";
    r.resetShown = document.getElementById("fg-reset").style.display !== "none";
    fire(document.getElementById("fg-reset"), "click");
    r.afterReset = {zoomed: api.zoomed(), width: +rect.getAttribute("width"), hidden: hidden()};
    /* Zoomed into a program, a search still counts shares of all. */
    fire(frame("db").querySelector("rect"), "click");
    r.dbZoom = {width: +frame("query").querySelector("rect").getAttribute("width"),
                burnA: frame("burn_a").style.display !== "none",
                height: +document.getElementById("fg-svg").getAttribute("height"),
                queryY: +frame("query").querySelector("rect").getAttribute("y")};
    r.dbShare = api.search("query");
    r.dbMatched = document.getElementById("fg-matched").textContent;
    api.clear();
    api.reset();
    window.prompt = function () { return "query|burn_w"; };
    window.dispatchEvent(new KeyboardEvent("keydown", {key: "f", ctrlKey: true, bubbles: true}));
    r.ctrlF = document.getElementById("fg-matched").textContent;
    r.ctrlFHighlighted = names("#fg-frames > g.f.hl");
    /* A narrower container: the graph follows it. */
    document.getElementById("wrap").style.width = "600px";
    window.dispatchEvent(new Event("resize"));
    setTimeout(function () {
      try {
        r.resized = {width: api.width(), chain: +rect.getAttribute("width"),
                     searchX: +document.getElementById("fg-search").getAttribute("x")};
      } catch (e) {
        r.error = String(e) + " " + e.stack;
      }
      document.getElementById("result").textContent = JSON.stringify(r);
    }, 300);
  } catch (e) {
    r.error = String(e) + " " + e.stack;
    document.getElementById("result").textContent = JSON.stringify(r);
  }
});
</script></body></html>
"""


def chromium(args, tmp, timeout=20):
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
           "--disable-default-apps", "--mute-audio", "--user-data-dir=" + os.path.join(tmp, "profile")]
    return subprocess.run(cmd + args, capture_output=True, text=True, timeout=timeout)


@unittest.skipUnless(BROWSER, "chromium is not installed (apt-get install chromium)")
class FlamegraphBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(PROFCAP):
            raise unittest.SkipTest("build/profcap is missing: run ./build.sh")
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = cls.tmp.name
        pb = os.path.join(tmp, "synth.pb")
        cls.svg = os.path.join(tmp, "fg.svg")
        write_capture(pb, SYNTH + [DB2])
        r = subprocess.run([PROFCAP, "flamegraph", pb, "-o", cls.svg, "--title", "browser test"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode:
            raise AssertionError(f"flamegraph failed: {r.stderr}")
        probe = chromium(["--version"], tmp)
        if probe.returncode:
            raise unittest.SkipTest(f"chromium cannot run here: {probe.stderr.strip()[:200]}")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_screenshot(self):
        png = os.path.join(self.tmp.name, "fg.png")
        r = chromium(["--screenshot=" + png, "--window-size=1200,300", "file://" + self.svg], self.tmp.name)
        self.assertTrue(os.path.exists(png), f"no screenshot: {r.stderr[-500:]}")
        with open(png, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        # A blank 1200x300 page compresses to ~1-3 KB; coloured frames with text do not.
        self.assertGreater(len(data), 10000, "the screenshot looks blank")
        keep = os.environ.get("PROFCAP_KEEP_SCREENSHOT")
        if keep:
            shutil.copy(png, keep)

    def test_search_hover_zoom(self):
        with open(self.svg, encoding="utf-8") as f:
            svg = f.read()
        svg = re.sub(r"^<\?xml[^>]*\?>\s*", "", svg)
        page = os.path.join(self.tmp.name, "harness.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(HARNESS % {"svg": svg})
        r = chromium(["--virtual-time-budget=3000", f"--window-size={WINDOW},800", "--dump-dom",
                      "file://" + page], self.tmp.name)
        m = re.search(r'<pre id="result">(.*?)</pre>', r.stdout, re.S)
        self.assertTrue(m, f"no result in the DOM: {r.stdout[-500:]} {r.stderr[-500:]}")
        text = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        self.assertNotEqual(text, "pending", "the harness script did not run")
        res = json.loads(text)
        self.assertNotIn("error", res)
        self.assertTrue(res["api"])
        # The graph takes the page's width; the controls move with it.
        w = res["pageWidth"]
        self.assertGreater(w, 900)
        self.assertEqual(res["width"], w)
        self.assertEqual(res["svgWidth"], w)
        self.assertEqual(res["searchX"], w - 10)
        inner = w - 20
        # 19 frames: pid 20 and pid 30 (both db) share one tower.
        self.assertEqual(res["frames"], 19)
        self.assertTrue(res["dbTitle"].startswith("db\n100 samples, 41.67% of all, type process, 2 processes"),
                        res["dbTitle"])
        # burn_a 50 + burn_b 30 + burn_w 40 of 240
        self.assertAlmostEqual(res["share"], 120 / TOTAL, places=6)
        self.assertEqual(res["highlighted"], ["burn_a", "burn_b", "burn_w"])
        self.assertIn("50.00%", res["matched"])
        self.assertAlmostEqual(res["plain"], 20 / TOTAL, places=6)
        self.assertEqual(res["afterClear"], 0)
        self.assertTrue(res["status"].startswith("chain_b | 30 samples, 12.50% of all, type native"), res["status"])
        self.assertAlmostEqual(res["before"], inner * 30 / TOTAL, delta=0.2)
        self.assertTrue(res["zoomed"])
        self.assertEqual(res["zoomWidth"], inner)
        self.assertEqual(res["zoomText"], "chain_b")
        self.assertEqual(res["leafWidth"], inner)   # burn_b is chain_b's only descendant chain
        self.assertEqual(res["mainWidth"], inner)   # ancestors span the width too
        self.assertFalse(res["burnAShown"])
        self.assertGreater(res["hiddenZoomed"], 10)
        self.assertTrue(res["resetShown"])
        self.assertEqual(res["afterReset"]["zoomed"], False)
        self.assertEqual(res["afterReset"]["hidden"], 0)
        self.assertAlmostEqual(res["afterReset"]["width"], inner * 30 / TOTAL, delta=0.2)
        # Zoomed into db: query (80 of db's 100) fills 80 %, app is hidden,
        # and the search share stays a share of all.
        self.assertAlmostEqual(res["dbZoom"]["width"], inner * 80 / 100, delta=0.2)
        self.assertFalse(res["dbZoom"]["burnA"])
        # As tall as the deepest stack shown: 6 rows (all .. burn_b), then 4
        # zoomed into db (all, db, main, query), query in the top row.
        self.assertEqual(res["height"], 68 + 6 * 16 + 30)
        self.assertEqual(res["dbZoom"]["height"], 68 + 4 * 16 + 30)
        self.assertEqual(res["dbZoom"]["queryY"], 68)
        self.assertAlmostEqual(res["dbShare"], 80 / TOTAL, places=6)
        self.assertIn("33.33%", res["dbMatched"])
        self.assertIn("50.00%", res["ctrlF"])      # query 80 + burn_w 40
        self.assertEqual(res["ctrlFHighlighted"], ["burn_w", "query"])
        # A 600 px container: frames and controls are laid out again.
        self.assertEqual(res["resized"]["width"], 600)
        self.assertAlmostEqual(res["resized"]["chain"], 580 * 30 / TOTAL, delta=0.2)
        self.assertEqual(res["resized"]["searchX"], 590)

if __name__ == "__main__":
    unittest.main()
