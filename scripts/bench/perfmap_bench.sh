#!/usr/bin/env bash
# perfmap_bench.sh [ENTRIES...] - cost of JIT symbolization from perf maps.
#
# 1. For each ENTRIES (default: 200000 1000000) writes a node-like synthetic
#    perf map (scripts/bench/perfmap_bench.c, linked with musl against
#    the archives in build/lib like the unit tests) and measures src/perfmap.c on it: full
#    read (median of 5, each in a fresh child), memory kept and peak RSS,
#    lookup cost, and reading 1000 lines appended to the big map.
# 2. Against perf (root): a jitloop workload gets a 200k-entry perf map plus
#    its own 3 lines. Both tools then symbolize its samples with that map and
#    with the small one: the difference in CPU time (user+sys, median of
#    ROUNDS=3) is what loading the 200k-entry map costs each tool:
#      profcap capture -p PID --seconds 2      (reads the map at first sample)
#      perf script on a `perf record -g -p PID` of the same process
# Run make first. Files go to build/bench/.
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT=build/bench
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
make -s libs || {
	echo "perfmap_bench: cannot build the archives: run ./build.sh first" >&2
	exit 2
}
entries=("$@")
[ ${#entries[@]} -gt 0 ] || entries=(200000 1000000)

musl-gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -idirafter deps/uapi \
	-static -o "$OUT/perfmap_bench" scripts/bench/perfmap_bench.c $(make -s print-libs)

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (timings are noisy when busy)"
for n in "${entries[@]}"; do
	f=$OUT/perfmap_$n.map
	"$OUT/perfmap_bench" gen "$f" "$n" 100000000000
	echo "== $n entries, $(($(stat -c %s "$f") / 1024 / 1024)) MiB"
	"$OUT/perfmap_bench" parse "$f" 5
done

if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null; then
	echo "skipping the comparison with perf: needs root and perf"
	exit 0
fi

# ---- against perf -------------------------------------------------------------
big=$OUT/perfmap_peer.map
"$OUT/perfmap_bench" gen "$big" 200000 100000000000
coproc JIT { exec build/tests/workloads/jitloop -d 120; }
read -r ready jpid page <&"${JIT[0]}"
[ "$ready" = ready ] || {
	echo "jitloop did not start" >&2
	exit 1
}
map=/tmp/perf-$jpid.map
small=$OUT/perfmap_small.map
cp "$map" "$small"
cleanup() {
	kill "$jpid" 2>/dev/null || true
	rm -f "$map"
}
trap cleanup EXIT
echo "== against perf: jitloop pid $jpid (code page $page), 200000 + 3 map entries"

# CPU seconds (user+sys) of a command, from /usr/bin/time; its peak RSS
# (KB) is left in $OUT/perfmap.rss.
cpu_of() {
	/usr/bin/time -o "$OUT/perfmap.time" -f "%U %S %M" "$@" >/dev/null 2>&1
	awk '{ print $3 }' "$OUT/perfmap.time" >"$OUT/perfmap.rss"
	awk '{ printf "%.3f", $1 + $2 }' "$OUT/perfmap.time"
}
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

perf record -q -F 999 -g -p "$jpid" -o "$OUT/perfmap.perf.data" -- sleep 2 2>/dev/null
declare -A cpu
for kind in small big; do
	if [ $kind = big ]; then cat "$big" "$small" >"$map"; else cp "$small" "$map"; fi
	p=() s=()
	for ((i = 0; i < ROUNDS; i++)); do
		p+=("$(cpu_of build/profcap capture -q -p "$jpid" --seconds 2 -o "$OUT/perfmap.pb")")
		prss=$(cat "$OUT/perfmap.rss")
		s+=("$(cpu_of perf script -i "$OUT/perfmap.perf.data")")
		srss=$(cat "$OUT/perfmap.rss")
	done
	cpu[profcap_$kind]=$(echo "${p[*]}" | median)
	cpu[perf_$kind]=$(echo "${s[*]}" | median)
	echo "$kind map: profcap capture ${cpu[profcap_$kind]} s CPU (${p[*]}), peak RSS $((prss / 1024)) MB;" \
		"perf script ${cpu[perf_$kind]} s CPU (${s[*]}), peak RSS $((srss / 1024)) MB"
done
# The names are really there, in both tools.
perf script -i "$OUT/perfmap.perf.data" >"$OUT/perfmap.script" 2>/dev/null
build/profcap report "$OUT/perfmap.pb" --top 3 >"$OUT/perfmap.report"
# jitloop's map names its page "stale_blob" first, then jit_hot/jit_cold
# inside it: the later lines are the right names.
echo "leaf names: perf script jit_hot $(grep -c jit_hot "$OUT/perfmap.script" || true)," \
	"stale_blob $(grep -c stale_blob "$OUT/perfmap.script" || true) frames;" \
	"profcap report: jit_hot $(grep -c jit_hot "$OUT/perfmap.report" || true)," \
	"stale_blob $(grep -c stale_blob "$OUT/perfmap.report" || true) rows"
awk -v a="${cpu[profcap_big]}" -v b="${cpu[profcap_small]}" -v c="${cpu[perf_big]}" \
	-v d="${cpu[perf_small]}" 'BEGIN {
	pc = a - b; ps = c - d
	printf "cost of the 200k-entry map: profcap %.0f ms CPU, perf script %.0f ms CPU", pc * 1000, ps * 1000
	if (pc > 0) printf " (perf / profcap = %.1fx)", ps / pc
	printf "\n" }'
