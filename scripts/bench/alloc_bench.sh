#!/usr/bin/env bash
# alloc_bench.sh - the build switches ALLOC, SORT and HUGE_PAGES (see the
# Makefile's header) compared on profcap's own benchmarks.
#
# Builds build/profcap once per variant (make profcap VARS...: only
# libutil.a, the objects a switch changes and the link are redone), keeps a
# copy of each binary, puts build/ back to the switches it had, then runs
# every variant interleaved round by round in
#   capture_bench.py  1 s all-CPU capture: wall, CPU, peak RSS, BPF maps
#   churn_bench.py    a capture of a gcc compile loop (workload cc, 5 s):
#                     record CPU, peak RSS, complete stacks
# and prints medians, and ratios against the first variant (paired round by
# round: the median of the per-round ratios). Everything, with the command
# that made it, also goes to scripts/bench/results/alloc-<UTC time>.txt.
#
# Usage (root): scripts/bench/alloc_bench.sh [--runs 7] [--churn-runs 5]
#               [--churn-seconds 5] [--load] [--variants LIST] [--out FILE]
#   --runs N           capture_bench.py rounds
#   --churn-runs N     churn_bench.py rounds (0: skip it)
#   --churn-seconds S  length of each compile-loop capture
#   --load             capture_bench.py --load (both CPUs busy meanwhile)
#   --variants LIST    NAME:VAR=V,VAR=V entries separated by ';', the first
#                      the baseline; an entry without variables is the
#                      Makefile's defaults. Default:
#   default:;mimalloc:ALLOC=mimalloc;libc:ALLOC=libc;sort-libc:SORT=libc;huge-on:HUGE_PAGES=on
#   --out FILE         the result file (default: under scripts/bench/results/)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH=$ROOT/scripts/bench
PY=/usr/bin/python3
CMD="$0 $*"
runs=7 churn_runs=5 churn_secs=5 load=() out=""
variants="default:;mimalloc:ALLOC=mimalloc;libc:ALLOC=libc;sort-libc:SORT=libc;huge-on:HUGE_PAGES=on"

die() { printf 'alloc_bench.sh: %s\n' "$*" >&2; exit 1; }
while (($#)); do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--churn-runs) churn_runs=$2; shift 2 ;;
	--churn-seconds) churn_secs=$2; shift 2 ;;
	--load) load=(--load); shift ;;
	--variants) variants=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
((EUID == 0)) || die "run as root (the benchmarks load BPF)"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
[[ -n $out ]] || out=$BENCH/results/alloc-$stamp.txt
mkdir -p "$(dirname "$out")"
work=$(mktemp -d /tmp/alloc_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The switches build/ had, to put back afterwards (the Makefile's defaults
# when it has none).
cd "$ROOT"
before=$(cat build/config 2>/dev/null || true)
restore() {
	echo "# rebuilding build/profcap with ${before:-the default switches}" >&2
	# shellcheck disable=SC2086
	env -u ALLOC -u SORT -u HUGE_PAGES make -s -j"$(nproc)" profcap $before >&2
}

names=()
IFS=';' read -ra specs <<<"$variants"
for spec in "${specs[@]}"; do
	name=${spec%%:*}
	vars=${spec#*:}
	[[ -n $name && $spec == *:* ]] || die "--variants: '$spec' is not NAME:VAR=V,..."
	IFS=',' read -ra args <<<"$vars"
	echo "# building $name: make profcap ${args[*]}" >&2
	if ! env -u ALLOC -u SORT -u HUGE_PAGES make -s -j"$(nproc)" profcap "${args[@]}" >&2; then
		restore
		die "building variant $name failed"
	fi
	cp build/profcap "$work/profcap-$name"
	printf '%s\t%s\t%s\n' "$name" "$(cat build/config)" "$(stat -c %s build/profcap)" \
		>>"$work/variants.tsv"
	names+=("$name")
done
restore

base=${names[0]}
cap_args=(--runs "$runs" --tools profcap --profcap "$work/profcap-$base" --json "$work/capture.json")
churn_args=(--runs "$churn_runs" --seconds "$churn_secs" --workloads cc --configs profcap
	--profcap "$work/profcap-$base" --json "$work/churn.json")
for n in "${names[@]:1}"; do
	cap_args+=(--bin "$n=$work/profcap-$n")
	churn_args+=(--bin "$n=$work/profcap-$n")
done

{
	echo "# $CMD"
	echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(git -C "$ROOT" describe --always --dirty);" \
		"Linux $(uname -r); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# variants (name, switches, stripped binary bytes):"
	sed 's/^/#   /' "$work/variants.tsv"
	echo
	echo "## capture_bench.py ${cap_args[*]}"
} | tee "$out"
"$PY" "$BENCH/capture_bench.py" "${cap_args[@]}" "${load[@]}" 2>&1 | tee -a "$out"
if ((churn_runs > 0)); then
	printf '\n## churn_bench.py %s\n' "${churn_args[*]}" | tee -a "$out"
	"$PY" "$BENCH/churn_bench.py" "${churn_args[@]}" 2>&1 | tee -a "$out"
fi

# Medians and paired ratios against the baseline, one row per variant.
echo | tee -a "$out"
"$PY" - "$work/variants.tsv" "$work/capture.json" "$work/churn.json" <<'EOF' | tee -a "$out"
import json, os, statistics, sys

names = [l.split("\t")[0] for l in open(sys.argv[1]) if l.strip()]
cap = json.load(open(sys.argv[2]))["results"]
churn = json.load(open(sys.argv[3]))["results"] if os.path.exists(sys.argv[3]) else {}
cap_key = lambda n, i: "profcap" if i == 0 else "profcap " + n
churn_key = lambda n, i: "cc profcap" if i == 0 else "cc profcap-" + n


def paired(rows, base, f):
    """Median over rounds of row/base for field f (rounds are interleaved)."""
    rs = [f(r) / f(b) for r, b in zip(rows, base) if f(b) > 0]
    return statistics.median(rs) if rs else float("nan")


med = lambda rows, f: statistics.median(f(r) for r in rows)
print("summary: medians; (x) = paired ratio to the baseline, " + names[0])
print(f"{'variant':12} {'1s wall':>15} {'1s CPU':>15} {'1s peak RSS':>17}"
      + (f" {'cc CPU':>15} {'cc peak RSS':>17} {'cc complete':>11}" if churn else ""))
for i, n in enumerate(names):
    c, cb = cap[cap_key(n, i)], cap[cap_key(names[0], 0)]
    line = (f"{n:12} {med(c, lambda r: r[0]):6.3f}s ({paired(c, cb, lambda r: r[0]):4.2f}x)"
            f" {med(c, lambda r: r[2]):6.3f}s ({paired(c, cb, lambda r: r[2]):4.2f}x)"
            f" {med(c, lambda r: r[1]) / 1024:6.1f}MB ({paired(c, cb, lambda r: r[1]):4.2f}x)")
    if churn:
        h, hb = churn[churn_key(n, i)], churn[churn_key(names[0], 0)]
        share = statistics.median(r["ok"] / r["total"] if r["total"] else 0 for r in h)
        line += (f" {med(h, lambda r: r['rec']):6.2f}s ({paired(h, hb, lambda r: r['rec']):4.2f}x)"
                 f" {med(h, lambda r: r['rss']) / 1024:6.1f}MB ({paired(h, hb, lambda r: r['rss']):4.2f}x)"
                 f" {100 * share:10.1f}%")
    print(line)
EOF
echo "# written to $out" >&2
