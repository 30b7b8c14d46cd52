/* utf8.h - UTF-8 validation, the one rule every writer of text formats
 * (JSON, XML/SVG, report text) and every reader of foreign names uses.
 */
#ifndef PROFCAP_UTIL_UTF8_H
#define PROFCAP_UTIL_UTF8_H

#include <stddef.h>

/* Length (1-4) of the well-formed UTF-8 sequence at @s, which must not be at
 * its terminating NUL; 0 when the bytes there are not valid UTF-8 (overlong,
 * surrogate, truncated). Lets writers of XML and JSON replace bad bytes. */
size_t utf8__seq(const char *s);

#endif
