#include <errno.h>
#include <string.h>

#include "symbolize/debuglink.h"

int debuglink__parse(const void *data, size_t size, bool swap, char *name,
			       size_t name_size, __u32 *crc)
{
	size_t len, crc_off;
	__u32 v;

	if (!data || !size)
		return -EBADMSG;
	len = strnlen(data, size);
	if (!len || len == size || len >= name_size)
		return -EBADMSG;
	if (memchr(data, '/', len) || !strcmp(data, "..") || !strcmp(data, "."))
		return -EBADMSG;
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (crc_off > size || size - crc_off < 4)
		return -EBADMSG;
	memcpy(name, data, len + 1);
	memcpy(&v, (const char *)data + crc_off, 4);
	*crc = swap ? __builtin_bswap32(v) : v;
	return 0;
}
