#!/usr/bin/env bash
# page_touch.sh [SIZE_MIB] [ROUNDS] [PAUSE_S] - the cost of first touching fresh
# anonymous memory on this machine, per 4 KiB: plain faults, populated
# (MADV_POPULATE_WRITE), transparent huge pages, both
# (scripts/bench/page_touch.c). In a VM with shadow paging the first touch
# of each small page is an exit to the hypervisor; where the VM gives free
# memory back to the host (free page reporting, blocks of 2^order pages),
# a huge page is most often such a block, backed again at its first touch:
# the "1st round" column after PAUSE_S seconds (default 5) shows it. A
# host's figures, for choosing `make HUGE_PAGES=on` or off there
# (scripts/bench/alloc_bench.sh measures profcap itself both ways).
# THP must be "madvise" or "always" (/sys/kernel/mm/transparent_hugepage).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/bench
cc -O2 -Wall -Wextra -Werror -o build/bench/page_touch scripts/bench/page_touch.c
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown);" \
	"free page reporting order: $(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null || echo none)"
build/bench/page_touch "${1:-16}" "${2:-5}" "${3:-5}"
