#!/usr/bin/env bash
# tsan_unit.sh [SECONDS] - the unit tests of profcap's threaded modules under
# ThreadSanitizer (clang, glibc), within SECONDS in all (default 300): the
# drain, session and queue (when their tests exist; "not present" is counted
# as a skip), the delivery worker and what runs behind it (exporter, sink,
# spool), the late-stack queue, the unwind tables, and the modules that lock
# or count atomically for other threads (file index, maps pool, process
# snapshots, side-band rings). A data race or lock-order report fails the
# test. Built and run by sanitize_unit.sh --thread; ends with one line
# "tsan: N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

TESTS="test_queue test_drain test_session test_delivery test_exporter test_sink test_spool
	test_late test_unwind_table test_fileidx test_procmaps test_procsnap test_sideband"
# shellcheck disable=SC2086
exec tests/sanitize_unit.sh --thread "${1:-300}" $TESTS
