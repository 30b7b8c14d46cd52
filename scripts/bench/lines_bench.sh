#!/usr/bin/env bash
# lines_bench.sh [BINARY] [N] - symbolize N (default 100000) distinct random
# addresses of the .text of a large -g binary (default: build/profcap.debug
# the unstripped binary: 2.6 MB of code, 6.9 MB of .debug_info) with lines and inlined frames:
#   ours:      scripts/bench/lines_bench.c (elfsym + dwarf modules), whole run
#   addr2line: binutils `addr2line -fi -a -e BINARY` on the same addresses
#   perf:      perf symbolizes only the addresses of a perf.data, so with
#              PERF=1 (root) a second comparison: `perf record -F 20000` of
#              build/tests/test_otlp (a -g binary), then `perf script -F
#              ip,srcline` on it against ours on its distinct sample
#              addresses (one round: perf takes minutes).
# Interleaved rounds (ROUNDS=5), wall time and peak RSS by /usr/bin/time,
# medians. Also checks that both name the same innermost function and line
# for the addresses (a sample of 2000).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=build/bench
ROUNDS=${ROUNDS:-5}
BIN=${1:-build/profcap.debug}
N=${2:-100000}
mkdir -p "$OUT"
make -s libs
musl-gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -idirafter deps/uapi \
	-static -o "$OUT/lines_bench" scripts/bench/lines_bench.c $(make -s print-libs)
python3 - "$BIN" "$N" > "$OUT/lines_addrs.txt" <<'PY'
import random, subprocess, sys
out = subprocess.check_output(["readelf", "-SW", sys.argv[1]], text=True)
for l in out.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        start, size = int(f[3], 16), int(f[5], 16)
random.seed(1)
for a in random.sample(range(start, start + size), int(sys.argv[2])):
    print("%x" % a)
PY
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: > "$OUT/lines_ours.t"; : > "$OUT/lines_a2l.t"
for r in $(seq "$ROUNDS"); do
	/usr/bin/time -f "%e %M" -o "$OUT/t" "$OUT/lines_bench" "$BIN" "$OUT/lines_addrs.txt" --print > "$OUT/lines_ours.out" 2>/dev/null
	cat "$OUT/t" >> "$OUT/lines_ours.t"
	/usr/bin/time -f "%e %M" -o "$OUT/t" addr2line -fi -a -e "$BIN" < "$OUT/lines_addrs.txt" > "$OUT/lines_a2l.out"
	cat "$OUT/t" >> "$OUT/lines_a2l.t"
done
for t in ours a2l; do
	echo "$t: wall $(cut -d' ' -f1 "$OUT/lines_$t.t" | median) s (rounds: $(cut -d' ' -f1 "$OUT/lines_$t.t" | tr '\n' ' '))," \
		"peak RSS $(cut -d' ' -f2 "$OUT/lines_$t.t" | median) KB"
done
python3 - "$OUT/lines_ours.out" "$OUT/lines_a2l.out" <<'PY'
import re, sys
def parse(path):
    res, cur = {}, None
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        if l.startswith("0x"):
            cur = int(l, 16); res[cur] = []; i += 1; continue
        if cur is not None and i + 1 < len(lines):
            fl = re.sub(r" \(discriminator \d+\)", "", lines[i + 1])
            res[cur].append((l, fl)); i += 2; continue
        i += 1
    return res
a, b = parse(sys.argv[1]), parse(sys.argv[2])
keys = [k for k in sorted(a)[:: max(1, len(a) // 2000)]
        if b.get(k) and not b[k][0][1].endswith(":?") and not b[k][0][1].startswith("??")]
same_fn = same_line = depth = 0
for k in keys:
    x, y = a.get(k, []), b[k]
    if x:
        # profcap and perf name clones by their symbol (f.cold, f.isra.0)
        same_fn += x[0][0].split(".")[0] == y[0][0]
        same_line += x[0][1] == y[0][1]
        depth += len(x) == len(y)
print("agreement with addr2line on the %d of 2000 sampled addresses it gives a line for: "
      "innermost function %.1f%%, file:line %.1f%%, inline depth %.1f%%"
      % (len(keys), 100.0 * same_fn / len(keys), 100.0 * same_line / len(keys), 100.0 * depth / len(keys)))
PY
if [ "${PERF:-0}" = 1 ]; then
	perf record -q -F 20000 -e cpu-clock -o "$OUT/lines_perf.data" -- build/tests/test_otlp \
		>/dev/null 2>&1
	perf script -i "$OUT/lines_perf.data" -F ip 2>/dev/null | awk '{print $1}' | sort -u \
		>"$OUT/lines_perf_addrs.txt"
	echo "perf.data: $(perf script -i "$OUT/lines_perf.data" -F ip 2>/dev/null | wc -l) samples," \
		"$(wc -l <"$OUT/lines_perf_addrs.txt") distinct addresses"
	/usr/bin/time -f "%e %M" -o "$OUT/t" perf script -i "$OUT/lines_perf.data" -F ip,srcline \
		>/dev/null 2>&1
	echo "perf script -F ip,srcline: $(cut -d' ' -f1 "$OUT/t") s, peak RSS $(cut -d' ' -f2 "$OUT/t") KB"
	/usr/bin/time -f "%e %M" -o "$OUT/t" "$OUT/lines_bench" build/tests/test_otlp \
		"$OUT/lines_perf_addrs.txt" --print >/dev/null 2>&1
	echo "ours on its distinct addresses: $(cut -d' ' -f1 "$OUT/t") s, peak RSS $(cut -d' ' -f2 "$OUT/t") KB"
fi
