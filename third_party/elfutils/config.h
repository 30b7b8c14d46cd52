/* config.h - hand-written elfutils configuration for libelf and libdw.
 *
 * elfutils' ./configure does not run under musl (it wants argp, fts and
 * obstack for the tools), so third_party/elfutils.mk compiles only the
 * library sources (libelf, libdw, libdwelf) with this file in place of the
 * generated one. Values describe musl 1.2.x on Linux, built with
 * -D_GNU_SOURCE. USE_LOCKS stays off: this libelf is not thread-safe, so
 * callers serialise their use of one Elf handle.
 */
#ifndef PROFCAP_ELFUTILS_CONFIG_H
#define PROFCAP_ELFUTILS_CONFIG_H

#define PACKAGE "elfutils"
#define PACKAGE_NAME "elfutils"
#define PACKAGE_TARNAME "elfutils"
#define PACKAGE_VERSION "0.192"
#define PACKAGE_STRING "elfutils 0.192"
#define PACKAGE_BUGREPORT ""
#define PACKAGE_URL ""
#define VERSION "0.192"

/* musl has err.h but not glibc's error.h. */
#define HAVE_ERR_H 1

/* Declared by musl's <string.h>, <stdlib.h>, <sys/param.h> (_GNU_SOURCE). */
#define HAVE_DECL_MEMPCPY 1
#define HAVE_DECL_MEMRCHR 1
#define HAVE_DECL_RAWMEMCHR 0
#define HAVE_DECL_REALLOCARRAY 1
#define HAVE_DECL_POWEROF2 1
#define HAVE_MREMAP 1

/* gcc features. */
#define HAVE_VISIBILITY 1
#define HAVE_FALLTHROUGH 1
/* gcc's <stdatomic.h> (libdw's allocator and CU tables). */
#define HAVE_STDATOMIC_H 1

/* Compressed sections (SHF_COMPRESSED, .zdebug) via the static zlib. */
#define USE_ZLIB 1
/* No zstd library is built: zstd-compressed sections (ELFCOMPRESS_ZSTD)
 * fail to decompress with an error, as in an elfutils built without it. */

#include <eu-config.h>

#endif
