#!/usr/bin/env bash
# kbtf_bench.sh [BASE_REV] [ROUNDS] - the kernel-struct reader (collect/kbtf.c)
# of this tree against the one of git revision BASE_REV (default: the last
# commit before its checkpointed passes, 23a7ded^), on this kernel's BTF:
# CPU time of kbtf__load() per call (scripts/bench/kbtf_bench.c), 5 rounds
# of ROUNDS calls (default 30) each, the two builds interleaved; medians
# and the ratio. Both must find the same members (same checksum). Run
# ./build.sh (or make) first.
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-23a7ded^}
ROUNDS=${2:-30}
OUT=build/bench
mkdir -p "$OUT"
make -s libs
[ -r /sys/kernel/btf/vmlinux ] || {
	echo "kbtf_bench: /sys/kernel/btf/vmlinux is not readable here" >&2
	exit 2
}
git show "$BASE:src/collect/kbtf.c" >"$OUT/kbtf_base.c"
cc() {
	# shellcheck disable=SC2046
	musl-gcc -O2 -g -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -Isrc -Ideps/prefix/include \
		-idirafter deps/uapi -static -Wl,--allow-multiple-definition "$@" $(make -s print-libs)
}
cc -o "$OUT/kbtf_bench_new" scripts/bench/kbtf_bench.c src/collect/kbtf.c
cc -o "$OUT/kbtf_bench_base" scripts/bench/kbtf_bench.c "$OUT/kbtf_base.c"
: >"$OUT/kbtf_new.txt"
: >"$OUT/kbtf_base.txt"
for _ in 1 2 3 4 5; do
	"$OUT/kbtf_bench_base" "$ROUNDS" >>"$OUT/kbtf_base.txt"
	"$OUT/kbtf_bench_new" "$ROUNDS" >>"$OUT/kbtf_new.txt"
done
med() { cut -d' ' -f1 "$1" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
sums() { cut -d' ' -f2 "$1" | sort -u | tr '\n' ' '; }
b=$(med "$OUT/kbtf_base.txt")
n=$(med "$OUT/kbtf_new.txt")
echo "kbtf__load CPU per call, median of $((5 * ROUNDS)): base ($BASE) $b ms, this tree $n ms," \
	"ratio $(awk -v b="$b" -v n="$n" 'BEGIN {printf "%.2f", n / b}')"
echo "member checksums: base $(sums "$OUT/kbtf_base.txt")| this tree $(sums "$OUT/kbtf_new.txt")"
