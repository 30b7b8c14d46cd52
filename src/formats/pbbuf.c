#include <stdint.h>

#include "formats/pbbuf.h"

static bool pbbuf_write(pb_ostream_t *s, const pb_byte_t *data, size_t n)
{
	struct pbbuf *k = s->state;
	int err = buf__append(k->b, data, n);

	if (err) {
		k->err = err;
		return false;
	}
	return true;
}

pb_ostream_t pbbuf__stream(struct pbbuf *k)
{
	pb_ostream_t s = {.callback = pbbuf_write, .state = k, .max_size = SIZE_MAX};

	return s;
}

size_t pbbuf__varint_len(__u64 v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}
