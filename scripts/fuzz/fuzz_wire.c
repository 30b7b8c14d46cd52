/* fuzz_wire.c - libFuzzer harness for util/wire.h, the protobuf field
 * reader under every decoder: the input is walked as a message, each
 * length-delimited field again as a nested one (to a fixed depth) and as
 * packed lists. Nothing may crash or read out of bounds, a sub-reader must
 * lie inside its parent, and a failed reader must stay failed. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/wire.h"

#define MAX_DEPTH 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *arg, __u64 v)
{
	(void)v;
	(*(size_t *)arg)++;
	return 0;
}

static void walk(struct wire w, int depth)
{
	const __u8 *start = wire__pos(&w), *end = start + wire__left(&w);
	struct wire_field f;
	size_t n;
	int ret;

	while ((ret = wire__next(&w, &f)) > 0) {
		if (wire__pos(&w) < start || wire__pos(&w) > end)
			abort();
		if (f.wt != WIRE_VARINT && f.wt != WIRE_I64 && f.wt != WIRE_I32 && f.wt != WIRE_LEN)
			abort();
		n = 0;
		ret = wire__each_varint(&f, count, &n);
		if (ret && ret != -EBADMSG && ret != -EPROTOTYPE)
			abort();
		ret = wire__count_fixed64(&f, &n);
		if (ret && ret != -EBADMSG && ret != -EPROTOTYPE)
			abort();
		if (f.wt != WIRE_LEN)
			continue;
		if (wire__left(&f.sub) &&
		    (wire__pos(&f.sub) < start || wire__pos(&f.sub) + wire__left(&f.sub) > end))
			abort();
		if (depth < MAX_DEPTH)
			walk(f.sub, depth + 1);
	}
	if (ret < 0 && (wire__next(&w, &f) != -EBADMSG || !wire__why(&w)[0]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	walk(wire__from(data, size), 0);
	return 0;
}
