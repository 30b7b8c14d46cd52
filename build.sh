#!/usr/bin/env bash
# build.sh - build profcap from a fresh Debian bookworm machine.
#
# 1. installs the Debian packages the build needs (only those missing),
# 2. fetches the third-party sources with `apt-get source` into deps/src,
# 3. builds zlib, elfutils (libelf, libdw), liblzma, the libiberty
#    demanglers, libdeflate, libbpf, the transport (OpenSSL, nghttp2, libcurl)
#    and mimalloc (for `make ALLOC=mimalloc`) as static musl libraries into
#    deps/prefix, copies the nanopb runtime and the Linux UAPI headers,
# 4. runs make (arguments of build.sh go to make, e.g. ./build.sh test).
# Finished steps leave a stamp in deps/stamps and are skipped on the next run.
# Each step logs to deps/logs/<step>.log; a failure names the step and its log.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$ROOT"

# deps/ with symlinks resolved: a work tree whose deps/ links to another
# checkout's computes the same stamp keys (some hold paths) and rebuilds nothing.
mkdir -p "$ROOT/deps"
DEPS=$(cd -P "$ROOT/deps" && pwd)
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

# Build tools for the transport libraries (autotools for nghttp2, perl for
# OpenSSL), then tools only the tests use: python3-grpcio (gRPC receiver),
# openssl (test certificates), curl (manual checks), chromium (flame graph
# in a real browser), the reference pprof profile.proto and `go tool pprof`
# (pprof round trips), perf (perf script input); zlib1g-dev and libelf-dev for the
# sanitizer builds (fuzzers, unit tests under ASan+UBSan) against glibc;
# libssl-dev, libnghttp2-dev and liblzma-dev for tests/glibc_deps.sh (the
# unit tests under ASan+UBSan and TSan link Debian's OpenSSL, nghttp2 and
# liblzma: the same Debian sources as deps/src).
APT_PKGS="musl-tools clang llvm bpftool protobuf-compiler nanopb python3-protobuf
	linux-libc-dev dpkg-dev xz-utils file make gcc binutils
	autoconf automake libtool pkg-config perl patch
	python3-grpcio openssl curl chromium golang-github-google-pprof-dev golang-go
	linux-perf nodejs g++ rustc libc6-dbg bpftrace zlib1g-dev libelf-dev dwz
	libssl-dev libnghttp2-dev liblzma-dev"
# A source package may name its suite (package/suite): elfutils comes from
# bookworm-backports (0.192: DWARF without .debug_aranges, zstd sections).
# xz-utils gives liblzma (MiniDebugInfo), libiberty the C++/Rust demanglers,
# libdeflate the inflation of compressed debug sections, mimalloc the
# allocator of `make ALLOC=mimalloc`.
SRC_PKGS="zlib elfutils/bookworm-backports libbpf nanopb openssl nghttp2 curl
	xz-utils libiberty libdeflate mimalloc"

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

# have_suite_src SUITE: a deb-src entry for SUITE exists.
have_suite_src() {
	grep -qsE "^[[:space:]]*deb-src[[:space:]].*[[:space:]]$1([[:space:]]|\$)" \
		"$APT_ETC"/sources.list "$APT_ETC"/sources.list.d/*.list && return 0
	awk -v s="$1" '
		/^[[:space:]]*$/ { src = 0; hit = 0 }
		/^Types:.*deb-src/ { src = 1 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) hit = 1 }
		src && hit { found = 1 }
		END { exit !found }
	' "$APT_ETC"/sources.list.d/*.sources 2>/dev/null
}

# add_suite_src SUITE: a deb-src entry for SUITE (e.g. bookworm-backports)
# on the Debian archive, for packages whose backport we build.
add_suite_src() {
	cat >"$APT_ETC/sources.list.d/profcap-$1-src.sources" <<-SRC
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: $1
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	SRC
	have_suite_src "$1" || die "could not add a deb-src entry for $1"
}

# A source stamp holds the .dsc name, then the suite when one was asked for:
# changing a package's suite fetches it again.
need_src=()
for spec in $SRC_PKGS; do
	p=${spec%%/*}
	suite=${spec#"$p"}
	suite=${suite#/}
	if [[ -f $STAMPS/source-$p && -d $SRC/$p ]] &&
		{ [[ -z $suite ]] || grep -qw -- "$suite" "$STAMPS/source-$p"; }; then
		continue
	fi
	need_src+=("$spec")
done
if ((${#need_src[@]})); then
	if ! have_deb_src; then
		say "adding deb-src entries"
		add_deb_src
		apt_updated=0
	fi
	for spec in "${need_src[@]}"; do
		suite=${spec#*/}
		if [[ $suite != "$spec" ]] && ! have_suite_src "$suite"; then
			say "adding a deb-src entry for $suite"
			add_suite_src "$suite"
			apt_updated=0
		fi
	done
	apt_update
	mkdir -p "$SRC/dl"
	# A mirror may index a version whose .dsc is not published yet (a
	# security suite): then take the newest version that downloads.
	# fetch_src PACKAGE [SUITE]: unpack into deps/src/PACKAGE and write
	# what was unpacked to deps/src/dl/PACKAGE.fetched (the stamp).
	fetch_src() {
		local v orig
		cd "$SRC/dl"
		rm -f "$1"_*.dsc "$1.fetched"
		if [[ -n ${2:-} ]]; then
			if ! apt-get source --download-only "$1/$2"; then
				# The mirror indexes $2's version but may not serve
				# its .dsc/.debian.tar (a backports suite): unpack
				# the upstream tarball apt did fetch, i.e. the
				# source without Debian's patches.
				v=$(apt-get source --print-uris "$1/$2" |
					sed -n "s/.* $1_\(.*\)-[^-]*\.dsc .*/\1/p")
				orig=$(ls "$1_$v".orig.tar.*[!c] | head -n 1)
				[[ -n $v && -f $orig ]]
				rm -rf "${SRC:?}/$1"
				mkdir -p "$SRC/$1"
				tar -xf "$orig" -C "$SRC/$1" --strip-components=1
				echo "$orig" >"$1.fetched"
				return 0
			fi
		elif ! apt-get source --download-only "$1"; then
			for v in $(apt-cache showsrc "$1" |
				sed -n 's/^Version: //p' | sort -ruV); do
				rm -f "$1"_*.dsc
				apt-get source --download-only "$1=$v" && break
			done
		fi
		local dsc=("$1"_*.dsc)
		[[ ${#dsc[@]} == 1 && -f ${dsc[0]} ]]
		rm -rf "${SRC:?}/$1"
		dpkg-source -x "$1"_*.dsc "$SRC/$1"
		rm -f "$SRC/$1"_*.orig.tar.*
		echo "${dsc[0]}" >"$1.fetched"
	}
	for spec in "${need_src[@]}"; do
		p=${spec%%/*}
		suite=${spec#"$p"}
		suite=${suite#/}
		run_step "source-$p" fetch_src "$p" "$suite"
		stamp_set "source-$p" "$(cat "$SRC/dl/$p.fetched")${suite:+ $suite}"
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

# libdeflate: whole-buffer inflation of compressed debug sections (the
# library alone: its Makefile's static target, no programs).
deflate_key="$(cat "$STAMPS/source-libdeflate") $DEPS_CFLAGS"
if ! stamp_ok libdeflate "$deflate_key" "$PREFIX/lib/libdeflate.a"; then
	build_libdeflate() {
		rm -rf "$OBJ/libdeflate"
		cp -a "$SRC/libdeflate" "$OBJ/libdeflate"
		cd "$OBJ/libdeflate"
		make -j"$JOBS" CC=musl-gcc CFLAGS="$DEPS_CFLAGS" libdeflate.a
		install -m 644 libdeflate.a "$PREFIX/lib/"
		install -m 644 libdeflate.h "$PREFIX/include/"
	}
	run_step libdeflate build_libdeflate
	stamp_set libdeflate "$deflate_key"
fi

# elfutils: libelf (libbpf's and ours) and libdw (DWARF lines and inlined
# frames), from bookworm-backports' 0.192.
elfutils_key="$(cat "$STAMPS/source-elfutils") $DEPS_CFLAGS $(cat "$TP/elfutils.mk" "$TP/elfutils/config.h" | md5sum)"
if ! stamp_ok elfutils "$elfutils_key" "$PREFIX/lib/libdw.a"; then
	build_elfutils() {
		rm -rf "$OBJ/libelf" "$OBJ/elfutils"
		make -f "$TP/elfutils.mk" -j"$JOBS" SRCDIR="$SRC/elfutils" \
			OBJDIR="$OBJ/elfutils" PREFIX="$PREFIX" UAPI="$UAPI" \
			CONFIG_H_DIR="$TP/elfutils" DEPS_CFLAGS="$DEPS_CFLAGS" install
	}
	run_step elfutils build_elfutils
	stamp_set elfutils "$elfutils_key"
fi

# liblzma (xz-utils): decoder only, for MiniDebugInfo (.gnu_debugdata).
LZMA_OPTS=(--disable-shared --enable-static --disable-dependency-tracking
	--disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo
	--disable-lzma-links --disable-scripts --disable-doc --disable-nls
	--enable-threads=no --disable-encoders --enable-decoders=lzma1,lzma2,delta,x86
	--enable-checks=crc32,crc64,sha256 --disable-microlzma --disable-lzip-decoder)
lzma_key="$(cat "$STAMPS/source-xz-utils") $DEPS_CFLAGS ${LZMA_OPTS[*]}"
if ! stamp_ok lzma "$lzma_key" "$PREFIX/lib/liblzma.a"; then
	build_lzma() {
		rm -rf "$OBJ/xz-utils" "$PREFIX/include/lzma" "$PREFIX/include/lzma.h" \
			"$PREFIX/lib/liblzma.a"
		cp -a "$SRC/xz-utils" "$OBJ/xz-utils"
		cd "$OBJ/xz-utils"
		env CC=musl-gcc CFLAGS="$DEPS_CFLAGS" PKG_CONFIG_LIBDIR="$PREFIX/lib/pkgconfig" \
			./configure --prefix="$PREFIX" --libdir="$PREFIX/lib" "${LZMA_OPTS[@]}"
		make -j"$JOBS" -C src/liblzma
		make -C src/liblzma install
	}
	run_step lzma build_lzma
	stamp_set lzma "$lzma_key"
fi

# C++ and Rust demanglers from libiberty (see third_party/libiberty.mk).
demangle_key="$(cat "$STAMPS/source-libiberty") $DEPS_CFLAGS $(cat "$TP/libiberty.mk" "$TP/libiberty/safe-ctype.h" | md5sum)"
if ! stamp_ok demangle "$demangle_key" "$PREFIX/lib/libdemangle.a"; then
	build_demangle() {
		rm -rf "$OBJ/libiberty"
		make -f "$TP/libiberty.mk" -j"$JOBS" SRCDIR="$SRC/libiberty" \
			OBJDIR="$OBJ/libiberty" PREFIX="$PREFIX" \
			DEPS_CFLAGS="$DEPS_CFLAGS" install
	}
	run_step demangle build_demangle
	stamp_set demangle "$demangle_key"
fi

libbpf_key="$(cat "$STAMPS/source-libbpf") $DEPS_CFLAGS $(cat "$STAMPS/elfutils" "$STAMPS/zlib" | md5sum)"
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

# ---- transport: OpenSSL 3.0, nghttp2, libcurl (HTTP/1.1, HTTP/2, TLS) -----
# No unwind tables: nothing here needs them (no C++; profcap unwinds with
# frame pointers), and .eh_frame survives strip.
TRANSPORT_CFLAGS="$DEPS_CFLAGS -fno-asynchronous-unwind-tables"
# configure scripts must see our .pc files only, never the glibc ones.
TRANSPORT_ENV=(env CC=musl-gcc PKG_CONFIG_LIBDIR="$PREFIX/lib/pkgconfig"
	PKG_CONFIG_PATH= CFLAGS="$TRANSPORT_CFLAGS -idirafter $UAPI")

# OpenSSL: what a TLS 1.2/1.3 client with X.509 verification (RSA, ECDSA,
# Ed25519 certificates; mTLS keys in PEM/PKCS#8) needs, nothing else: no
# legacy ciphers or digests, engines, DSO/provider loading, SSL 3, DTLS, SRP,
# CMS/TS/CT/CMP/OCSP, binary curves, DSA, and no finite-field DH (TLS 1.2
# DHE suites; servers offer ECDHE, Go's TLS has no DHE at all). The
# assembly stays: AES-NI and constant-time code (no-asm would save 0.5 MB).
# OPENSSLDIR only matters to programs that ask for defaults; libcurl here
# never does (no CA fallback, no config auto-load), so no file of the host
# is read behind profcap's back.
OPENSSL_OPTS=(no-shared no-tests no-legacy no-deprecated no-dso no-engine
	no-module no-autoload-config no-comp no-ssl3 no-dtls no-srp no-srtp no-sctp
	no-idea no-mdc2 no-rc2 no-rc4 no-rc5 no-md4 no-des no-bf no-cast no-seed
	no-camellia no-aria no-sm2 no-sm3 no-sm4 no-whirlpool no-gost no-siphash
	no-rmd160 no-blake2 no-scrypt no-ocb no-siv no-ec2m no-rfc3779 no-dh
	no-cms no-ts no-ct no-cmp no-ocsp no-ui-console no-async no-nextprotoneg
	no-dsa no-fips no-weak-ssl-ciphers no-ssl-trace no-uplink no-filenames)
openssl_key="$(cat "$STAMPS/source-openssl") $TRANSPORT_CFLAGS ${OPENSSL_OPTS[*]} $(cat "$STAMPS/uapi")"
if ! stamp_ok openssl "$openssl_key" "$PREFIX/lib/libcrypto.a"; then
	build_openssl() {
		rm -rf "$OBJ/openssl" "$PREFIX/include/openssl" \
			"$PREFIX"/lib/lib{ssl,crypto}.a
		mkdir -p "$OBJ/openssl"
		cd "$OBJ/openssl"
		"${TRANSPORT_ENV[@]}" "$SRC/openssl/Configure" linux-x86_64 \
			--prefix="$PREFIX" --libdir=lib --openssldir=/etc/ssl \
			"${OPENSSL_OPTS[@]}"
		make -j"$JOBS" build_libs
		make install_dev
	}
	run_step openssl build_openssl
	stamp_set openssl "$openssl_key"
fi

nghttp2_key="$(cat "$STAMPS/source-nghttp2") $TRANSPORT_CFLAGS"
if ! stamp_ok nghttp2 "$nghttp2_key" "$PREFIX/lib/libnghttp2.a"; then
	build_nghttp2() {
		rm -rf "$OBJ/nghttp2" "$PREFIX/include/nghttp2" \
			"$PREFIX/lib/libnghttp2.a"
		cp -a "$SRC/nghttp2" "$OBJ/nghttp2"
		cd "$OBJ/nghttp2"
		autoreconf -fi
		"${TRANSPORT_ENV[@]}" ./configure --prefix="$PREFIX" \
			--libdir="$PREFIX/lib" --enable-lib-only --enable-static \
			--disable-shared --disable-dependency-tracking
		make -j"$JOBS" -C lib
		make -C lib install
	}
	run_step nghttp2 build_nghttp2
	stamp_set nghttp2 "$nghttp2_key"
fi

# libcurl: HTTP and HTTPS only. Kept: proxies (https_proxy/no_proxy), IPv6,
# unix sockets, the headers API (trailers), date parsing (Retry-After) and
# verbose mode (-v debugging of TLS). The threaded resolver (musl's
# getaddrinfo in a thread) lets timeouts cover DNS without SIGALRM. No CA
# bundle or path is compiled in: profcap passes the CA file at run time.
CURL_OPTS=(--disable-shared --enable-static --disable-dependency-tracking
	--with-openssl="$PREFIX" --with-nghttp2="$PREFIX" --with-zlib="$PREFIX"
	--without-ca-bundle --without-ca-path --without-ca-fallback
	--disable-openssl-auto-load-config --enable-threaded-resolver
	--disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp
	--disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap
	--disable-smb --disable-smtp --disable-gopher --disable-mqtt --disable-manual
	--disable-ntlm --disable-ntlm-wb --disable-crypto-auth --disable-tls-srp
	--disable-cookies --disable-doh --disable-mime --disable-netrc
	--disable-alt-svc --disable-hsts --disable-websockets --disable-sspi
	--disable-libcurl-option --disable-progress-meter --disable-versioned-symbols
	--without-libpsl --without-brotli --without-zstd --without-libidn2
	--without-librtmp --without-libssh --without-libssh2 --without-libgsasl
	--without-nghttp3 --without-ngtcp2 --without-quiche --without-msh3
	--without-hyper --without-gssapi)
curl_key="$(cat "$STAMPS/source-curl") $TRANSPORT_CFLAGS ${CURL_OPTS[*]} $(cat "$STAMPS/openssl" "$STAMPS/nghttp2" "$STAMPS/zlib" "$TP"/curl/*.patch | md5sum)"
if ! stamp_ok curl "$curl_key" "$PREFIX/lib/libcurl.a"; then
	build_curl() {
		rm -rf "$OBJ/curl" "$PREFIX/include/curl" "$PREFIX/lib/libcurl.a"
		cp -a "$SRC/curl" "$OBJ/curl"
		cd "$OBJ/curl"
		# Debian's last two patches turn the tree into libcurl-nss and
		# libcurl-gnutls; its own OpenSSL build reverses them, so do we
		# (the CVE fixes before them stay applied).
		patch -R -p1 <debian/patches/99_nss.patch
		patch -R -p1 <debian/patches/90_gnutls.patch
		# Our fixes on top (third_party/curl/*.patch, each says why).
		local p
		for p in "$TP"/curl/*.patch; do
			patch -p1 <"$p"
		done
		"${TRANSPORT_ENV[@]}" CPPFLAGS="-I$PREFIX/include" \
			LDFLAGS="-L$PREFIX/lib" ./configure --prefix="$PREFIX" \
			--libdir="$PREFIX/lib" "${CURL_OPTS[@]}"
		make -j"$JOBS" -C lib
		make -C lib install
		make -C include install
	}
	run_step curl build_curl
	stamp_set curl "$curl_key"
fi

# mimalloc: malloc and friends for `make ALLOC=mimalloc` (see
# third_party/mimalloc.mk), one object built from its src/static.c.
mimalloc_key="$(cat "$STAMPS/source-mimalloc") $DEPS_CFLAGS $(md5sum <"$TP/mimalloc.mk")"
if ! stamp_ok mimalloc "$mimalloc_key" "$PREFIX/lib/libmimalloc.a"; then
	build_mimalloc() {
		rm -rf "$OBJ/mimalloc"
		make -f "$TP/mimalloc.mk" SRCDIR="$SRC/mimalloc" OBJDIR="$OBJ/mimalloc" \
			PREFIX="$PREFIX" DEPS_CFLAGS="$DEPS_CFLAGS" install
	}
	run_step mimalloc build_mimalloc
	stamp_set mimalloc "$mimalloc_key"
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
