#!/usr/bin/env bash
# sanitize_unit.sh [--thread] [SECONDS] [TEST...] - the C unit tests again,
# built with clang against glibc under sanitizers, within SECONDS in all
# (build and run; default 480; what does not fit is skipped and said).
#
#   (default)  AddressSanitizer + UndefinedBehaviorSanitizer, every
#              tests/unit/test_*.c; objects in build/asan, test binaries
#              in build/asan-tests, label "asan"
#   --thread   ThreadSanitizer (tests/tsan_unit.sh names the tests of the
#              threaded modules); build/tsan, build/tsan-tests, "tsan"
# TEST... limits the run to those tests (test_NAME); one that has no
# tests/unit/test_NAME.c is counted as skipped ("not present").
# The first finding of a sanitizer fails the test (-fno-sanitize-recover,
# halt_on_error).
#
# profcap's layers are compiled into OUT/lib/lib<layer>.a in the Makefile's
# order, with the nanopb code and libdeflate (from deps/src) under the same
# sanitizer. The other third-party libraries come from tests/glibc_deps.sh
# (libbpf, libelf, libdw, the demanglers and libcurl built again for glibc,
# not instrumented) and the system (OpenSSL, nghttp2, liblzma, zlib). Ends
# with one line "<label>: N passed, N failed, N skipped"; a step that cannot
# run at all (no clang, no deps) says why and counts as one skip. Needs no
# network.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

MODE=address
if [ "${1:-}" = --thread ]; then
	MODE=thread
	shift
fi
SECS=${1:-480}
[ $# -gt 0 ] && shift
ONLY=("$@")
CC=${SAN_CC:-clang}
NANOPB=deps/prefix/nanopb
GLIBC=build/glibc
LAYERS="util proc model collect symbolize formats export capture cli"
# Not built here: main() (each test has its own) and profcap's allocator
# (the sanitizers bring their own malloc).
SKIP_SRCS="src/cli/main.c src/util/heap.c"
if [ "$MODE" = thread ]; then
	LABEL=tsan OUT=build/tsan
	SAN="-fsanitize=thread"
	export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 exitcode=66"
else
	LABEL=asan OUT=build/asan
	SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
	export UBSAN_OPTIONS="print_stacktrace=1"
fi
passed=0 failed=0 skipped=0

skip_all() {
	echo "$LABEL: skipped: $*"
	echo "$LABEL: 0 passed, 0 failed, 1 skipped"
	exit 0
}
fail_all() {
	echo "$LABEL: FAILED: $*"
	echo "$LABEL: 0 passed, 1 failed, 0 skipped"
	exit 1
}
# built WHAT: after an archive step, out of time is a skip, an error fails.
built() {
	local rc=$?
	[ $rc -eq 0 ] && return 0
	[ $rc -eq 124 ] && skip_all "building $1 ran out of the ${SECS}s budget"
	grep -E -m 8 'error' "$OUT/build.log" | sed 's/^/    /'
	fail_all "building $1 failed (see $OUT/build.log)"
}

command -v "$CC" >/dev/null || skip_all "$CC not found (apt-get install clang)"
[ -f "$NANOPB/pb_decode.c" ] || skip_all "no nanopb runtime in $NANOPB: run ./build.sh"
ls build/gen/*/ >/dev/null 2>&1 || skip_all "no generated code in build/gen: run make"
DEFLATE=deps/src/libdeflate
[ -f "$DEFLATE/libdeflate.h" ] || skip_all "no libdeflate source in $DEFLATE: run ./build.sh"
# The glibc copies of the libraries: built once, then only checked (stamps).
deps=$(tests/glibc_deps.sh 2>&1)
case $? in
0) echo "  ${deps##*$'\n'}" ;;
2) skip_all "${deps##*glibc deps: unavailable: }" ;;
*)
	echo "$deps" | sed 's/^/  /'
	echo "$LABEL: 0 passed, 1 failed, 0 skipped"
	exit 1
	;;
esac
start=$(date +%s)
left() { echo $((SECS - ($(date +%s) - start))); }

CFLAGS="-O1 -g -std=gnu11 -D_GNU_SOURCE -DPB_FIELD_32BIT -DCURL_STATICLIB $SAN
	-fno-omit-frame-pointer -ffunction-sections -fdata-sections -Isrc -Ibpf -Ibuild/gen
	-Ibuild/bpf -I$GLIBC/include -I$DEFLATE -I$NANOPB -idirafter deps/uapi"
# Third-party libraries after profcap's, each before what it uses.
DEP_LIBS="$GLIBC/lib/libbpf.a $GLIBC/lib/libdw.a $GLIBC/lib/libelf.a $GLIBC/lib/libdemangle.a
	$GLIBC/lib/libcurl.a -lnghttp2 -lssl -lcrypto -llzma -lz -lpthread"

# Other flags or another compiler: compile everything again.
mkdir -p "$OUT"
if [ "$(cat "$OUT/flags" 2>/dev/null)" != "$CC $CFLAGS" ]; then
	rm -rf "${OUT:?}/obj" "${OUT:?}/lib"
	echo "$CC $CFLAGS" >"$OUT/flags"
fi
# Test binaries two levels down, as build/tests: a test finds its fixtures
# and workloads next to itself and the sources at ../../tests.
BINS=build/$LABEL-tests
mkdir -p "$OUT/obj" "$OUT/lib" "$BINS"
for d in fixtures workloads; do
	[ -d "build/tests/$d" ] && ln -sfn "../tests/$d" "$BINS/$d"
done

# Compile one source into OUT/obj (only when it or a header changed).
compile() { # SRC
	local src=$1 obj=$OUT/obj/${1//\//_}.o
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$NEWEST_H" -nt "$obj" ]; then
		# shellcheck disable=SC2086
		$CC $CFLAGS -w -c "$src" -o "$obj" 2>>"$OUT/build.log" || return 1
	fi
	echo "$obj"
}
# Any header change rebuilds everything (no dependency files here).
NEWEST_H=$(find src bpf build/gen build/bpf tests/unit -name '*.h' -printf '%T@ %p\n' 2>/dev/null |
	sort -n | tail -n 1 | cut -d' ' -f2-)
export -f compile
export CC CFLAGS OUT NEWEST_H

# archive NAME SRC...: compile SRCs two at a time into OUT/lib/libNAME.a.
archive() {
	local name=$1 objs
	shift
	[ "$(left)" -gt 0 ] || return 124
	objs=$(printf '%s\n' "$@" | timeout "$(left)" xargs -P 2 -I{} bash -c 'compile {}') ||
		return $?
	rm -f "$OUT/lib/lib$name.a"
	# shellcheck disable=SC2086
	ar rcs "$OUT/lib/lib$name.a" $objs
}

: >"$OUT/build.log"
for l in $LAYERS; do
	# shellcheck disable=SC2046
	archive "$l" $(find "src/$l" -name '*.c' | sort | grep -vxF -f <(tr ' ' '\n' <<<"$SKIP_SRCS"))
	built "src/$l"
done
# shellcheck disable=SC2046
archive pb $(find build/gen -name '*.pb.c' | sort) "$NANOPB/pb_common.c" "$NANOPB/pb_encode.c" \
	"$NANOPB/pb_decode.c"
built "the nanopb code"
# libdeflate (util/gz.c inflates debug sections with it), as build.sh fetched it.
# shellcheck disable=SC2046
archive deflate $(find "$DEFLATE/lib" -maxdepth 1 -name '*.c' | sort) \
	"$DEFLATE/lib/x86/cpu_features.c"
built libdeflate
libs=""
for l in $(tr ' ' '\n' <<<"$LAYERS" | tac); do libs="$libs $OUT/lib/lib$l.a"; done
libs="$libs $OUT/lib/libpb.a $OUT/lib/libdeflate.a"

# run_one NAME: link tests/unit/NAME.c and run it; print its line, count it.
run_one() {
	local name=$1 src=tests/unit/$1.c bin=$BINS/$1 out rc last why
	if [ ! -f "$src" ]; then
		echo "  $name: skipped (not present)"
		skipped=$((skipped + 1))
		return
	fi
	if [ "$(left)" -le 5 ]; then
		echo "  $name: skipped (out of the ${SECS}s budget)"
		skipped=$((skipped + 1))
		return
	fi
	if [ "$name" = test_heap ]; then
		echo "  $name: skipped (tests profcap's malloc; the sanitizer replaces malloc)"
		skipped=$((skipped + 1))
		return
	fi
	# shellcheck disable=SC2086
	if ! $CC $CFLAGS -Itests/unit -w -Wl,--gc-sections -o "$bin" "$src" $libs $DEP_LIBS \
		2>"$OUT/$name.link.log"; then
		why=$(grep -m 1 -o "undefined reference to \`[a-zA-Z_0-9]*'" "$OUT/$name.link.log")
		echo "  $name: FAILED (does not build: ${why:-see $OUT/$name.link.log})"
		failed=$((failed + 1))
		return
	fi
	out=$(timeout "$(left)" "$bin" 2>&1)
	rc=$?
	last=$(grep '^unit:' <<<"$out" | tail -n 1)
	if [ $rc -eq 0 ] && grep -q '^unit: 0 passed, 0 failed\(, 0 skipped\)\?$' <<<"$last"; then
		echo "  $name: skipped (ran no test: $(grep -m 1 '^skip' <<<"$out"))"
		skipped=$((skipped + 1))
	elif [ $rc -eq 0 ] && [ -n "$last" ] && ! grep -q ' [1-9][0-9]* failed' <<<"$last"; then
		echo "  $name: ${last#unit: }"
		passed=$((passed + 1))
		# A test's own skips show as they do in the plain run.
		grep '^skip ' <<<"$out" | sed 's/^/    /'
	elif [ $rc -eq 124 ]; then
		echo "  $name: skipped (out of the ${SECS}s budget while running)"
		skipped=$((skipped + 1))
	else
		echo "  $name: FAILED (exit $rc)"
		# The first report (its stacks) and the tests that failed.
		{
			grep -E -A 12 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error' <<<"$out" |
				head -n 24
			grep -E '^FAIL|SUMMARY' <<<"$out" | head -n 4
		} | awk '!seen[$0]++' | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

if [ ${#ONLY[@]} -gt 0 ]; then
	for name in "${ONLY[@]}"; do run_one "$name"; done
else
	for src in tests/unit/test_*.c; do run_one "$(basename "$src" .c)"; done
fi
echo "$LABEL: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
