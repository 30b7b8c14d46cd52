/* gopclntab.c - Go function names through collect/'s pclntab reader (see
 * gopclntab.h). */
#include <errno.h>
#include <stdlib.h>

#include "collect/gopcln.h"
#include "symbolize/gopclntab.h"

static int cmp_func(const void *a, const void *b)
{
	const struct gopclntab_func *x = a, *y = b;

	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

int gopclntab__parse(const void *data, size_t size, __u64 text_addr, size_t max,
		     struct gopclntab_func **out, size_t *n)
{
	struct gopclntab_func *f = NULL;
	struct gopcln_func gf;
	struct gopcln g;
	__u64 i, nfunc;
	size_t cnt = 0;
	int err;

	*out = NULL;
	*n = 0;
	err = gopcln__init(&g, data, size, text_addr);
	if (err)
		return err;
	nfunc = g.nfunc < max ? g.nfunc : max;
	f = calloc(nfunc ? nfunc : 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (i = 0; i < nfunc; i++) {
		const char *name;

		err = gopcln__func(&g, i, &gf);
		if (err)
			goto out;
		name = gopcln__name(&g, &gf);
		if (!name || gf.end <= gf.entry)
			continue;
		f[cnt].entry = gf.entry;
		f[cnt].end = gf.end;
		f[cnt].name = name;
		cnt++;
	}
	qsort(f, cnt, sizeof(*f), cmp_func);
	*out = f;
	*n = cnt;
	f = NULL;
out:
	free(f);
	return err;
}

int gopclntab__parse_data(const void *ro, size_t ro_size, __u64 ro_addr, const void *rela,
			  size_t rela_size, size_t max, struct gopclntab_func **out, size_t *n)
{
	size_t off;
	__u64 text;

	*out = NULL;
	*n = 0;
	if (gopcln__find_in_data(ro, ro_size, ro_addr, rela, rela_size, &off, &text))
		return -ENOENT;
	return gopclntab__parse((const char *)ro + off, ro_size - off, text, max, out, n);
}
