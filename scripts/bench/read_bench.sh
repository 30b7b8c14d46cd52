#!/usr/bin/env bash
# read_bench.sh [ENTRIES...] - time the OTLP reader on large synthetic captures.
#
# For each ENTRIES (default: 200000 1000000) writes a capture of 1,000,000
# samples over 50,000 distinct stacks, spread over ENTRIES distinct
# (process, thread, stack) sample entries, with otlp__encode()
# (scripts/bench/read_bench.c, linked with musl against the archives in build/lib like the
# unit tests), then measures:
#   - otlp_read__file() alone: best wall and CPU time of 5 rounds, peak RSS
#   - `profcap report FILE` (when the binary has that command): wall time and
#     peak RSS from /usr/bin/time
# Targets (issue 5): report < 1 s and < 100 MB on the 1M-sample, 50k-stack
# file. Run ./build.sh (or make) first. Files go to build/bench/.
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT=build/bench
mkdir -p "$OUT"
make -s libs || {
	echo "read_bench: cannot build the archives: run ./build.sh first" >&2
	exit 2
}
entries=("$@")
[ ${#entries[@]} -gt 0 ] || entries=(200000 1000000)

# shellcheck disable=SC2046
musl-gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -DPB_FIELD_32BIT -Isrc \
	-Ibuild/gen -Ideps/prefix/include -Ideps/prefix/nanopb -idirafter deps/uapi -static \
	-o "$OUT/read_bench" scripts/bench/read_bench.c \
	$(make -s print-libs)

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (timings are noisy when busy)"
for n in "${entries[@]}"; do
	f=$OUT/read_${n}.pb
	echo "== 1M samples, 50k stacks, $n sample entries"
	"$OUT/read_bench" gen "$f" 50000 "$n" 1000000
	"$OUT/read_bench" parse "$f" 5
	if build/profcap report --help >/dev/null 2>&1; then
		/usr/bin/time -f "report: %e s wall, %U s user, peak RSS %M KB" \
			build/profcap report "$f" >/dev/null
	fi
done
