#!/bin/bash
# offcpu_syscall_tax.sh [ROUNDS] - what off-CPU profiling costs processes it
# does not profile: `dd` doing 2 M one-byte read/write system calls (none
# blocks) while `profcap capture -p <target> --off-cpu` runs, against no
# capture. Modes: `default` (an idle sleep as the target: waits end by task
# works, or at rseq_update); `sysexit` (a target without rseq, on the
# rseq_update route: its first long wait attaches sys_exit, and every
# system call on the host takes the tracepoint slow path). Interleaved
# round by round; prints dd's wall, user and system seconds per round and
# the medians. Needs root.
set -u
ROUNDS=${1:-5}
PROFCAP=$(cd "$(dirname "$0")/../.." && pwd)/build/profcap
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

one() {
	local mode=$1 sp= cp= t
	if [ "$mode" = default ]; then
		sleep 60 & sp=$!
		"$PROFCAP" capture -p "$sp" --off-cpu --seconds 50 -q -o "$OUT/c.pb" & cp=$!
	elif [ "$mode" = sysexit ]; then
		# glibc told not to register rseq; it wakes every 0.2 s.
		GLIBC_TUNABLES=glibc.pthread.rseq=0 bash -c 'while sleep 0.2; do :; done' & sp=$!
		PROFCAP_OFFCPU_TASKWORK=0 "$PROFCAP" capture -p "$sp" --off-cpu --seconds 50 -q \
			-o "$OUT/c.pb" & cp=$!
	fi
	[ -n "$cp" ] && sleep 1.5 # attached, and sys_exit too in sysexit mode
	t=$( { /usr/bin/time -f "%e %U %S" dd if=/dev/zero of=/dev/null bs=1 count=2000000; } 2>&1 | tail -1)
	if [ -n "$cp" ]; then
		kill -INT "$cp"; wait "$cp"; kill "$sp"; wait "$sp" 2>/dev/null
	fi
	echo "$mode $t"
}

for r in $(seq "$ROUNDS"); do
	for m in base default sysexit; do one $m; done
done | tee "$OUT/all"
echo "mode      wall s  user s  sys s (medians of $ROUNDS)"
med() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for m in base default sysexit; do
	printf "%-8s %7s %7s %6s\n" "$m" \
		"$(grep "^$m " "$OUT/all" | cut -d' ' -f2 | med)" \
		"$(grep "^$m " "$OUT/all" | cut -d' ' -f3 | med)" \
		"$(grep "^$m " "$OUT/all" | cut -d' ' -f4 | med)"
done
