/* json.h - JSON string literals for the text outputs (reports, log events). */
#ifndef PROFCAP_UTIL_JSON_H
#define PROFCAP_UTIL_JSON_H

#include <stdio.h>

/* Write @s to @f as a JSON string literal: quotes, backslashes and control
 * characters escaped, bytes that are not UTF-8 replaced by U+FFFD; NULL is
 * written as null. */
void json__fput_str(FILE *f, const char *s);

#endif
