"""The timeline strip of the SVG flame graph, in Debian's headless Chromium:
a page with the SVG inline drives the SVG's own script and writes what it
saw into the DOM, which --dump-dom returns.

- A synthetic timed profile (two threads, phase_a for a second, then
  phase_b, 100 Hz each; the OTLP file written the way test_report's
  write_capture writes, with timestamps added): the strip's bars (read
  back from the DOM) hold the samples' times per interval; selecting the
  first second (by the script's API and by dragging on the strip) redraws
  the graph with phase_a only; search and zoom work inside the range;
  Reset range restores the whole; a narrower page stretches the strip;
  lanes get the selection through onRange(); the inverted graph does the
  same; `flamegraph --time` draws the strip of the slice only; a
  screenshot shows the strip's bars where the DOM puts them (the PNG is
  decoded here); a profile without time has no strip.
- A real capture (root, gcc): the phases workload of test_timestamps.py
  captured with --timestamps: the bars match the capture's timestamps, and
  selecting phase_a's window (the bars within the times the workload
  prints) redraws a graph where phase_a is at least 95 %.

Set PROFCAP_KEEP_TIMELINE_SCREENSHOT=/path/shot.png to keep the screenshot."""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib

from capture_util import PROFCAP, can_sample, run_profcap
from test_flamegraph_browser import BROWSER, chromium
from test_report import N, _pb, write_capture

T0 = 1_764_425_587_000_000_000
SEC = 1_000_000_000
PERIOD = 10_000_000
WINDOW = 1000  # px: the page's width
BAR_RGB = (0x5b, 0x7f, 0xa6)  # the bars' fill in the timeline's stylesheet

HARNESS = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>tl</title></head><body style="margin:0">
<div id="wrap">%(svg)s</div>
<pre id="result">pending</pre>
<script>
var PLAN = %(plan)s;
function frame(name) {
  return Array.from(document.querySelectorAll("#fg-frames > g.f")).find(
    function (g) { return g.querySelector("title").textContent.split("\\n")[0] === name; });
}
function width(name) {
  var f = frame(name);
  return f && f.style.display !== "none" ? +f.querySelector("rect").getAttribute("width") : 0;
}
function fire(el, type, x, y) {
  el.dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: x || 0, clientY: y || 0, button: 0}));
}
window.addEventListener("load", function () {
  var r = {};
  try {
    var api = window.profcapFlamegraph;
    var notified = [];
    api.onRange(function (s) { notified.push(s ? [s.i0, s.i1] : null); });
    r.inner = api.width() - 20;
    r.tl = api.timeline();
    r.bars = Array.from(document.querySelectorAll("#fg-tl-bars > rect[data-i]")).map(
      function (b) { return [+b.getAttribute("data-i"), +b.getAttribute("data-v")]; });
    r.barsBox = (function (b) { return [b.left, b.top, b.width, b.height]; })(
      document.getElementById("fg-tl-bars").getBoundingClientRect());
    r.framesTop = document.getElementById("fg-frames").getBoundingClientRect().top;
    r.wholeA = api.search(PLAN.a);
    api.clear();
    r.wholeWidthA = width(PLAN.fa);
    /* Select phase A's window. */
    r.rangeTotal = api.range(PLAN.from, PLAN.to);
    r.sel = api.selected();
    r.selText = document.getElementById("fg-tl-sel").textContent;
    r.resetShown = document.getElementById("fg-tl-reset").style.display !== "none";
    r.shadeL = +document.getElementById("fg-tl-shade-l").getAttribute("width");
    r.shadeRx = +document.getElementById("fg-tl-shade-r").getAttribute("x");
    r.shareA = api.search(PLAN.a);
    r.matched = document.getElementById("fg-matched").textContent;
    r.bothShare = api.search("^phase_");
    r.matchedBoth = document.getElementById("fg-matched").textContent;
    r.highlightedBoth = document.querySelectorAll("#fg-frames > g.f.hl").length;
    api.clear();
    r.widthA = width(PLAN.fa);
    r.widthB = width(PLAN.fb);
    r.rootWidth = width("all");
    /* Hover in a range: the range's values. */
    fire(frame(PLAN.fa).querySelector("rect"), "mouseover");
    r.status = document.getElementById("fg-status").textContent;
    /* Zoom inside the range, then a range where the zoomed frame is empty. */
    fire(frame(PLAN.fa).querySelector("rect"), "click");
    r.zoomA = {zoomed: api.zoomed(), width: width(PLAN.fa), widthB: width(PLAN.fb)};
    r.rangeB = api.range(PLAN.bfrom, PLAN.bto);
    r.zoomB = {zoomed: api.zoomed(), widthA: width(PLAN.fa), widthB: width(PLAN.fb),
               shareB: api.search(PLAN.b)};
    api.clear();
    /* Reset range (the button): the whole profile again. */
    fire(document.getElementById("fg-tl-reset"), "click");
    r.afterReset = {sel: api.selected(), total: api.total(), shareA: api.search(PLAN.a),
                    widthA: width(PLAN.fa), text: document.getElementById("fg-tl-sel").textContent,
                    resetShown: document.getElementById("fg-tl-reset").style.display !== "none"};
    api.clear();
    /* Drag across the first quarter to the half of the strip. */
    var box = document.getElementById("fg-tl-bars").getBoundingClientRect(), y = box.top + 10;
    fire(document.getElementById("fg-tl-bars"), "mousedown", box.left + 0.25 * box.width + 0.5, y);
    window.dispatchEvent(new MouseEvent("mousemove", {clientX: box.left + 0.4 * box.width, clientY: y}));
    window.dispatchEvent(new MouseEvent("mouseup", {clientX: box.left + 0.5 * box.width - 0.5, clientY: y}));
    r.drag = api.selected();
    r.notified = notified.slice();
    api.clearRange();
    /* A narrower page: the strip follows. */
    document.getElementById("wrap").style.width = "600px";
    window.dispatchEvent(new Event("resize"));
    setTimeout(function () {
      try {
        r.resized = {width: api.width(),
                     bars: +document.getElementById("fg-tl-bars").getAttribute("width"),
                     x: api.timeX(r.tl.interval * r.tl.n / 2 - r.tl.first)};
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


def timed_profile(path, plan):
    """write_capture's file with times: @plan is [(tid, frames, [times])],
    each time one occurrence of value 1."""
    procs = [{"pid": 10, "exe": "app", "samples": [(tid, f"t{tid}", fr, len(ts)) for tid, fr, ts in plan]}]
    write_capture(path, procs, time_ns=T0, duration=2 * SEC)
    pb = _pb()
    data = pb.ProfilesData()
    with open(path, "rb") as f:
        data.ParseFromString(f.read())
    prof = data.resource_profiles[0].scope_profiles[0].profiles[0]
    for smp, (_, _, ts) in zip(prof.samples, plan):
        del smp.values[:]
        smp.values.extend([1] * len(ts))
        smp.timestamps_unix_nano.extend(ts)
    with open(path, "wb") as f:
        f.write(data.SerializeToString())


def strip_attrs(svg_text):
    m = re.search(r'<g id="fg-tl" data-n="(\d+)" data-interval="(\d+)" data-first="(\d+)" data-t0="(\d+)"',
                  svg_text)
    return {"n": int(m[1]), "interval": int(m[2]), "first": int(m[3]), "t0": int(m[4])} if m else None


def bucketed(times_values, attrs):
    out = {}
    for t, v in times_values:
        i = min((t - attrs["t0"]) // attrs["interval"], attrs["n"] - 1)
        out[i] = out.get(i, 0) + v
    return out


def drive(test, svg_path, plan, tmp):
    with open(svg_path, encoding="utf-8") as f:
        svg = re.sub(r"^<\?xml[^>]*\?>\s*", "", f.read())
    page = os.path.join(tmp, "tl-harness.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(HARNESS % {"svg": svg, "plan": json.dumps(plan)})
    r = chromium(["--virtual-time-budget=5000", f"--window-size={WINDOW},900", "--dump-dom",
                  "file://" + page], tmp, timeout=60)
    m = re.search(r'<pre id="result">(.*?)</pre>', r.stdout, re.S)
    test.assertTrue(m, f"no result in the DOM: {r.stdout[-500:]} {r.stderr[-500:]}")
    text = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    test.assertNotEqual(text, "pending", "the harness script did not run")
    res = json.loads(text)
    test.assertNotIn("error", res)
    return res


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp
    for y in range(h):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


@unittest.skipUnless(BROWSER, "chromium is not installed (apt-get install chromium)")
class TimelineSyntheticTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(PROFCAP):
            raise unittest.SkipTest("build/profcap is missing: run ./build.sh")
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = cls.tmp.name
        probe = chromium(["--version"], tmp)
        if probe.returncode:
            raise unittest.SkipTest(f"chromium cannot run here: {probe.stderr.strip()[:200]}")
        # Two threads at 100 Hz, slightly apart: phase_a in the first
        # second, phase_b in the next.
        cls.plan = []
        for tid in (1, 2):
            off = tid * 3_000_000
            cls.plan.append((tid, [N("phase_a"), N("run"), N("main")],
                             [T0 + off + i * PERIOD for i in range(100)]))
            cls.plan.append((tid, [N("phase_b"), N("run"), N("main")],
                             [T0 + SEC + off + i * PERIOD for i in range(100)]))
        cls.pb = os.path.join(tmp, "timed.pb")
        timed_profile(cls.pb, cls.plan)
        cls.svg = cls.render("tl.svg")
        with open(cls.svg, encoding="utf-8") as f:
            cls.text = f.read()
        cls.attrs = strip_attrs(cls.text)

    @classmethod
    def render(cls, name, *extra):
        out = os.path.join(cls.tmp.name, name)
        r = subprocess.run([PROFCAP, "flamegraph", cls.pb, "-o", out, "--title", "timeline test", *extra],
                           capture_output=True, text=True, timeout=30)
        if r.returncode:
            raise AssertionError(f"flamegraph failed: {r.stderr}")
        return out

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def plan_js(self, attrs):
        first = attrs["t0"] + attrs["first"]
        return {"a": "^phase_a$", "b": "^phase_b$", "fa": "phase_a", "fb": "phase_b",
                "from": T0 - first, "to": T0 + SEC - first, "bfrom": T0 + SEC - first, "bto": T0 + 2 * SEC - first}

    def test_strip_counts_and_xml(self):
        ET.fromstring(self.text.encode())  # well-formed
        a = self.attrs
        self.assertIsNotNone(a, "no strip")
        # 10 ms bars (2 s on 980 px at least 3 px each, then round).
        self.assertEqual(a["interval"], 10_000_000)
        self.assertEqual(a["t0"] + a["first"], T0 + 3_000_000)
        truth = bucketed([(t, 1) for _, _, ts in self.plan for t in ts], a)
        drawn = {int(i): int(v) for i, v in re.findall(r'<rect data-i="(\d+)" data-v="(\d+)"', self.text)}
        self.assertEqual(drawn, truth)
        self.assertIn("samples per 10 ms (highest 2)", self.text)

    def test_select_search_zoom_reset(self):
        res = drive(self, self.svg, self.plan_js(self.attrs), self.tmp.name)
        inner = res["inner"]
        # The bars in the DOM and the script's own counts agree with the times.
        truth = bucketed([(t, 1) for _, _, ts in self.plan for t in ts], self.attrs)
        self.assertEqual({i: v for i, v in res["bars"]}, truth)
        self.assertEqual({i: v for i, v in enumerate(res["tl"]["counts"]) if v}, truth)
        self.assertTrue(res["tl"]["selectable"])
        # The strip is above the graph.
        self.assertLess(res["barsBox"][1] + res["barsBox"][3], res["framesTop"])
        self.assertAlmostEqual(res["wholeA"], 0.5, places=6)
        self.assertAlmostEqual(res["wholeWidthA"], inner / 2, delta=0.2)
        # Phase A's window: phase_a fills the graph, phase_b is gone.
        self.assertEqual(res["rangeTotal"], 200)
        self.assertEqual(res["sel"]["total"], 200)
        self.assertAlmostEqual(res["shareA"], 1.0, places=6)
        self.assertIn("100.00%", res["matched"])
        # phase_b has nothing in this range: not a match.
        self.assertAlmostEqual(res["bothShare"], 1.0, places=6)
        self.assertTrue(res["matchedBoth"].endswith("(1 frame)"), res["matchedBoth"])
        self.assertEqual(res["highlightedBoth"], 1)
        self.assertAlmostEqual(res["widthA"], inner, delta=0.2)
        self.assertEqual(res["widthB"], 0)
        self.assertAlmostEqual(res["rootWidth"], inner, delta=0.2)
        self.assertTrue(res["resetShown"])
        self.assertIn("200 samples", res["selText"])
        self.assertIn("--time +0s-+0.997s", res["selText"])  # from the first sample
        self.assertTrue(res["status"].startswith("phase_a | 200 samples, 100.00% of the range"), res["status"])
        # The shades leave the selection's intervals clear.
        self.assertEqual(res["shadeL"], res["sel"]["i0"] * 100)
        self.assertEqual(res["shadeRx"], res["sel"]["i1"] * 100)
        # Zoomed into phase_a inside the range, then phase B's range: the
        # zoom falls back to the whole graph of that range.
        self.assertTrue(res["zoomA"]["zoomed"])
        self.assertAlmostEqual(res["zoomA"]["width"], inner, delta=0.2)
        self.assertEqual(res["rangeB"], 200)
        self.assertFalse(res["zoomB"]["zoomed"])
        self.assertEqual(res["zoomB"]["widthA"], 0)
        self.assertAlmostEqual(res["zoomB"]["widthB"], inner, delta=0.2)
        self.assertAlmostEqual(res["zoomB"]["shareB"], 1.0, places=6)
        # Reset range: the whole profile.
        after = res["afterReset"]
        self.assertIsNone(after["sel"])
        self.assertEqual(after["total"], 400)
        self.assertAlmostEqual(after["shareA"], 0.5, places=6)
        self.assertAlmostEqual(after["widthA"], inner / 2, delta=0.2)
        self.assertEqual(after["text"], "")
        self.assertFalse(after["resetShown"])
        # The drag from a quarter to half of the strip selects those bars.
        n = res["tl"]["n"]
        self.assertEqual(res["drag"]["i0"], n // 4)
        self.assertEqual(res["drag"]["i1"], n // 2)
        # Lanes heard every change: A, B, reset, the drag.
        self.assertEqual(len(res["notified"]), 4)
        self.assertIsNone(res["notified"][2])
        # A 600 px page: the strip is stretched to 580 px.
        self.assertEqual(res["resized"]["width"], 600)
        self.assertEqual(res["resized"]["bars"], 580)
        self.assertAlmostEqual(res["resized"]["x"], 10 + 290, delta=0.5)

    def test_inverted(self):
        svg = self.render("inv.svg", "--inverted")
        with open(svg, encoding="utf-8") as f:
            attrs = strip_attrs(f.read())
        res = drive(self, svg, self.plan_js(attrs), self.tmp.name)
        self.assertAlmostEqual(res["shareA"], 1.0, places=6)
        self.assertAlmostEqual(res["widthA"], res["inner"], delta=0.2)
        self.assertEqual(res["widthB"], 0)
        self.assertAlmostEqual(res["afterReset"]["shareA"], 0.5, places=6)

    def test_time_slice_strip(self):
        svg = self.render("slice.svg", "--time", "+0s-+1s")
        with open(svg, encoding="utf-8") as f:
            text = f.read()
        a = strip_attrs(text)
        self.assertIsNotNone(a)
        self.assertNotIn(">phase_b<", text)
        drawn = sum(int(v) for v in re.findall(r'<rect data-i="\d+" data-v="(\d+)"', text))
        self.assertEqual(drawn, 200)
        self.assertLessEqual(a["n"] * a["interval"], SEC + a["interval"])

    def test_no_time_no_strip(self):
        pb = os.path.join(self.tmp.name, "untimed.pb")
        write_capture(pb, [{"pid": 10, "exe": "app", "samples": [(1, "t", [N("f"), N("main")], 5)]}])
        out = os.path.join(self.tmp.name, "untimed.svg")
        r = subprocess.run([PROFCAP, "flamegraph", pb, "-o", out], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn("fg-tl", text)
        self.assertIn('data-top="68"', text)

    def test_screenshot_shows_strip(self):
        png = os.path.join(self.tmp.name, "tl.png")
        r = chromium(["--screenshot=" + png, "--window-size=1200,400", "file://" + self.svg], self.tmp.name,
                     timeout=60)
        self.assertTrue(os.path.exists(png), f"no screenshot: {r.stderr[-500:]}")
        keep = os.environ.get("PROFCAP_KEEP_TIMELINE_SCREENSHOT")
        if keep:
            shutil.copy(png, keep)
        w, h, rows = read_png(png)
        # The bars (y 86..134 in the SVG, full height: every bar holds 2)
        # are painted in their colour across the strip, and nowhere else.
        near = lambda p: all(abs(p[k] - BAR_RGB[k]) <= 6 for k in range(3))
        strip_rows = [y for y in range(h) if sum(1 for x in range(0, w, 4) if near(rows[y][x])) > w // 8]
        self.assertTrue(strip_rows, "no bar colour in the screenshot")
        self.assertGreaterEqual(min(strip_rows), 86)
        self.assertLessEqual(max(strip_rows), 134)
        self.assertGreater(len(strip_rows), 40)


OK, WHY = can_sample()


@unittest.skipUnless(BROWSER, "chromium is not installed (apt-get install chromium)")
@unittest.skipUnless(OK, WHY)
class TimelineCaptureTest(unittest.TestCase):
    def test_phases_capture(self):
        from test_timestamps import FREQ, build_workload, timed_samples
        if os.cpu_count() < 2:
            self.skipTest("needs two CPUs to pin the phases' threads")
        if not shutil.which("gcc"):
            self.skipTest("gcc is missing: the workload is built here")
        with tempfile.TemporaryDirectory() as tmp:
            exe = build_workload(tmp)
            if not exe:
                self.skipTest("the workload does not build with this gcc")
            pb = os.path.join(tmp, "phases.pb")
            r = run_profcap(["capture", "--timestamps", "-F", str(FREQ), "-o", pb, "--", exe, "1.5"], timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            phases = {w[0]: (int(w[1]), int(w[2])) for w in (l.split() for l in r.stdout.splitlines())
                      if w and w[0] in ("phase_a", "phase_b")}
            self.assertEqual(set(phases), {"phase_a", "phase_b"}, r.stdout)
            svg = os.path.join(tmp, "phases.svg")
            r = subprocess.run([PROFCAP, "flamegraph", pb, "-o", svg], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(svg, encoding="utf-8") as f:
                text = f.read()
            ET.fromstring(text.encode())
            attrs = strip_attrs(text)
            self.assertIsNotNone(attrs, "no strip on a timed capture")
            samples, _ = timed_samples(pb)
            truth = bucketed([(s["time"], s["value"]) for s in samples], attrs)
            first, iv, t0 = attrs["t0"] + attrs["first"], attrs["interval"], attrs["t0"]

            def inside(start, end):
                """The bars within [start, end), as ns after the first sample: a
                bar across the switch holds both phases."""
                return (-(-(start - t0) // iv) * iv + t0 - first, (end - t0) // iv * iv + t0 - first)

            (a0, a1), (b0, b1) = inside(*phases["phase_a"]), inside(*phases["phase_b"])
            plan = {"a": "^phase_a$", "b": "^phase_b$", "fa": "phase_a", "fb": "phase_b",
                    "from": a0, "to": a1, "bfrom": b0, "bto": b1}
            res = drive(self, svg, plan, tmp)
            self.assertEqual({i: v for i, v in res["bars"]}, truth)
            self.assertEqual({i: v for i, v in enumerate(res["tl"]["counts"]) if v}, truth)
            self.assertGreaterEqual(res["shareA"], 0.95, res["selText"])
            self.assertGreaterEqual(res["zoomB"]["shareB"], 0.95)
            self.assertLess(res["wholeA"], 0.8)
            self.assertAlmostEqual(res["afterReset"]["shareA"], res["wholeA"], places=6)


if __name__ == "__main__":
    unittest.main()
