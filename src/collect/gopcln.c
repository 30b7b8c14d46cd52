/* gopcln.c - the Go runtime's function table (see gopcln.h). */
#include <errno.h>
#include <string.h>

#include "util/cursor.h"
#include "collect/gopcln.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u
#define MAGIC_12 0xfffffffbu /* Go 1.2 - 1.15 */
#define MAX_NAME 4096

/* An unsigned @w-byte value at @off into *@v; false when outside. */
static bool rd(const struct gopcln *g, __u64 off, unsigned int w, __u64 *v)
{
	unsigned int i;

	if (off > g->size || w > g->size - off)
		return false;
	*v = 0;
	for (i = 0; i < w; i++)
		*v = *v << 8 | g->p[off + (g->big ? i : w - 1 - i)];
	return true;
}

int gopcln__init(struct gopcln *g, const void *data, size_t size, __u64 text_addr)
{
	__u64 magic = 0, hdr;

	memset(g, 0, sizeof(*g));
	g->p = data;
	g->size = size;
	if (!data || size < 8)
		return -EBADMSG;
	g->ptr = g->p[7];
	if (g->p[4] || g->p[5] || (g->ptr != 4 && g->ptr != 8))
		return -EBADMSG;
	rd(g, 0, 4, &magic);
	if (magic != MAGIC_116 && magic != MAGIC_118 && magic != MAGIC_120 && magic != MAGIC_12) {
		g->big = true;
		rd(g, 0, 4, &magic);
	}
	if (magic == MAGIC_12)
		return -ENOTSUP;
	if (magic != MAGIC_116 && magic != MAGIC_118 && magic != MAGIC_120)
		return -EBADMSG;
	g->magic = (__u32)magic;
	/* Header words after the 8 fixed bytes: nfunc, nfiles, [textStart,]
	 * funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset. */
	hdr = magic == MAGIC_116 ? 8 + 2 * g->ptr : 8 + 3 * g->ptr;
	if (!rd(g, 8, g->ptr, &g->nfunc) || !rd(g, hdr, g->ptr, &g->nameoff) ||
	    !rd(g, hdr + 3 * g->ptr, g->ptr, &g->pctaboff) ||
	    !rd(g, hdr + 4 * g->ptr, g->ptr, &g->pclnoff))
		return -EBADMSG;
	if (magic == MAGIC_116) {
		/* _func: entry (uintptr), nameoff, args, deferreturn, pcsp,
		 * pcfile, pcln, npcdata, cuOffset, funcID, flag (1.17). */
		g->fw = g->ptr;
		g->flagoff = g->fw + 33;
	} else {
		if (!rd(g, 8 + 2 * g->ptr, g->ptr, &g->text))
			return -EBADMSG;
		if (!g->text)
			g->text = text_addr;
		/* entryoff is 4 bytes; 1.20 adds startLine before funcID. */
		g->fw = 4;
		g->flagoff = magic == MAGIC_118 ? 37 : 41;
	}
	/* The function table: nfunc (entry, funcoff) pairs and the end PC. */
	if (!g->nfunc || g->pclnoff > size || g->nfunc > (size - g->pclnoff) / (2 * g->fw))
		return -EBADMSG;
	return 0;
}

int gopcln__func(const struct gopcln *g, __u64 i, struct gopcln_func *f)
{
	__u64 at = g->pclnoff + 2 * i * g->fw;

	if (i >= g->nfunc || !rd(g, at, g->fw, &f->entry) ||
	    !rd(g, at + g->fw, g->fw, &f->funcoff) || !rd(g, at + 2 * g->fw, g->fw, &f->end))
		return -EBADMSG;
	f->entry += g->text;
	f->end += g->text;
	return 0;
}

/* A field of @f's _func record at @off, @w bytes; false when outside. */
static bool func_field(const struct gopcln *g, const struct gopcln_func *f, unsigned int off,
		       unsigned int w, __u64 *v)
{
	if (f->funcoff > g->size - g->pclnoff)
		return false;
	return rd(g, g->pclnoff + f->funcoff + off, w, v);
}

const char *gopcln__name(const struct gopcln *g, const struct gopcln_func *f)
{
	__u64 noff, at;
	const char *s;
	size_t left;

	if (!func_field(g, f, g->fw, 4, &noff))
		return NULL;
	at = g->nameoff + (__u32)noff;
	if (g->nameoff > g->size || (__u32)noff >= g->size - g->nameoff)
		return NULL;
	s = (const char *)g->p + at;
	left = g->size - at;
	if (!memchr(s, '\0', left < MAX_NAME ? left : MAX_NAME))
		return NULL;
	return *s ? s : NULL;
}

/* Go 1.16 has no flags: the functions that carry them from 1.17 on. */
static unsigned int flags_by_name(const char *name)
{
	static const char *const top[] = {"goexit", "mstart", "rt0_go", "sigtramp", NULL};
	static const char *const spw[] = {"systemstack", "mcall", "morestack", "asmcgocall",
					  "cgocallback", "gogo",  NULL};
	unsigned int i;

	if (!name || strncmp(name, "runtime.", 8))
		return 0;
	for (i = 0; top[i]; i++)
		if (!strcmp(name + 8, top[i]))
			return GOPCLN_TOPFRAME;
	for (i = 0; spw[i]; i++)
		if (!strcmp(name + 8, spw[i]))
			return GOPCLN_SPWRITE;
	return 0;
}

unsigned int gopcln__flags(const struct gopcln *g, const struct gopcln_func *f)
{
	__u64 flag = 0;

	if (!func_field(g, f, g->flagoff, 1, &flag))
		return 0;
	if (g->magic == MAGIC_116 && !flag)
		return flags_by_name(gopcln__name(g, f));
	return (unsigned int)flag & (GOPCLN_TOPFRAME | GOPCLN_SPWRITE);
}

int gopcln__pcsp(const struct gopcln *g, const struct gopcln_func *f, struct gopcln_pcsp *it)
{
	__u64 off;

	memset(it, 0, sizeof(*it));
	/* _func: entry, nameoff, args, deferreturn, then pcsp. */
	if (!func_field(g, f, g->fw + 12, 4, &off) || !off || g->pctaboff > g->size ||
	    off >= g->size - g->pctaboff)
		return -ENOENT;
	it->p = g->p + g->pctaboff + off;
	it->end = g->p + g->size;
	it->pc = f->entry;
	it->limit = f->end;
	it->val = -1;
	it->first = true;
	return 0;
}

/* Each step of a pc-value table: the value's change (zig-zag varint; a 0
 * byte after the first step ends the table), then the length of the range
 * that has the new value (varint, in bytes on x86_64). */
bool gopcln__pcsp_next(struct gopcln_pcsp *it, __u64 *start, __u64 *end, __s64 *sp)
{
	struct cursor c = {it->p, it->end, false};
	__u64 uv, len;

	if (it->bad || it->pc >= it->limit || it->p >= it->end || (!*it->p && !it->first))
		return false;
	uv = cursor__uleb(&c);
	len = cursor__uleb(&c);
	if (c.bad || !len || len > it->limit - it->pc || uv > 0xffffffffull) {
		it->bad = true;
		return false;
	}
	it->val += (__s64)(__s32)((__u32)(uv >> 1) ^ -(__u32)(uv & 1));
	it->p = c.p;
	it->first = false;
	*start = it->pc;
	it->pc += len;
	*end = it->pc;
	*sp = it->val;
	return true;
}

size_t gopcln__scan(const void *data, size_t size, size_t from)
{
	static const __u8 m118[] = {0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8};
	static const __u8 m120[] = {0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8};
	const __u8 *p = data;
	struct gopcln g;
	size_t off;

	for (off = (from + 7) & ~(size_t)7; off < size && size - off >= 64; off += 8) {
		if (memcmp(p + off, m118, 8) && memcmp(p + off, m120, 8))
			continue;
		/* A header whose tables follow it in order, inside the data. */
		if (!gopcln__init(&g, p + off, size - off, 1) && g.nameoff >= 64 &&
		    g.nameoff < g.pctaboff && g.pctaboff < g.pclnoff)
			return off;
	}
	return size;
}

/* The addend of the R_X86_64_RELATIVE relocation of address @at in
 * .rela.dyn, or 0. */
static __u64 relative_at(const __u8 *rela, size_t size, __u64 at)
{
	struct cursor c = {rela, rela + size - size % 24, false};

	while (c.p < c.end) {
		__u64 off = cursor__fixed(&c, 8), info = cursor__fixed(&c, 8);
		__u64 addend = cursor__fixed(&c, 8);

		if (off == at && (info & 0xffffffffu) == 8 /* R_X86_64_RELATIVE */)
			return addend;
	}
	return 0;
}

int gopcln__find_in_data(const void *ro, size_t ro_size, __u64 ro_addr, const void *rela,
			 size_t rela_size, size_t *off, __u64 *text)
{
	size_t at = 0;
	__u64 t;

	while ((at = gopcln__scan(ro, ro_size, at)) < ro_size) {
		/* textStart, the third word after the 8 fixed bytes: written at
		 * load time from a relocation when the file holds 0. */
		struct cursor c = {(const __u8 *)ro + at + 24, (const __u8 *)ro + ro_size, false};

		t = cursor__fixed(&c, 8);
		if (!t && rela)
			t = relative_at(rela, rela_size, ro_addr + at + 24);
		if (t) {
			*off = at;
			*text = t;
			return 0;
		}
		at += 8;
	}
	return -ENOENT;
}
