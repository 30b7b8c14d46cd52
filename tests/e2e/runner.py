#!/usr/bin/python3
"""runner.py - run every tests/e2e/test_*.py with unittest and print one line
per test plus a closing "e2e: N passed, N failed, N skipped" line.

Skips carry their reason; failures, failed subtests included, print their
traceback. Every test lands in one of the three counts (an expected failure
is a skip, an unexpected success a failure, each failed subtest a failure)."""
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class LineResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.passed = 0
        self._t0 = 0.0

    def startTest(self, test):
        super().startTest(test)
        self._t0 = time.monotonic()

    def _name(self, test):
        return test.id().split(".", 1)[-1]

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1
        print(f"ok {self._name(test)} ({time.monotonic() - self._t0:.1f}s)", flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        print(f"FAIL {self._name(test)}\n{self._exc_info_to_string(err, test)}", flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        print(f"ERROR {self._name(test)}\n{self._exc_info_to_string(err, test)}", flush=True)

    # A failed subtest lands in failures or errors like a test; its parent
    # then reports no outcome of its own, so the subtest prints its line.
    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is None:
            return
        word = "FAIL" if issubclass(err[0], test.failureException) else "ERROR"
        print(f"{word} {self._name(subtest)}\n{self._exc_info_to_string(err, test)}",
              flush=True)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print(f"skip {self._name(test)}: {reason}", flush=True)

    # An expected failure checks nothing that passes: counted as a skip; an
    # unexpected success is a failure (the mark is stale).
    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.skipped.append((test, "expected failure"))
        print(f"skip {self._name(test)}: expected failure", flush=True)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        print(f"FAIL {self._name(test)}: passed, but is marked expectedFailure", flush=True)


def failed_count(result):
    return len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)


def summary(result):
    """The closing line tests/run.sh and .ci/run parse."""
    return (f"e2e: {result.passed} passed, {failed_count(result)} failed, "
            f"{len(result.skipped)} skipped")


def main():
    sys.path.insert(0, HERE)
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
    suite = unittest.defaultTestLoader.discover(HERE, pattern=pattern, top_level_dir=HERE)
    result = LineResult()
    suite.run(result)
    print(summary(result))
    return 1 if failed_count(result) else 0


if __name__ == "__main__":
    sys.exit(main())
