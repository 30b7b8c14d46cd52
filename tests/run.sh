#!/usr/bin/env bash
# run.sh - the whole test suite: C unit tests, the same under ASan + UBSan
# and (threaded modules) TSan, Python checks, end-to-end captures (root).
# Builds what is missing first (make, tests/glibc_deps.sh), never installs.
# Each step prints its own closing line ("unit: ...", "asan: ...",
# "tsan: ...", "e2e: ..."); the last line adds them up:
# "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

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

# Add up a "<label>: N passed, N failed[, N skipped]" closing line; its
# counts stay in t_p, t_f, t_s.
t_p=0 t_f=0 t_s=0
tally() {
	local line=$1 name=$2 p f s
	p=$(sed -n 's/.*: \([0-9]*\) passed.*/\1/p' <<<"$line")
	f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")
	s=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$line")
	if [ -z "$p" ] || [ -z "$f" ]; then
		t_p=0 t_f=1 t_s=0
		failed=$((failed + 1))
		failed_names+=("$name (no result line)")
		return
	fi
	# A step that ran nothing and said no skip would pass silently.
	if [ "$((p + f + ${s:-0}))" -eq 0 ]; then
		echo "  $name: ran no test: counted as skipped"
		s=1
	fi
	t_p=$p t_f=$f t_s=${s:-0}
	passed=$((passed + t_p))
	failed=$((failed + t_f))
	skipped=$((skipped + t_s))
	[ "$f" -gt 0 ] && failed_names+=("$name")
}

echo "== source layers (includes point down the order in the Makefile)"
out=$("$PY" tests/check_layers.py 2>&1)
echo "$out" | sed 's/^/  /'
tally "$(tail -n 1 <<<"$out")" "layers"

echo "== unit tests"
up=0 uf=0 us=0
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
	up=$((up + t_p)) uf=$((uf + t_f)) us=$((us + t_s))
done
echo "unit: $up passed, $uf failed, $us skipped"

# A sanitizer step: each test binary counts once (passed, failed or
# skipped); its closing line is printed unindented.
sanitized() { # LABEL SCRIPT ARGS...
	local label=$1 out last bad t0=$SECONDS
	shift
	out=$("$@" 2>&1)
	grep -v "^$label: [0-9]" <<<"$out" | sed 's/^/  /'
	echo "  ($label step: $((SECONDS - t0))s)"
	last=$(grep "^$label: [0-9]" <<<"$out" | tail -n 1)
	echo "${last:-$label: no result line}"
	bad=$(sed -n 's/^  \(test_[a-z0-9_]*\): FAILED.*/\1/p' <<<"$out" | paste -sd, -)
	tally "$last" "$label${bad:+ ($bad)}"
}

echo "== unit tests under ASan + UBSan (clang, glibc; time-bounded)"
sanitized asan tests/sanitize_unit.sh "${ASAN_SECONDS:-480}"

echo "== threaded modules under TSan (clang, glibc; time-bounded)"
sanitized tsan tests/tsan_unit.sh "${TSAN_SECONDS:-300}"

echo "== python and end-to-end tests"
out=$("$PY" tests/e2e/runner.py 2>&1)
grep -v '^e2e: [0-9]' <<<"$out" | sed 's/^/  /'
last=$(grep '^e2e: [0-9]' <<<"$out" | tail -n 1)
echo "${last:-e2e: no result line}"
tally "$last" "e2e"

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
