#!/usr/bin/env bash
# switch_floor.sh - build build/bench/switch_floor (a loader) and
# build/bench/switch_floor.bpf.o (an empty sched_switch program) for
# offcpu_bench.py's `floor` configuration.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=build/bench
mkdir -p "$OUT"
make -s libs
clang -O2 -g -target bpf -Wall -Werror -Ideps/prefix/include -idirafter deps/uapi \
	-c scripts/bench/switch_floor.bpf.c -o "$OUT/switch_floor.bpf.o"
musl-gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Ideps/prefix/include \
	-idirafter deps/uapi -static -o "$OUT/switch_floor" scripts/bench/switch_floor.c \
	$(make -s print-libs)
