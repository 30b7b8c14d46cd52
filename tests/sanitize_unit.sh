#!/usr/bin/env bash
# sanitize_unit.sh [SECONDS] - the C unit tests again, built with clang
# against glibc under AddressSanitizer and UndefinedBehaviorSanitizer
# (-fno-sanitize-recover: the first finding fails the test), within SECONDS
# in all (default 480: build and run; what does not fit is skipped and said).
#
# profcap's layers are compiled into build/asan/lib/lib<layer>.a in the
# Makefile's order; each tests/unit/test_*.c links them with the system zlib
# and libelf (zlib1g-dev, libelf-dev) and libdeflate built here from its
# source in deps/src. Third-party libraries built for musl
# (libbpf, libcurl, OpenSSL) cannot be linked into a glibc program: a test
# that needs them is skipped with that reason. Ends with one line
# "asan: N passed, N failed, N skipped"; a skipped step (no clang, no
# libraries) says why and counts as skipped. Needs no network.
set -uo pipefail
cd "$(dirname "$0")/.."

SECS=${1:-480}
OUT=build/asan
CC=${ASAN_CC:-clang}
NANOPB=deps/prefix/nanopb
LAYERS="util proc model collect symbolize formats export capture cli"
CFLAGS="-O1 -g -std=gnu11 -D_GNU_SOURCE -DPB_FIELD_32BIT -DCURL_STATICLIB
	-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
	-ffunction-sections -fdata-sections -Isrc -Ibpf -Ibuild/gen -Ibuild/bpf
	-Ideps/prefix/include -I$NANOPB -idirafter deps/uapi"
start=$(date +%s)
passed=0 failed=0 skipped=0

skip_all() {
	echo "asan: skipped: $*"
	echo "asan: 0 passed, 0 failed, 1 skipped"
	exit 0
}
left() { echo $((SECS - ($(date +%s) - start))); }

command -v "$CC" >/dev/null || skip_all "$CC not found (apt-get install clang)"
[ -f /usr/include/zlib.h ] || skip_all "no zlib.h (apt-get install zlib1g-dev)"
[ -f /usr/include/libelf.h ] || skip_all "no libelf.h (apt-get install libelf-dev)"
[ -f "$NANOPB/pb_decode.c" ] || skip_all "no nanopb runtime in $NANOPB: run ./build.sh"
ls build/gen/*/ >/dev/null 2>&1 || skip_all "no generated code in build/gen: run make"
mkdir -p "$OUT/obj" "$OUT/lib" "$OUT/tests"
# Tests find their fixtures and workloads next to their own binary.
for d in fixtures workloads; do
	[ -d "build/tests/$d" ] && ln -sfn "../../tests/$d" "$OUT/tests/$d"
done

# Compile one source into OUT/obj (only when it changed).
compile() { # SRC
	local src=$1 obj=$OUT/obj/${1//\//_}.o
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$0" -nt "$obj" ] ||
		[ "$NEWEST_H" -nt "$obj" ]; then
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

: >"$OUT/build.log"
for l in $LAYERS; do
	# heap.c is profcap's malloc: ASan brings its own
	srcs=$(find "src/$l" -name '*.c' ! -path src/cli/main.c ! -path src/util/heap.c | sort)
	# shellcheck disable=SC2086
	objs=$(printf '%s\n' $srcs | timeout "$(left)" xargs -P 2 -I{} bash -c 'compile {}') ||
		skip_all "building src/$l failed or ran out of time (see $OUT/build.log)"
	rm -f "$OUT/lib/lib$l.a"
	# shellcheck disable=SC2086
	ar rcs "$OUT/lib/lib$l.a" $objs
done
pbsrcs="$(find build/gen -name '*.pb.c' | sort) $NANOPB/pb_common.c $NANOPB/pb_encode.c $NANOPB/pb_decode.c"
# shellcheck disable=SC2086
pbobjs=$(printf '%s\n' $pbsrcs | timeout "$(left)" xargs -P 2 -I{} bash -c 'compile {}') ||
	skip_all "building the nanopb code failed (see $OUT/build.log)"
rm -f "$OUT/lib/libpb.a"
# shellcheck disable=SC2086
ar rcs "$OUT/lib/libpb.a" $pbobjs
# libdeflate (util/gz.c inflates debug sections with it) from its Debian
# source, as build.sh fetched it, under the same sanitizers.
DEFLATE=deps/src/libdeflate
[ -f "$DEFLATE/libdeflate.h" ] || skip_all "no libdeflate source in $DEFLATE: run ./build.sh"
dsrcs="$(find "$DEFLATE/lib" -maxdepth 1 -name '*.c' | sort) $DEFLATE/lib/x86/cpu_features.c"
# shellcheck disable=SC2086
dobjs=$(printf '%s\n' $dsrcs | timeout "$(left)" xargs -P 2 -I{} bash -c 'compile {}') ||
	skip_all "building libdeflate failed (see $OUT/build.log)"
rm -f "$OUT/lib/libdeflate.a"
# shellcheck disable=SC2086
ar rcs "$OUT/lib/libdeflate.a" $dobjs
libs=""
for l in $(echo $LAYERS | tr ' ' '\n' | tac); do libs="$libs $OUT/lib/lib$l.a"; done

for src in tests/unit/test_*.c; do
	name=$(basename "$src" .c)
	bin=$OUT/tests/$name
	if [ "$(left)" -le 5 ]; then
		echo "  $name: skipped (out of the ${SECS}s budget)"
		skipped=$((skipped + 1))
		continue
	fi
	if [ "$name" = test_heap ]; then
		echo "  $name: skipped (tests profcap's malloc; ASan replaces malloc)"
		skipped=$((skipped + 1))
		continue
	fi
	# shellcheck disable=SC2086
	if ! $CC $CFLAGS -Itests/unit -w -Wl,--gc-sections -o "$bin" "$src" $libs "$OUT/lib/libpb.a" \
		"$OUT/lib/libdeflate.a" -lelf -lz 2>"$OUT/$name.link.log"; then
		why=$(grep -o "undefined reference to \`[a-z_0-9]*'" "$OUT/$name.link.log" | head -n 1)
		echo "  $name: skipped (needs a library built only for musl: ${why:-see $OUT/$name.link.log})"
		skipped=$((skipped + 1))
		continue
	fi
	out=$(ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		timeout "$(left)" "$bin" 2>&1)
	rc=$?
	last=$(grep '^unit:' <<<"$out" | tail -n 1)
	if [ $rc -eq 0 ] && [ -n "$last" ] && ! grep -q ' [1-9][0-9]* failed' <<<"$last"; then
		echo "  $name: ${last#unit: }"
		passed=$((passed + 1))
	elif [ $rc -eq 124 ]; then
		echo "  $name: skipped (out of the ${SECS}s budget while running)"
		skipped=$((skipped + 1))
	else
		echo "  $name: FAILED (exit $rc)"
		grep -E 'ERROR: AddressSanitizer|runtime error|SUMMARY|^FAIL' <<<"$out" | head -n 8 |
			sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
echo "asan: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
