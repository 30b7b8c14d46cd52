#!/usr/bin/python3
"""Self-test of runner.py: a failed subtest prints a FAIL line with its name
and traceback, an error in a subtest an ERROR line, each counts as a failure,
and the closing line keeps the "e2e: N passed, N failed, N skipped" form
tests/run.sh and .ci/run parse.

Run: /usr/bin/python3 tests/e2e/test_runner.py
"""
import contextlib
import io
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402


def sample_suite():
    """Made here, not at module level, so discovery does not run it."""

    class Sample(unittest.TestCase):
        def test_pass(self):
            pass

        def test_subtests(self):
            for i in range(3):
                with self.subTest(case=i):
                    self.assertNotEqual(i, 1, "case one fails")

        def test_subtest_error(self):
            with self.subTest(case="boom"):
                raise ValueError("subtest raised")

        @unittest.skip("not here")
        def test_skipped(self):
            pass

    return unittest.defaultTestLoader.loadTestsFromTestCase(Sample)


class RunnerTest(unittest.TestCase):
    def run_sample(self):
        result = runner.LineResult()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sample_suite().run(result)
        return result, out.getvalue()

    def test_failed_subtest_printed(self):
        _, out = self.run_sample()
        self.assertRegex(out, r"(?m)^FAIL \S*Sample\.test_subtests \(case=1\)$")
        self.assertIn("AssertionError", out)
        self.assertIn("case one fails", out)
        self.assertRegex(out, r"(?m)^ERROR \S*Sample\.test_subtest_error \(case='boom'\)$")
        self.assertIn("ValueError: subtest raised", out)
        # Passing subtests print nothing of their own.
        self.assertNotIn("case=0", out)
        self.assertNotIn("case=2", out)

    def test_summary_counts(self):
        result, out = self.run_sample()
        self.assertRegex(out, r"(?m)^ok \S*Sample\.test_pass \(")
        self.assertRegex(out, r"(?m)^skip \S*Sample\.test_skipped: not here$")
        line = runner.summary(result)
        self.assertEqual(line, "e2e: 1 passed, 2 failed, 1 skipped")
        # The pattern tests/run.sh's tally() reads.
        self.assertTrue(re.fullmatch(r"e2e: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped", line))


if __name__ == "__main__":
    unittest.main()
