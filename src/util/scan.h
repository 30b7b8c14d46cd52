/* scan.h - bounded number scanning for the text files profcap parses
 * (/proc/PID/maps, /proc/kallsyms, perf maps).
 *
 * Every function reads [*p, end) only, needs no NUL terminator, and on success
 * advances *p past what it consumed. On failure *p and *val are left alone.
 */
#ifndef PROFCAP_SCAN_H
#define PROFCAP_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* The value of hex digit @c (either case), or -1 when @c is not one. */
int scan__hex_digit(char c);

/* Hex digits (either case, no "0x") up to the first non-hex byte.
 * False when there is no digit or the value needs more than 16 digits. */
bool scan__hex(const char **p, const char *end, __u64 *val);

/* Decimal digits up to the first non-digit.
 * False when there is no digit or the value does not fit in 64 bits. */
bool scan__dec(const char **p, const char *end, __u64 *val);

/* Decode base64 (standard or URL-safe alphabet, padding and trailing white
 * space optional: gRPC "-bin" headers, OTLP/JSON bytes) @in of @len bytes
 * into @out (@outlen bytes; may be @in itself, decoding in place). Returns
 * the decoded length or -EINVAL (bad character) / -ENOSPC. */
int scan__base64(const char *in, size_t len, unsigned char *out, size_t outlen);

/* True when NUL-terminated @s is not empty and @ok (a <ctype.h>-style test,
 * given each byte as an unsigned char) holds for every byte of it: a PID
 * directory name (isdigit), an HTTP token. */
bool scan__all(const char *s, int (*ok)(int c));

#endif
