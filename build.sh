#!/usr/bin/env bash
# build.sh - build profcap from a fresh Debian bookworm machine.
#
# 1. installs the Debian packages the build needs (only those missing),
# 2. fetches the third-party sources with `apt-get source` into deps/src,
# 3. builds zlib, libelf and libbpf as static musl libraries into deps/prefix,
#    copies the nanopb runtime and the Linux UAPI headers,
# 4. runs make (arguments of build.sh go to make, e.g. ./build.sh test).
# Finished steps leave a stamp in deps/stamps and are skipped on the next run.
# Each step logs to deps/logs/<step>.log; a failure names the step and its log.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$ROOT"

DEPS=$ROOT/deps
SRC=$DEPS/src
PREFIX=$DEPS/prefix
UAPI=$DEPS/uapi
OBJ=$DEPS/build
STAMPS=$DEPS/stamps
LOGS=$DEPS/logs
TP=$ROOT/third_party
JOBS=$(nproc)
APT_ETC=${APT_ETC:-/etc/apt}

# Flags for the third-party libraries: frame pointers so profcap can be
# profiled, sections so the final link can drop what is unused.
DEPS_CFLAGS="-O2 -g -fno-omit-frame-pointer -ffunction-sections -fdata-sections"

APT_PKGS="musl-tools clang llvm bpftool protobuf-compiler nanopb python3-protobuf
	linux-libc-dev dpkg-dev xz-utils file make gcc binutils"
SRC_PKGS="zlib elfutils libbpf nanopb"

mkdir -p "$SRC" "$PREFIX/include" "$PREFIX/lib" "$OBJ" "$STAMPS" "$LOGS"

t0=$(date +%s)
say() { printf 'build.sh: %s\n' "$*"; }
die() { printf 'build.sh: ERROR: %s\n' "$*" >&2; exit 1; }

# run_step NAME CMD...: run CMD in a subshell (its cd stays there) with
# errexit on and its output in deps/logs/NAME.log. Not called under if/||:
# bash would silently turn errexit off inside CMD.
run_step() {
	local name=$1 log=$LOGS/$1.log rc
	shift
	say "$name ..."
	rm -f "$STAMPS/$name"
	set +e
	(
		set -e
		"$@"
	) >"$log" 2>&1
	rc=$?
	set -e
	if ((rc != 0)); then
		tail -n 20 "$log" >&2 || true
		die "step '$name' failed (exit $rc), see $log"
	fi
}

# A stamp holds a key (versions, recipe hashes); the step reruns when the key
# changes or the stamp is missing.
# stamp_ok NAME KEY [OUTPUT]: also false when OUTPUT has gone missing.
stamp_ok() {
	[[ -f $STAMPS/$1 && "$(cat "$STAMPS/$1")" == "$2" && -e ${3:-/} ]]
}
stamp_set() { printf '%s\n' "$2" >"$STAMPS/$1"; }

# ---- 1. Debian packages --------------------------------------------------
is_installed() {
	[[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

apt_updated=0
apt_update() {
	if [[ $apt_updated == 0 ]]; then
		run_step apt-update apt-get update
		apt_updated=1
	fi
}

missing=()
for p in $APT_PKGS; do
	is_installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
	apt_update
	run_step apt-install env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends "${missing[@]}"
fi

# ---- 2. sources ------------------------------------------------------------
have_deb_src() {
	grep -qsE '^[[:space:]]*Types:.*deb-src' "$APT_ETC"/sources.list.d/*.sources && return 0
	grep -qsE '^[[:space:]]*deb-src[[:space:]]' "$APT_ETC"/sources.list \
		"$APT_ETC"/sources.list.d/*.list && return 0
	return 1
}

# Write deb-src twins of the enabled deb entries (deb822 and classic).
add_deb_src() {
	local out=$APT_ETC/sources.list.d/profcap-src.sources
	local listout=$APT_ETC/sources.list.d/profcap-src.list
	local f
	: >"$out.tmp"
	for f in "$APT_ETC"/sources.list.d/*.sources; do
		[[ -f $f && $f != "$out" ]] || continue
		# Copy every stanza whose Types include "deb", as Types: deb-src.
		awk '
			function flush() {
				if (isdeb && !off && n) {
					for (i = 1; i <= n; i++) print buf[i]
					print ""
				}
				n = 0; isdeb = 0; off = 0
			}
			/^[[:space:]]*$/ { flush(); next }
			/^[[:space:]]*#/ { next }
			/^Types:/ {
				for (i = 2; i <= NF; i++) if ($i == "deb") isdeb = 1
				buf[++n] = "Types: deb-src"; next
			}
			/^Enabled:[[:space:]]*no/ { off = 1 }
			{ buf[++n] = $0 }
			END { flush() }
		' "$f" >>"$out.tmp"
	done
	if [[ -s $out.tmp ]]; then
		mv "$out.tmp" "$out"
	else
		rm -f "$out.tmp"
	fi
	if [[ -f "$APT_ETC"/sources.list ]] &&
		grep -qE '^[[:space:]]*deb[[:space:]]' "$APT_ETC"/sources.list; then
		sed -nE 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' \
			"$APT_ETC"/sources.list >"$listout"
	fi
	have_deb_src || die "could not add a deb-src entry to $APT_ETC/sources.list.d"
}

need_src=()
for p in $SRC_PKGS; do
	[[ -f $STAMPS/source-$p && -d $SRC/$p ]] || need_src+=("$p")
done
if ((${#need_src[@]})); then
	if ! have_deb_src; then
		say "adding deb-src entries"
		add_deb_src
		apt_updated=0
	fi
	apt_update
	mkdir -p "$SRC/dl"
	fetch_src() {
		cd "$SRC/dl"
		rm -f "$1"_*.dsc
		apt-get source --download-only "$1"
		rm -rf "${SRC:?}/$1"
		dpkg-source -x "$1"_*.dsc "$SRC/$1"
		rm -f "$SRC/$1"_*.orig.tar.*
	}
	for p in "${need_src[@]}"; do
		run_step "source-$p" fetch_src "$p"
		stamp_set "source-$p" "$(cd "$SRC/dl" && ls "$p"_*.dsc)"
	done
fi

# ---- 3. libraries ----------------------------------------------------------
# UAPI headers for musl (-idirafter deps/uapi) and clang -target bpf.
MULTIARCH=$(gcc -print-multiarch)
uapi_key="$(dpkg-query -W -f='${Version}' linux-libc-dev) $MULTIARCH"
if ! stamp_ok uapi "$uapi_key" "$UAPI/asm/types.h"; then
	build_uapi() {
		rm -rf "$UAPI"
		mkdir -p "$UAPI"
		cp -a /usr/include/linux "$UAPI/linux"
		cp -a /usr/include/asm-generic "$UAPI/asm-generic"
		cp -aL "/usr/include/$MULTIARCH/asm" "$UAPI/asm"
	}
	run_step uapi build_uapi
	stamp_set uapi "$uapi_key"
fi

zlib_key="$(cat "$STAMPS/source-zlib") $DEPS_CFLAGS"
if ! stamp_ok zlib "$zlib_key" "$PREFIX/lib/libz.a"; then
	build_zlib() {
		rm -rf "$OBJ/zlib"
		cp -a "$SRC/zlib" "$OBJ/zlib"
		cd "$OBJ/zlib"
		CC=musl-gcc CFLAGS="$DEPS_CFLAGS" ./configure --static --prefix="$PREFIX"
		make -j"$JOBS" libz.a
		make install
	}
	run_step zlib build_zlib
	stamp_set zlib "$zlib_key"
fi

libelf_key="$(cat "$STAMPS/source-elfutils") $DEPS_CFLAGS $(cat "$TP/libelf.mk" "$TP/libelf/config.h" | md5sum)"
if ! stamp_ok libelf "$libelf_key" "$PREFIX/lib/libelf.a"; then
	build_libelf() {
		rm -rf "$OBJ/libelf"
		make -f "$TP/libelf.mk" -j"$JOBS" SRCDIR="$SRC/elfutils" \
			OBJDIR="$OBJ/libelf" PREFIX="$PREFIX" UAPI="$UAPI" \
			CONFIG_H_DIR="$TP/libelf" DEPS_CFLAGS="$DEPS_CFLAGS" install
	}
	run_step libelf build_libelf
	stamp_set libelf "$libelf_key"
fi

libbpf_key="$(cat "$STAMPS/source-libbpf") $DEPS_CFLAGS $(cat "$STAMPS/libelf" "$STAMPS/zlib" | md5sum)"
if ! stamp_ok libbpf "$libbpf_key" "$PREFIX/lib/libbpf.a"; then
	build_libbpf() {
		rm -rf "$OBJ/libbpf" "$PREFIX/include/bpf" "$PREFIX/lib/libbpf.a"
		mkdir -p "$OBJ/libbpf"
		make -C "$SRC/libbpf/src" -j"$JOBS" BUILD_STATIC_ONLY=1 NO_PKG_CONFIG=1 \
			CC=musl-gcc OBJDIR="$OBJ/libbpf" \
			CFLAGS="$DEPS_CFLAGS" \
			EXTRA_CFLAGS="-I$PREFIX/include -idirafter $UAPI" \
			PREFIX="$PREFIX" LIBDIR="$PREFIX/lib" DESTDIR= \
			install install_headers
	}
	run_step libbpf build_libbpf
	stamp_set libbpf "$libbpf_key"
fi

nanopb_key="$(cat "$STAMPS/source-nanopb")"
if ! stamp_ok nanopb "$nanopb_key" "$PREFIX/nanopb/pb_encode.c"; then
	copy_nanopb() {
		rm -rf "$PREFIX/nanopb"
		mkdir -p "$PREFIX/nanopb"
		local f
		for f in pb.h pb_common.c pb_common.h pb_encode.c pb_encode.h \
			pb_decode.c pb_decode.h; do
			cp "$SRC/nanopb/$f" "$PREFIX/nanopb/$f"
		done
	}
	run_step nanopb copy_nanopb
	stamp_set nanopb "$nanopb_key"
fi

t1=$(date +%s)
say "deps ready in deps/ ($((t1 - t0))s)"

# ---- 4. profcap -------------------------------------------------------------
mkdir -p build
say "make -j$JOBS ..."
if ! make -j"$JOBS" "$@" 2>&1 | tee build/make.log; then
	die "step 'make' failed, see $ROOT/build/make.log"
fi
say "done in $(($(date +%s) - t0))s: build/profcap"
