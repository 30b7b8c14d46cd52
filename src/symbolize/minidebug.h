/* minidebug.h - decompress MiniDebugInfo (.gnu_debugdata, xz).
 *
 * Fedora and others ship each binary with a small xz-compressed ELF image
 * in .gnu_debugdata holding the .symtab entries .dynsym lacks. This module
 * only decompresses (liblzma, decoder only); elfsym reads the image.
 * Bounded: output above @cap fails, liblzma's memory use is capped.
 */
#ifndef PROFCAP_MINIDEBUG_H
#define PROFCAP_MINIDEBUG_H

#include <stddef.h>

#define MINIDEBUG_MAX_IMAGE (64u << 20)

/* Decompress the xz stream of @len bytes at @in. *@out gets a new malloc'd
 * buffer (owned by the caller) of *@out_len bytes. 0, -EBADMSG (not xz,
 * corrupt or truncated), -E2BIG (larger than @cap) or -ENOMEM. */
int minidebug__decompress(const void *in, size_t len, size_t cap, void **out, size_t *out_len);

#endif
