#include <string.h>

#include "util/hex.h"
#include "util/scan.h"

void hex__encode(char *out, const __u8 *v, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[v[i] >> 4];
		out[2 * i + 1] = digits[v[i] & 15];
	}
	out[2 * n] = '\0';
}

bool hex__decode(const char *s, __u8 *out, size_t n)
{
	size_t i;

	if (strlen(s) != 2 * n)
		return false;
	for (i = 0; i < n; i++) {
		int hi = scan__hex_digit(s[2 * i]), lo = scan__hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (__u8)(hi << 4 | lo);
	}
	return true;
}
