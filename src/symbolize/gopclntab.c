#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/gopclntab.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u
#define MAGIC_12 0xfffffffbu /* Go 1.2 - 1.15 */
#define MAX_NAME 4096

struct reader {
	const unsigned char *p;
	size_t size;
	bool big;
	unsigned ptr; /* 4 or 8 */
};

/* Read an unsigned @w-byte value at @off into *@v; false when outside. */
static bool rd(const struct reader *r, __u64 off, unsigned w, __u64 *v)
{
	unsigned i;

	if (off > r->size || w > r->size - off)
		return false;
	*v = 0;
	for (i = 0; i < w; i++) {
		unsigned b = r->p[off + (r->big ? i : w - 1 - i)];

		*v = *v << 8 | b;
	}
	return true;
}

/* Name at @off of the function-name table starting at @tab. */
static const char *name_at(const struct reader *r, __u64 tab, __u64 off)
{
	const char *s;

	if (tab > r->size || off >= r->size - tab)
		return NULL;
	s = (const char *)r->p + tab + off;
	if (!memchr(s, '\0', r->size - tab - off < MAX_NAME ? r->size - tab - off : MAX_NAME))
		return NULL;
	return *s ? s : NULL;
}

static int cmp_func(const void *a, const void *b)
{
	const struct gopclntab_func *x = a, *y = b;

	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

int gopclntab__parse(const void *data, size_t size, __u64 text_addr, size_t max,
		     struct gopclntab_func **out, size_t *n)
{
	struct reader r = {.p = data, .size = size};
	__u64 magic, nfunc, text = 0, nameoff, pclnoff, i;
	struct gopclntab_func *f = NULL;
	unsigned fw; /* width of a functab field */
	size_t cnt = 0;
	bool v116;
	int err = -EBADMSG;

	*out = NULL;
	*n = 0;
	if (!data || size < 8)
		return -EBADMSG;
	r.ptr = r.p[7];
	if (r.p[4] || r.p[5] || (r.ptr != 4 && r.ptr != 8))
		return -EBADMSG;
	rd(&r, 0, 4, &magic);
	if (magic != MAGIC_116 && magic != MAGIC_118 && magic != MAGIC_120 && magic != MAGIC_12) {
		r.big = true;
		rd(&r, 0, 4, &magic);
	}
	if (magic == MAGIC_12)
		return -ENOTSUP;
	if (magic != MAGIC_116 && magic != MAGIC_118 && magic != MAGIC_120)
		return -EBADMSG;
	v116 = magic == MAGIC_116;
	/* Header words after the 8 fixed bytes: nfunc, nfiles, [textStart,]
	 * funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset. */
	if (!rd(&r, 8, r.ptr, &nfunc))
		return -EBADMSG;
	if (v116) {
		if (!rd(&r, 8 + 2 * r.ptr, r.ptr, &nameoff) || !rd(&r, 8 + 6 * r.ptr, r.ptr, &pclnoff))
			return -EBADMSG;
		fw = r.ptr;
	} else {
		if (!rd(&r, 8 + 2 * r.ptr, r.ptr, &text) || !rd(&r, 8 + 3 * r.ptr, r.ptr, &nameoff) ||
		    !rd(&r, 8 + 7 * r.ptr, r.ptr, &pclnoff))
			return -EBADMSG;
		if (!text)
			text = text_addr;
		fw = 4;
	}
	/* The function table: nfunc (entry, funcoff) pairs and the end PC. */
	if (!nfunc || pclnoff > size || nfunc > (size - pclnoff) / (2 * fw))
		return -EBADMSG;
	if (nfunc > max)
		nfunc = max;
	f = calloc(nfunc, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (i = 0; i < nfunc; i++) {
		__u64 entry, funcoff, next, noff;
		const char *name;

		if (!rd(&r, pclnoff + 2 * i * fw, fw, &entry) ||
		    !rd(&r, pclnoff + (2 * i + 1) * fw, fw, &funcoff) ||
		    !rd(&r, pclnoff + (2 * i + 2) * fw, fw, &next))
			goto out;
		/* _func: entry (uintptr in 1.16, uint32 offset after), nameoff. */
		if (pclnoff > size || funcoff > size - pclnoff ||
		    !rd(&r, pclnoff + funcoff + fw, 4, &noff))
			goto out;
		if (!v116) {
			entry += text;
			next += text;
		}
		name = name_at(&r, nameoff, (__u32)noff);
		if (!name || next <= entry)
			continue;
		f[cnt].entry = entry;
		f[cnt].end = next;
		f[cnt].name = name;
		cnt++;
	}
	qsort(f, cnt, sizeof(*f), cmp_func);
	*out = f;
	*n = cnt;
	f = NULL;
	err = 0;
out:
	free(f);
	return err;
}
