/* debuglink.h - parse a .gnu_debuglink section (pure: no I/O).
 *
 * The name in it becomes part of a path profcap opens, so it is checked
 * strictly: a base name only. debugfile.h uses the result.
 */
#ifndef PROFCAP_DEBUGLINK_H
#define PROFCAP_DEBUGLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define DEBUGLINK_MAX_NAME 256 /* longest name kept, NUL included */

/* Parse the contents of a .gnu_debuglink section (@size bytes at @data): a
 * NUL-terminated base name, zero padding to a multiple of 4, a 4-byte CRC32
 * in the file's byte order (@swap: not the host's). @name (@name_size
 * bytes) gets the name, *@crc the CRC. 0, or -EBADMSG when malformed (no
 * NUL, empty, too long, a '/' or "..", or no room for the CRC). */
int debuglink__parse(const void *data, size_t size, bool swap, char *name,
			       size_t name_size, __u32 *crc);

#endif
