#!/usr/bin/env bash
# run.sh [SECONDS] - build and run profcap's libFuzzer harnesses, one after
# the other, SECONDS each (default 120). Every scripts/fuzz/fuzz_<name>.c is
# a harness; today:
#   otlp_read    otlp_read__parse() (then otlp__encode() and a re-read)
#   otlp_json_read  otlp_json_read__transcode(), OTLP/JSON (then otlp_read)
#   perf_script  perf_script__parse() (then the OTLP round trip)
#   perf_data    perf_data__parse(), perf.data files (then the OTLP round
#                trip); in-memory unwind rows walk the dwarf-mode stacks
#   cfi          cfi__parse(), the .eh_frame/.debug_frame compiler and Go's
#                pclntab rows (ELF files, bare CFI sections, bare pclntabs,
#                a Go PIE's .data.rel.ro), built only when src/collect/cfi.c
#                exists
#   procmaps     procmaps__parse(), /proc/PID/maps text
#   perfmap      perfmap__add_text(), /tmp/perf-PID.map files (in two appends)
#   grpc         a collector's gRPC reply: header/trailer lines, grpc-message
#                percent-decoding, base64 "-bin" values, google.rpc.Status
#                with RetryInfo, message framing
#   upload       upload__check(), what `profcap upload` accepts
#   elfsym       elfsym__open_mem(), ELF symbol tables and build-id notes,
#                then the symbols embedded (MiniDebugInfo, Go's pclntab)
#                (needs the system libelf: libelf-dev)
#   gz           gz__inflated_size() against gz__decompress(), and a round trip
#   pprof_read   pprof_read__parse() (then pprof__encode() and a re-read)
#   gopclntab    gopclntab__parse(), Go's function table (.gopclntab)
#   debuglink    debuglink__parse(), the .gnu_debuglink section
#   minidebug    minidebug__decompress(), MiniDebugInfo's xz (needs liblzma-dev)
#   procctx      procctx__parse_header() and procctx__decode(), the OpenTelemetry
#                process context another process publishes (OTEP 4719)
#   threadctx    threadctx__elf_offset(), where an executable keeps its
#                otel_thread_ctx_v1 TLS variable (OTEP 4947)
#   threadctx_attrs  threadctx__decode_attrs(), a thread-context record's
#                attrs-data (OTEP 4947)
#   wire         util/wire.h, the protobuf field reader under the OTLP, pprof,
#                gRPC status and process-context decoders
# Built by `make fuzz`: clang with -fsanitize=fuzzer,address,undefined against
# the system glibc and zlib (zlib1g-dev), linking the sanitizer builds of the
# pure layers of src/ (build/fuzz/lib/lib<layer>.a), so no harness lists
# source files. Outputs under build/fuzz/:
#   <name>          the fuzzer binary
#   seeds/<name>/   seeds: scripts/fuzz/seeds/<name>/, plus what seeds_<name>
#                   below adds (the unit tests' files and, as root with
#                   build/profcap or perf, fresh captures)
#   corpus/<name>/  the growing corpus (kept between runs)
#   artifacts/      crashing inputs (<name>-crash-*), to replay with
#                   build/fuzz/<name> FILE
#   <name>.log      libFuzzer's output
# FUZZ_ONLY=NAME runs only that harness (e.g. FUZZ_ONLY=cfi).
# Exit status: 0 when no fuzzer found anything, 1 otherwise, 2 on a build
# problem. Needs no network.
set -uo pipefail
cd "$(dirname "$0")/../.."

SECS=${1:-120}
OUT=build/fuzz

die() {
	echo "fuzz: $*" >&2
	exit 2
}

[[ $SECS =~ ^[0-9]+$ ]] || die "usage: scripts/fuzz/run.sh [SECONDS]"
command -v clang >/dev/null || die "clang not found (apt-get install clang)"
[ -f deps/prefix/nanopb/pb_decode.c ] || die "missing deps/prefix/nanopb: run ./build.sh first"
[ -f /usr/include/zlib.h ] || die "missing zlib.h: apt-get install zlib1g-dev"
mkdir -p "$OUT/artifacts" "$OUT/seeds" "$OUT/corpus"
echo "== make fuzz"
make -s -j"$(nproc)" fuzz >"$OUT/build.log" 2>&1 || {
	cat "$OUT/build.log" >&2
	die "make fuzz failed (see above)"
}

# ---- seeds ------------------------------------------------------------------------
# The bytes of section NAME of ELF file FILE on stdout (objcopy cannot write
# them to a pipe: it writes a file of its own and renames it).
section_of() { # FILE NAME
	local tmp
	tmp=$(mktemp)
	objcopy -O binary --only-section="$2" "$1" "$tmp" 2>/dev/null && cat "$tmp"
	rm -f "$tmp"
}

seeds_otlp_read() {
	local d=$OUT/seeds/otlp_read
	mkdir -p "$d"
	cp scripts/fuzz/seeds/otlp_read/* "$d"/ 2>/dev/null
	if [ -x build/tests/test_otlp_read ]; then
		OTLP_READ_SEED_DIR=$d build/tests/test_otlp_read >/dev/null 2>&1
	fi
	if [ "$(id -u)" = 0 ] && [ -x build/profcap ]; then
		# A short real capture, small enough to mutate quickly: one busy
		# process, and the same gzip'd.
		sh -c 'end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do :; done' &
		local busy=$!
		build/profcap capture -q --seconds 1 -F 199 -p "$busy" -o "$d/capture_pid.pb" \
			>/dev/null 2>&1
		kill "$busy" 2>/dev/null
		wait "$busy" 2>/dev/null
		[ -f "$d/capture_pid.pb" ] && gzip -c "$d/capture_pid.pb" >"$d/capture_pid.pb.gz"
	fi
}

seeds_otlp_json_read() {
	local d=$OUT/seeds/otlp_json_read
	mkdir -p "$d"
	printf '{"dictionary":{"stringTable":["","a\\u00e9\\ud83d\\ude00"]}}' >"$d/strings.json"
	if [ "$(id -u)" = 0 ] && [ -x build/profcap ]; then
		# A short real capture as JSON, small enough to mutate quickly.
		sh -c 'end=$(($(date +%s) + 2)); while [ $(date +%s) -lt $end ]; do :; done' &
		local busy=$!
		build/profcap capture -q --seconds 0.5 -F 99 -p "$busy" -o "$d/capture.json" \
			--format otlp-json >/dev/null 2>&1
		kill "$busy" 2>/dev/null
		wait "$busy" 2>/dev/null
	fi
}

seeds_perf_script() {
	local d=$OUT/seeds/perf_script tmp
	mkdir -p "$d"
	cp scripts/fuzz/seeds/perf_script/* "$d"/ 2>/dev/null
	if [ "$(id -u)" = 0 ] && command -v perf >/dev/null; then
		tmp=$(mktemp -d)
		if perf record -q -g -F 499 -e cpu-clock -o "$tmp/perf.data" -- \
			sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done' >/dev/null 2>&1; then
			perf script -i "$tmp/perf.data" 2>/dev/null | head -c 32768 >"$d/perf_g.txt"
			perf script -F comm,tid,time,ip,sym -i "$tmp/perf.data" 2>/dev/null |
				head -c 32768 >"$d/perf_tid.txt"
			perf script -F comm,pid,tid,time,period,event,ip,sym,dso \
				-i "$tmp/perf.data" 2>/dev/null | head -c 32768 >"$d/perf_fields.txt"
		fi
		rm -rf "$tmp"
	fi
}

seeds_perf_data() {
	local d=$OUT/seeds/perf_data tmp
	mkdir -p "$d"
	cp tests/unit/fixtures/perf_*.data "$d"/ 2>/dev/null
	if [ "$(id -u)" = 0 ] && command -v perf >/dev/null; then
		# Fresh small recordings (features trimmed to stay under -max_len).
		tmp=$(mktemp -d)
		for mode in "-g" "--call-graph dwarf,512"; do
			# shellcheck disable=SC2086
			perf record -q --no-bpf-event $mode -F 499 -e cpu-clock -o "$tmp/p.data" -- \
				sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done' \
				>/dev/null 2>&1 &&
				python3 tests/unit/fixtures/perf_data_trim.py "$tmp/p.data" \
					"$d/fresh${mode%% *}.data" 2>/dev/null
		done
		rm -rf "$tmp"
	fi
	true
}

seeds_cfi() {
	local d=$OUT/seeds/cfi f
	mkdir -p "$d"
	# Small real ELF files (mode byte 0) and their bare .eh_frame (mode 1).
	for f in build/tests/workloads/libnofp.so build/tests/workloads/nofp_main \
		build/tests/fixtures/libfx.so; do
		[ -f "$f" ] || continue
		{ printf '\0'; cat "$f"; } >"$d/$(basename "$f").elf"
		{ printf '\1\0'; section_of "$f" .eh_frame; } >"$d/$(basename "$f").eh"
	done
	seeds_go "$d"
}

# test_gopcln's crafted Go tables (GOPCLN_SEED_DIR), written once into
# $OUT/gopcln: the pclntab, its ELF file (.text and .gopclntab), and a
# .data.rel.ro holding it with the .rela.dyn that gives its text address.
# Real Go binaries are far larger than -max_len. 0 when they are there.
go_crafted() {
	[ -f "$OUT/gopcln/data_ro.bin" ] && return 0
	[ -x build/tests/test_gopcln ] || return 1
	mkdir -p "$OUT/gopcln"
	GOPCLN_SEED_DIR=$OUT/gopcln build/tests/test_gopcln >/dev/null 2>&1
}

# The crafted Go tables in fuzz_cfi's modes: the ELF file whole (mode 0),
# the pclntab as .gopclntab (1, 2), and the Go PIE's data (1, 6: the
# relocations' size in two bytes, then they, then the data).
seeds_go() { # DIR
	local d=$1 g=$OUT/gopcln n
	go_crafted || return 0
	{ printf '\0'; cat "$g/pclntab.elf"; } >"$d/go_crafted.elf"
	{ printf '\1\2'; cat "$g/pclntab.bin"; } >"$d/go_crafted.pcln"
	n=$(stat -c %s "$g/data_rela.bin")
	{ printf "\\001\\006\\$(printf %03o $((n & 255)))\\$(printf %03o $((n >> 8)))"
		cat "$g/data_rela.bin" "$g/data_ro.bin"; } >"$d/go_crafted_data.pcln"
}

seeds_plain() { # NAME: the committed seeds only
	mkdir -p "$OUT/seeds/$1"
	cp scripts/fuzz/seeds/"$1"/* "$OUT/seeds/$1"/ 2>/dev/null
	true
}

seeds_wire() { # protobuf of each decoder
	local d=$OUT/seeds/wire
	cp scripts/fuzz/seeds/otlp_read/* scripts/fuzz/seeds/grpc/status.bin "$d"/ 2>/dev/null
	cp scripts/fuzz/seeds/pprof_read/*.pprof "$d"/ 2>/dev/null
	true
}

seeds_procmaps() {
	local d=$OUT/seeds/procmaps p
	seeds_plain procmaps
	for p in /proc/self /proc/1; do
		head -c 16384 "$p/maps" >"$d/$(basename "$p").maps" 2>/dev/null
	done
}

seeds_elfsym() {
	local d=$OUT/seeds/elfsym f
	mkdir -p "$d"
	# Small ELF files of this build (not committed: they are build outputs).
	for f in build/tests/workloads/libnofp.so build/tests/workloads/nofp_main \
		build/tests/fixtures/libfx.so; do
		[ -f "$f" ] && [ "$(stat -c %s "$f")" -le 65536 ] && cp "$f" "$d/"
	done
	# The crafted Go file (.text and .gopclntab, no .symtab).
	go_crafted && cp "$OUT/gopcln/pclntab.elf" "$d/go_crafted.elf"
	true
}

# Seeds for the symbol-source parsers: a real .gopclntab (from a Go binary
# built with -s -w when go is installed), real .gnu_debuglink sections
# (byte 0 = byte order) and real xz streams.
seeds_symbols() {
	local g=$OUT/seeds/gopclntab l=$OUT/seeds/debuglink m=$OUT/seeds/minidebug tmp
	mkdir -p "$g" "$l" "$m"
	tmp=$(mktemp -d)
	if command -v go >/dev/null; then
		GOCACHE=$tmp/cache GOPATH=$tmp/gopath GO111MODULE=off CGO_ENABLED=0 \
			go build -ldflags='-s -w' -o "$tmp/gowork" tests/workloads/go/gowork.go \
			>/dev/null 2>&1 &&
			objcopy -O binary --only-section=.gopclntab "$tmp/gowork" "$tmp/pcln" &&
			head -c 65536 "$tmp/pcln" >"$g/go_head.bin"
	fi
	if [ -f build/tests/fixtures/libfx.so ]; then
		cp build/tests/fixtures/libfx.so "$tmp/fx"
		objcopy --only-keep-debug "$tmp/fx" "$tmp/fx.debug" &&
			objcopy --add-gnu-debuglink="$tmp/fx.debug" "$tmp/fx" &&
			{ printf '\0'; section_of "$tmp/fx" .gnu_debuglink; } >"$l/fx_le.bin"
		xz -c "$tmp/fx.debug" | head -c 65536 >"$m/fx_debug.xz"
	fi
	printf 'hello world' | xz -c >"$m/hello.xz"
	go_crafted && cp "$OUT/gopcln/pclntab.bin" "$g/go_crafted.bin"
	rm -rf "$tmp"
}

# The three symbol parsers share one seed builder.
seeds_symbols_done=
seeds_symbols_once() {
	[ -n "$seeds_symbols_done" ] && return
	seeds_symbols_done=1
	seeds_symbols
}
seeds_gopclntab() { seeds_symbols_once; }
seeds_debuglink() { seeds_symbols_once; }
seeds_minidebug() { seeds_symbols_once; }

# A valid header + payload written by the unit test.
seeds_procctx() {
	if [ -x build/tests/test_procctx ]; then
		PROCCTX_SEED_DIR=$OUT/seeds/procctx build/tests/test_procctx >/dev/null 2>&1
	fi
}

seeds_threadctx() {
	local d=$OUT/seeds/threadctx
	mkdir -p "$d"
	# The writer workload: its variable in .dynsym, and under -max_len.
	[ -f build/tests/workloads/threadctx_writer ] && cp build/tests/workloads/threadctx_writer "$d/"
	# ... and the SDK-like libraries: TLSDESC and general-dynamic relocations.
	for f in libotelctx_desc.so libotelctx_gd.so; do
		[ -f build/tests/workloads/$f ] && cp build/tests/workloads/$f "$d/"
	done
	return 0
}

# ---- run ----------------------------------------------------------------------------
found=0
run() { # NAME
	local name=$1 log=$OUT/$1.log corpus=$OUT/corpus/$1
	mkdir -p "$corpus"
	echo "== fuzz $name for ${SECS}s (corpus $corpus, seeds $OUT/seeds/$name)"
	"$OUT/$name" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$OUT/artifacts/$name-" \
		"$corpus" "$OUT/seeds/$name" >"$log" 2>&1
	local rc=$?
	local execs cov ft units
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1)
	units=$(find "$corpus" -type f | wc -l)
	echo "   execs ${execs:-?}, ${cov:-cov: ?}, ${ft:-ft: ?}, corpus $units files, exit $rc"
	if [ $rc -ne 0 ] || ls "$OUT/artifacts/$name-"* >/dev/null 2>&1; then
		found=1
		grep -m 5 -E 'ERROR|SUMMARY|bad failure|differs|abort' "$log" | sed 's/^/   /'
		ls "$OUT/artifacts/$name-"* 2>/dev/null | sed 's/^/   artifact: /'
	fi
}

names=()
for h in scripts/fuzz/fuzz_*.c; do
	n=${h#scripts/fuzz/fuzz_}
	n=${n%.c}
	[ -n "${FUZZ_ONLY:-}" ] && [ "$n" != "$FUZZ_ONLY" ] && continue
	[ -x "$OUT/$n" ] || die "$OUT/$n was not built"
	mkdir -p "$OUT/seeds/$n"
	cp scripts/fuzz/seeds/"$n"/* "$OUT/seeds/$n"/ 2>/dev/null
	if declare -F "seeds_$n" >/dev/null; then
		"seeds_$n"
	fi
	names+=("$n")
done
for n in "${names[@]}"; do
	run "$n"
done
exit $found
