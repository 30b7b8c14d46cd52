#!/usr/bin/env bash
# run.sh - the whole test suite: C unit tests, Python checks, end-to-end
# captures (root). Builds what is missing first (make), never installs.
# Ends with one line: "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3
passed=0 failed=0 skipped=0
failed_names=()

if [ ! -f deps/stamps/all.done ] && [ ! -f deps/prefix/lib/libbpf.a ]; then
	echo "tests/run.sh: dependencies are not built; run ./build.sh first" >&2
	exit 2
fi
# The build log stays in build/ (no litter in /tmp).
mkdir -p build
if ! make -s -j"$(nproc)" all >build/make.log 2>&1; then
	cat build/make.log >&2
	echo "tests/run.sh: build failed (see above)" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

# Add up a "<label>: N passed, N failed[, N skipped]" closing line.
tally() {
	local line=$1 name=$2 p f s
	p=$(sed -n 's/.*: \([0-9]*\) passed.*/\1/p' <<<"$line")
	f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")
	s=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$line")
	if [ -z "$p" ] || [ -z "$f" ]; then
		failed=$((failed + 1))
		failed_names+=("$name (no result line)")
		return
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + ${s:-0}))
	[ "$f" -gt 0 ] && failed_names+=("$name")
}

echo "== source layers (includes point down the order in the Makefile)"
out=$("$PY" tests/check_layers.py 2>&1)
echo "$out" | sed 's/^/  /'
tally "$(tail -n 1 <<<"$out")" "layers"

echo "== unit tests"
for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	out=$("$t" 2>&1)
	rc=$?
	grep -v '^ok ' <<<"$out" | grep -v '^unit:' | sed 's/^/  /'
	last=$(grep '^unit:' <<<"$out" | tail -n 1)
	echo "  $(basename "$t"): ${last#unit: }"
	if [ $rc -ne 0 ] && [ -n "$last" ] && ! grep -q ' [1-9][0-9]* failed' <<<"$last"; then
		last="unit: 0 passed, 1 failed"   # crashed after printing a clean line
	fi
	tally "${last:-}" "$(basename "$t")"
done

echo "== unit tests under ASan + UBSan (clang, glibc; time-bounded)"
out=$(tests/sanitize_unit.sh "${ASAN_SECONDS:-480}" 2>&1)
echo "$out" | sed 's/^/  /'
# One tallied step: passed when every test that could be built ran clean.
last=$(grep '^asan:' <<<"$out" | tail -n 1)
if grep -q ' [1-9][0-9]* failed' <<<"$last"; then
	tally "asan: 0 passed, 1 failed" "asan"
elif grep -q ': [1-9][0-9]* passed' <<<"$last"; then
	tally "asan: 1 passed, 0 failed" "asan"
else
	tally "asan: 0 passed, 0 failed, 1 skipped" "asan"
fi

echo "== python and end-to-end tests"
out=$("$PY" tests/e2e/runner.py 2>&1)
echo "$out" | sed 's/^/  /'
tally "$(grep '^e2e:' <<<"$out" | tail -n 1)" "e2e"

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
