#!/usr/bin/env bash
# page_touch.sh [SIZE_MIB] [ROUNDS] - the cost of first touching fresh
# anonymous memory on this machine, per 4 KiB: plain faults, populated
# (MADV_POPULATE_WRITE), transparent huge pages, both
# (scripts/bench/page_touch.c). In a VM with shadow paging the first touch
# of each small page is an exit to the hypervisor: the figures behind
# profcap's huge-page buffers (util/pages.h, proc/pfile.c, util/heap.c).
# THP must be "madvise" or "always" (/sys/kernel/mm/transparent_hugepage).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/bench
cc -O2 -Wall -Wextra -Werror -o build/bench/page_touch scripts/bench/page_touch.c
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
build/bench/page_touch "${1:-16}" "${2:-5}"
