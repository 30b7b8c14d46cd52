/* fuzz_perfmap.c - libFuzzer harness for perfmap__add_text(), the reader of
 * /tmp/perf-PID.map files that any profiled process writes (hostile input).
 * The input is fed in two pieces (split at a point taken from its first
 * byte), as appends to the file arrive; lookups must return symbols that
 * contain the address, with a NUL-terminated name. Caps are small so that
 * the segment limit is reached too. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int feed(struct perfmap *m, const char *text, size_t len)
{
	size_t used = 0;
	int ret = perfmap__add_text(m, text, len, &used);

	if (used > len || (ret && ret != -E2BIG && ret != -ENOMEM))
		abort();
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *m;
	size_t cut, i, n;

	if (!size)
		return 0;
	cut = size > 1 ? (size_t)data[0] * (size - 1) / 255 : 0;
	m = perfmap__new_limited(1 << 20, 8);
	if (!m)
		return 0;
	data++;
	size--;
	if (feed(m, (const char *)data, cut < size ? cut : size) != -E2BIG && cut < size)
		feed(m, (const char *)data + cut, size - cut);
	n = perfmap__count(m);
	for (i = 0; i < n; i++) {
		const struct perfmap_sym *s = perfmap__sym(m, i), *l;

		if (!s->name || s->start >= s->end)
			abort();
		(void)strlen(s->name);
		l = perfmap__lookup(m, s->start);
		if (!l || l->start > s->start || s->start >= l->end)
			abort();
	}
	perfmap__free(m);
	return 0;
}
