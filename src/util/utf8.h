/* utf8.h - UTF-8 validation and decoding, the one rule every writer of text
 * formats (JSON, XML/SVG, report text, folded) and every reader of foreign
 * names (perf maps) uses: no overlong forms, no surrogates, nothing past
 * U+10FFFF.
 */
#ifndef PROFCAP_UTIL_UTF8_H
#define PROFCAP_UTIL_UTF8_H

#include <stddef.h>
#include <linux/types.h>

/* Length (1-4) of the well-formed UTF-8 sequence at @s, of which at most
 * @len bytes may be read (@len >= 1); 0 when the bytes there are not valid
 * UTF-8 (overlong, surrogate, truncated). *@cp gets the code point when
 * @cp is not NULL and the sequence is valid. */
size_t utf8__decode(const char *s, size_t len, __u32 *cp);

/* utf8__decode() of NUL-terminated @s, which must not be at its NUL (the
 * NUL ends a truncated sequence). Lets writers of XML and JSON replace bad
 * bytes. */
size_t utf8__seq(const char *s);

/* Length of the printable character at @s (@len >= 1 bytes readable): a
 * valid sequence that is not a C0 control or DEL; 0 otherwise. */
size_t utf8__printable(const char *s, size_t len);

/* Copy @len bytes of @src to @dst as valid UTF-8 without control
 * characters: each byte that does not start a printable character becomes
 * @repl. Same length; @dst may be @src. */
void utf8__sanitize(char *dst, const char *src, size_t len, char repl);

#endif
