#!/usr/bin/python3
"""Every relative link in README.md and docs/*.md points at a file or folder
of the repository, and every #anchor at a heading of its target as GitHub
names it (lowercase, punctuation dropped, spaces as hyphens, "-1" for a
repeated heading). Web links are not followed. No root needed.

Run: /usr/bin/python3 tests/e2e/test_doc_links.py
"""
import glob
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) and ![alt](target); the target ends at a space or ")".
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def doc_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
        out.update(HTML_ANCHOR.findall(line))
    return out


def links(path):
    """(line number, target) of every link outside code."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            yield n, m.group(1)


def broken(path, target, cache):
    """Why @target, linked from @path, does not resolve, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
        return None  # http:, https:, mailto:
    file_part, _, anchor = target.partition("#")
    dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
    if not os.path.exists(dest):
        return f"no such file or folder {os.path.relpath(dest, ROOT)}"
    if not os.path.realpath(dest).startswith(os.path.realpath(ROOT) + os.sep):
        return "points outside the repository"
    if anchor:
        if not dest.endswith(".md") or os.path.isdir(dest):
            return f"anchor #{anchor} into a file that is not Markdown"
        if dest not in cache:
            cache[dest] = anchors(dest)
        if anchor not in cache[dest]:
            return f"no heading #{anchor} in {os.path.relpath(dest, ROOT)}"
    return None


class SlugTest(unittest.TestCase):
    def test_github_rules(self):
        self.assertEqual(slug("Switches for tests and benchmarks"),
                         "switches-for-tests-and-benchmarks")
        self.assertEqual(slug("`report` in detail"), "report-in-detail")
        self.assertEqual(slug("Merging with native frames (`v8frames__merge`)"),
                         "merging-with-native-frames-v8frames__merge")
        self.assertEqual(slug("OpenTelemetry thread context (OTEP 4947)"),
                         "opentelemetry-thread-context-otep-4947")
        self.assertEqual(slug("Export to an OTLP endpoint"), "export-to-an-otlp-endpoint")

    def test_broken_links_are_found(self):
        import tempfile
        with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "build")
                                         if os.path.isdir(os.path.join(ROOT, "build"))
                                         else None) as tmp:
            a, b = os.path.join(tmp, "a.md"), os.path.join(tmp, "b.md")
            with open(b, "w") as f:
                f.write("# Top\n\n## Same\n\n## Same\n\n```\n## Not a heading\n```\n")
            with open(a, "w") as f:
                f.write("[ok](b.md#same-1) [gone](c.md) [bad](b.md#not-a-heading) "
                        "`[code](nowhere.md)` [self](#top-of-a) [web](https://x.invalid/)\n"
                        "# Top of a\n")
            got = {t: broken(a, t, {}) for _, t in links(a)}
            self.assertEqual(sorted(got), sorted(["b.md#same-1", "c.md", "b.md#not-a-heading",
                                                  "#top-of-a", "https://x.invalid/"]))
            self.assertIsNone(got["b.md#same-1"])
            self.assertIsNone(got["#top-of-a"])
            self.assertIsNone(got["https://x.invalid/"])
            self.assertIn("no such file", got["c.md"])
            self.assertIn("no heading", got["b.md#not-a-heading"])


class DocLinksTest(unittest.TestCase):
    def test_relative_links_resolve(self):
        cache, bad, count = {}, [], 0
        for path in doc_files():
            for n, target in links(path):
                count += 1
                why = broken(path, target, cache)
                if why:
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n}: ({target}) {why}")
        self.assertGreater(count, 20, "no links found: is the parser broken?")
        self.assertEqual(bad, [], "\n".join(bad))


if __name__ == "__main__":
    unittest.main()
