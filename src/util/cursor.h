/* cursor.h - bounds-checked reads of little-endian binary data (call-frame
 * information, DWARF line programs): a cursor over [p, end) that turns bad,
 * and stays bad, instead of reading past the end. A bad cursor reads 0.
 * Inline: the CFA and line-program loops call these for every operand.
 */
#ifndef PROFCAP_UTIL_CURSOR_H
#define PROFCAP_UTIL_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct cursor {
	const __u8 *p, *end;
	bool bad;
};

/* An unsigned little-endian number of @n bytes (n <= 8). */
static inline __u64 cursor__fixed(struct cursor *c, unsigned int n)
{
	__u64 v = 0;
	unsigned int i;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (__u64)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

/* A LEB128 number, sign-extended when @is_signed; bits past 64 dropped. */
static inline __u64 cursor__leb(struct cursor *c, bool is_signed)
{
	__u64 v = 0;
	unsigned int shift = 0;
	__u8 b = 0;

	while (!c->bad) {
		if (c->p >= c->end) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (__u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return v;
}

static inline __u64 cursor__uleb(struct cursor *c)
{
	return cursor__leb(c, false);
}

static inline __s64 cursor__sleb(struct cursor *c)
{
	return (__s64)cursor__leb(c, true);
}

#endif
