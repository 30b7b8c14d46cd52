#!/usr/bin/env bash
# pfile_bench.sh [BASE_TREE] - the hardened opener (proc/pfile.h) against the
# old open + mmap, on up to 400 libraries and programs of the host mapped
# into the bench (scripts/bench/pfile_bench.c). BASE_TREE (default /work/main) is a built
# tree from before proc/pfile.c; its archives give the "old" binary, this
# tree's the new one. Runs them interleaved 3 times; root, for map_files.
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-/work/main}
OUT=build/bench
mkdir -p "$OUT"
make -s libs
cc() {
	# shellcheck disable=SC2068
	musl-gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -Ideps/prefix/include \
		-idirafter deps/uapi -static "$@"
}
libs() { (cd "$1" && make -s print-libs) | tr ' ' '\n' | sed "s|^|$1/|" | tr '\n' ' '; }
# shellcheck disable=SC2046
cc -DPFILE -o "$OUT/pfile_bench_new" scripts/bench/pfile_bench.c $(libs "$PWD")
# shellcheck disable=SC2046
cc -I"$BASE/src" -o "$OUT/pfile_bench_old" scripts/bench/pfile_bench.c $(libs "$BASE")
# The files: the libraries and programs of the host (ELF or not, as found).
find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*.so*' -type f | sort | head -300 >"$OUT/pfile_list"
find /usr/bin -maxdepth 1 -type f -size +200k | sort | head -100 >>"$OUT/pfile_list"
for _ in 1 2 3; do
	"$OUT/pfile_bench_old" "$OUT/pfile_list"
	"$OUT/pfile_bench_new" "$OUT/pfile_list"
done
