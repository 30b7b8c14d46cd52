#!/usr/bin/env bash
# procctx_bench.sh [LINES] [ROUNDS] - cost of the OpenTelemetry process-context
# reader (scripts/bench/procctx_bench.c, linked with musl against the archives
# in build/lib like the unit tests): the maps name check a process without a
# context pays, and the timestamp check / full read of one with a context.
# Run make first. The binary goes to build/bench/.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/bench
make -s libs
musl-gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -idirafter deps/uapi \
	-static -o build/bench/procctx_bench scripts/bench/procctx_bench.c $(make -s print-libs)
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (timings are noisy when busy)"
build/bench/procctx_bench "${1:-2000}" "${2:-101}"
