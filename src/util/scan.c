#include <ctype.h>
#include <errno.h>

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

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int scan__base64(const char *in, size_t len, unsigned char *out, size_t outlen)
{
	unsigned int acc = 0, bits = 0;
	size_t o = 0;
	int v;

	while (len && (in[len - 1] == '=' || isspace((unsigned char)in[len - 1])))
		len--;
	for (size_t i = 0; i < len; i++) {
		v = b64val(in[i]);
		if (v < 0)
			return -EINVAL;
		acc = (acc << 6 | (unsigned int)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == outlen)
				return -ENOSPC;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	/* A lone trailing sextet cannot encode a byte. */
	if (bits >= 6)
		return -EINVAL;
	return (int)o;
}

bool scan__all(const char *s, int (*ok)(int c))
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!ok((unsigned char)*s))
			return false;
	return true;
}
