#!/usr/bin/env bash
# glibc_deps.sh - the third-party libraries profcap links, built a second
# time for glibc so that the sanitizer builds of the unit tests
# (sanitize_unit.sh, tsan_unit.sh) can link every test, not only the pure
# ones. The libraries are not instrumented: the sanitizers check profcap's
# code, and the libraries' own allocations still go through the sanitizer's
# malloc.
#
# From the sources build.sh fetched into deps/src, by the same recipes:
#   libelf + libdw    third_party/elfutils.mk (elfutils 0.192, as linked)
#   libbpf            its own Makefile, static only, on that libelf
#   libdemangle       third_party/libiberty.mk
#   libcurl           Debian's tree, with build.sh's patch steps and options
# From Debian (-dev packages of the same Debian sources as deps/src; build.sh
# installs them): OpenSSL 3.0, nghttp2, liblzma, zlib.
#
# Output: build/glibc/{include,lib}; each library leaves a stamp holding its
# key (source, recipe) in build/glibc/stamps and is rebuilt only when the key
# changes. The independent builds run in parallel. Logs: build/glibc/logs.
# Prints "glibc deps: ready (Ns)"; "glibc deps: unavailable: why" and exit 2
# when a prerequisite is missing (a package, deps/src), "glibc deps: failed:
# why" and exit 1 when a build fails.
# Needs no network.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

ROOT=$PWD
SRC=$ROOT/deps/src
OUT=$ROOT/build/glibc
TP=$ROOT/third_party
STAMPS=$OUT/stamps
LOGS=$OUT/logs
CC=${GLIBC_DEPS_CC:-gcc}
CFLAGS="-O1 -g -fno-omit-frame-pointer -fPIC"
JOBS=$(nproc)
t0=$(date +%s)

unavailable() {
	echo "glibc deps: unavailable: $*"
	exit 2
}

for h in openssl/ssl.h nghttp2/nghttp2.h lzma.h zlib.h; do
	[ -f "/usr/include/$h" ] ||
		unavailable "no /usr/include/$h (apt-get install libssl-dev libnghttp2-dev liblzma-dev zlib1g-dev)"
done
for p in elfutils libbpf libiberty curl; do
	if [ ! -f "deps/stamps/source-$p" ] || [ ! -d "$SRC/$p" ]; then
		unavailable "no $p source in deps/src: run ./build.sh"
	fi
done
mkdir -p "$OUT/include" "$OUT/lib" "$OUT/obj" "$STAMPS" "$LOGS"
# One build at a time (the ASan and TSan scripts may start together).
exec 9>"$OUT/.lock"
flock 9

key_of() { # NAME FILES...: the source stamp, the flags and the recipe files
	local name=$1
	shift
	printf '%s %s %s %s\n' "$(cat "deps/stamps/source-$name")" "$CC" "$CFLAGS" \
		"$(cat "$@" | md5sum | cut -d' ' -f1)"
}
fresh() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }

# step NAME KEY FUNCTION: run FUNCTION (errexit on, output to its log) unless
# NAME's stamp holds KEY; stamp it when it succeeds.
step() {
	local name=$1 key=$2 rc
	fresh "$name" "$key" && return 0
	rm -f "$STAMPS/$name"
	# Not under if/||: bash would turn errexit off inside the subshell.
	(
		set -e
		"$3"
	) >"$LOGS/$name.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		tail -n 15 "$LOGS/$name.log" | sed 's/^/    /'
		echo "glibc deps: $name failed (see $LOGS/$name.log)"
		return 1
	fi
	echo "$key" >"$STAMPS/$name"
}

build_elfutils() {
	rm -rf "$OUT/obj/elfutils"
	make -f "$TP/elfutils.mk" -j"$JOBS" SRCDIR="$SRC/elfutils" OBJDIR="$OUT/obj/elfutils" \
		PREFIX="$OUT" CC="$CC" CONFIG_H_DIR="$TP/elfutils" DEPS_CFLAGS="$CFLAGS" install
}

build_libbpf() {
	rm -rf "$OUT/obj/libbpf" "$OUT/include/bpf" "$OUT/lib/libbpf.a"
	mkdir -p "$OUT/obj/libbpf"
	make -C "$SRC/libbpf/src" -j"$JOBS" BUILD_STATIC_ONLY=1 NO_PKG_CONFIG=1 CC="$CC" \
		OBJDIR="$OUT/obj/libbpf" CFLAGS="$CFLAGS" EXTRA_CFLAGS="-I$OUT/include" \
		PREFIX="$OUT" LIBDIR="$OUT/lib" DESTDIR= install install_headers
}

build_demangle() {
	rm -rf "$OUT/obj/libiberty"
	make -f "$TP/libiberty.mk" -j"$JOBS" SRCDIR="$SRC/libiberty" OBJDIR="$OUT/obj/libiberty" \
		PREFIX="$OUT" CC="$CC" DEPS_CFLAGS="$CFLAGS" install
}

# libcurl with build.sh's options, on the system's OpenSSL, nghttp2, zlib.
curl_opts() {
	sed -n '/^CURL_OPTS=(/,/)$/p' build.sh | sed 's/^CURL_OPTS=(//; s/)$//' |
		tr -s ' \t\n' '\n' | grep -v -e '^$' -e '^--with-\(openssl\|nghttp2\|zlib\)='
}
build_curl() {
	local p
	rm -rf "$OUT/obj/curl" "$OUT/include/curl" "$OUT/lib/libcurl.a"
	cp -a "$SRC/curl" "$OUT/obj/curl"
	cd "$OUT/obj/curl"
	# As build.sh: Debian's NSS and GnuTLS flavour patches undone, ours on top.
	patch -R -p1 <debian/patches/99_nss.patch
	patch -R -p1 <debian/patches/90_gnutls.patch
	for p in "$TP"/curl/*.patch; do
		patch -p1 <"$p"
	done
	# shellcheck disable=SC2046
	env CC="$CC" CFLAGS="$CFLAGS" ./configure --prefix="$OUT" --libdir="$OUT/lib" \
		--with-openssl --with-nghttp2 --with-zlib $(cd "$ROOT" && curl_opts)
	make -j"$JOBS" -C lib
	make -C lib install
	make -C include install
}

[ "$(curl_opts | grep -c '^--')" -ge 10 ] ||
	unavailable "no CURL_OPTS=(...) list found in build.sh to build libcurl with"
eu_key=$(key_of elfutils "$TP/elfutils.mk" "$TP/elfutils/config.h")
bpf_key="$(key_of libbpf /dev/null) $eu_key"
dm_key=$(key_of libiberty "$TP/libiberty.mk" "$TP/libiberty/safe-ctype.h")
curl_key="$(key_of curl "$TP"/curl/*.patch) $(curl_opts | md5sum | cut -d' ' -f1)"

# libbpf needs libelf's headers: after elfutils. The others in parallel.
(
	step elfutils "$eu_key" build_elfutils
	rc=$?
	[ $rc -eq 0 ] || exit $rc
	step libbpf "$bpf_key" build_libbpf
) &
p1=$!
step demangle "$dm_key" build_demangle &
p2=$!
step curl "$curl_key" build_curl &
p3=$!
rc=0
for p in $p1 $p2 $p3; do
	wait "$p" || rc=1
done
if [ $rc -ne 0 ]; then
	echo "glibc deps: failed: a library did not build (see above)"
	exit 1
fi
echo "glibc deps: ready ($(($(date +%s) - t0))s)"
