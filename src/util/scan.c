#include "util/scan.h"

int scan__hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool scan__hex(const char **p, const char *end, __u64 *val)
{
	const char *s = *p;
	__u64 v = 0;
	int digits = 0, d;

	for (; s < end && (d = scan__hex_digit(*s)) >= 0; s++) {
		if (++digits > 16)
			return false;
		v = v << 4 | (__u64)d;
	}
	if (!digits)
		return false;
	*p = s;
	*val = v;
	return true;
}

bool scan__dec(const char **p, const char *end, __u64 *val)
{
	const char *s = *p;
	__u64 v = 0;
	int digits = 0;

	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		__u64 d = (__u64)(*s - '0');

		if (v > (~0ULL - d) / 10)
			return false;
		v = v * 10 + d;
		digits++;
	}
	if (!digits)
		return false;
	*p = s;
	*val = v;
	return true;
}
