/* hex.h - bytes to and from lower-case hex text: build-ids, trace and span
 * ids, the HTL hash of debug files.
 */
#ifndef PROFCAP_UTIL_HEX_H
#define PROFCAP_UTIL_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Writes the @n bytes of @v as 2 * @n lower-case hex digits and a NUL into
 * @out, which the caller sizes for 2 * @n + 1 characters. Cannot fail. */
void hex__encode(char *out, const __u8 *v, size_t n);

/* Decodes NUL-terminated @s, which must be exactly 2 * @n hex digits (either
 * case), into the @n bytes of @out. False (and @out partly written) when
 * the length is wrong or a character is not a hex digit. */
bool hex__decode(const char *s, __u8 *out, size_t n);

#endif
