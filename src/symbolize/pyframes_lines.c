/* pyframes_lines.c - the line of an instruction from a code object's line
 * table, in each format CPython has used: co_lnotab (2.7 to 3.9, byte
 * offsets), 3.10's co_linetable (byte ranges) and the location table of
 * 3.11+ (varint entries over code units). Pure code over untrusted bytes:
 * every read is bounded by the table. */
#include <stdbool.h>

#include "proc/pyproc.h"
#include "symbolize/pyframes.h"

/* co_lnotab: (address increment, line increment) byte pairs; the line
 * increment is signed from 3.6 on. */
static __s64 lnotab(const unsigned char *t, size_t len, __s64 line, __u64 lasti, bool sign)
{
	__u64 addr = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > lasti)
			break;
		line += sign ? (__s64)(signed char)t[i + 1] : (__s64)t[i + 1];
	}
	return line;
}

/* 3.10: (byte range length, line delta) pairs; a delta of -128 means the
 * range has no line. */
static __s64 linetable310(const unsigned char *t, size_t len, __s64 line, __u64 offset)
{
	__u64 start = 0, end;
	bool none;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		end = start + t[i];
		none = (signed char)t[i + 1] == -128;
		if (!none)
			line += (signed char)t[i + 1];
		if (offset >= start && offset < end)
			return none ? 0 : line;
		start = end;
	}
	return 0;
}

/* A varint of 6-bit chunks, bit 6 set on all but the last. */
static bool varint(const unsigned char *t, size_t len, size_t *i, __u64 *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*i < len && shift < 60) {
		unsigned char b = t[(*i)++];

		*v |= (__u64)(b & 63) << shift;
		if (!(b & 64))
			return true;
		shift += 6;
	}
	return false;
}

static bool svarint(const unsigned char *t, size_t len, size_t *i, __s64 *v)
{
	__u64 u;

	if (!varint(t, len, i, &u))
		return false;
	*v = (u & 1) ? -(__s64)(u >> 1) : (__s64)(u >> 1);
	return true;
}

/* 3.11+: entries of a first byte (bit 7 set, code in bits 3-6, code
 * units - 1 in bits 0-2) and code-dependent data. */
static __s64 locations(const unsigned char *t, size_t len, __s64 line, __u64 unit)
{
	__u64 start = 0, skip;
	size_t i = 0;
	__s64 delta;
	unsigned code;
	int k;

	while (i < len) {
		unsigned char b = t[i++];

		if (!(b & 0x80))
			return 0; /* not at an entry: corrupt */
		code = (b >> 3) & 15;
		delta = 0;
		if (code == 15) {
			/* no location */
		} else if (code == 14) {
			if (!svarint(t, len, &i, &delta))
				return 0;
			for (k = 0; k < 3; k++)
				if (!varint(t, len, &i, &skip))
					return 0;
		} else if (code == 13) {
			if (!svarint(t, len, &i, &delta))
				return 0;
		} else if (code >= 10) {
			delta = code - 10;
			i += 2;
		} else {
			i += 1;
		}
		line += delta;
		if (unit >= start && unit < start + (b & 7) + 1)
			return code == 15 ? 0 : line;
		start += (b & 7) + 1;
	}
	return 0;
}

__s64 pyframes__line(__u32 version, __u16 code_bytecode, const void *table, size_t len,
		     __s64 firstlineno, __u32 offset)
{
	const unsigned char *t = table;
	__s64 line;

	if (!t && len)
		return 0;
	if (version < 0x030a) {
		/* f_lasti: a byte offset; -1 before the first instruction */
		if ((__s32)offset < 0)
			return firstlineno;
		line = lnotab(t, len, firstlineno, offset, version >= 0x0306);
		return line > 0 ? line : 0;
	}
	if (version == 0x030a) {
		/* f_lasti counts code units */
		if ((__s32)offset < 0)
			return firstlineno;
		line = linetable310(t, len, firstlineno, (__u64)offset * 2);
		return line > 0 ? line : 0;
	}
	/* the frame's instruction pointer minus the code object: before the
	 * first instruction (a frame being set up) is its first line */
	if (code_bytecode == PYPROC_NONE || offset < code_bytecode)
		return firstlineno;
	line = locations(t, len, firstlineno, (offset - code_bytecode) / 2);
	return line > 0 ? line : 0;
}
