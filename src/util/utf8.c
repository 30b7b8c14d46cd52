/* utf8.c - UTF-8 validation and decoding (see utf8.h). */
#include <stdint.h>
#include <string.h>

#include "util/utf8.h"

size_t utf8__decode(const char *s, size_t len, __u32 *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i;
	__u32 c;

	if (u[0] < 0x80) {
		n = 1;
		c = u[0];
		goto out;
	}
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		n = 2;
		c = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		n = 3;
		c = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		n = 4;
		c = u[0] & 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80) /* also stops at a NUL */
			return 0;
		c = (c << 6) | (u[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
out:
	if (cp)
		*cp = c;
	return n;
}

size_t utf8__seq(const char *s)
{
	return utf8__decode(s, SIZE_MAX, NULL);
}

size_t utf8__printable(const char *s, size_t len)
{
	unsigned char c = (unsigned char)*s;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0x80)
		return 0;
	return utf8__decode(s, len, NULL);
}

void utf8__sanitize(char *dst, const char *src, size_t len, char repl)
{
	size_t i = 0, n;

	while (i < len) {
		n = utf8__printable(src + i, len - i);
		if (!n) {
			dst[i++] = repl;
			continue;
		}
		if (dst != src)
			memcpy(dst + i, src + i, n);
		i += n;
	}
}
