#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "util/search.h"
#include "util/buf.h"
#include "symbolize/kallsyms.h"
#include "util/scan.h"

/* 16 bytes: a kernel has 120k+ text symbols. A symbol's end is the next
 * symbol's address (see sym_end()), not stored. */
struct ksym {
	__u64 addr;
	__u32 name;   /* offset in names */
	__u16 rank;   /* lower is the preferred name among aliases */
	__u16 module; /* index in modules, CORE = the core kernel */
};

#define CORE 0xffff
#define READ_CHUNK (64u << 10)

/* Module names: offsets into a names buffer (the table's, shared with the
 * symbol names, or a query's own), resolved into names at the end. */
struct modnames {
	struct buf *names;
	__u32 *off;
	size_t n;
};

struct kallsyms {
	struct ksym *syms;
	size_t nsyms, cap;
	struct buf names;
	struct kallsyms_module *modules;
	struct modnames mods;
	size_t nmodules;
	__u64 text_start, text_end;
};

/* One text line, split: "ffffffff81000000 T _stext" or
 * "ffffffffc0200000 t ext4_foo\t[ext4]" (@mod NULL for the core kernel). */
struct kline {
	__u64 addr;
	char type;
	const char *name, *mod;
	size_t nlen, mlen;
};

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Append @name (cut at KALLSYMS_MAX_NAME) and a NUL to @names; *@off gets
 * its offset. */
static int names_add(struct buf *names, const char *name, size_t len, __u32 *off)
{
	size_t o = names->len;
	int err;

	if (len > KALLSYMS_MAX_NAME)
		len = KALLSYMS_MAX_NAME;
	err = buf__append(names, name, len);
	if (!err)
		err = buf__append(names, "", 1);
	if (err) {
		names->len = o;
		return err;
	}
	*off = (__u32)o;
	return 0;
}

/* Index of module @name in @m, adding it (@m->off has room for
 * KALLSYMS_MAX_MODULES). -1 with *@err set when full or no memory. */
static int modnames_index(struct modnames *m, const char *name, size_t len, int *err)
{
	size_t i;
	__u32 off;

	/* Symbols of one module are contiguous in kallsyms: check the last first. */
	for (i = m->n; i > 0; i--) {
		const char *x = (const char *)m->names->data + m->off[i - 1];

		if (!strncmp(x, name, len) && x[len] == '\0')
			return (int)(i - 1);
	}
	if (m->n == KALLSYMS_MAX_MODULES) {
		*err = -E2BIG;
		return -1;
	}
	*err = names_add(m->names, name, len, &off);
	if (*err)
		return -1;
	m->off[m->n] = off;
	return (int)m->n++;
}

/* Type (T, W, w, t), then fewer leading underscores, then shorter. */
static __u16 ksym_rank(char type, const char *name, size_t len)
{
	__u32 b = (type == 'T') ? 0 : (type == 'W') ? 1 : (type == 'w') ? 2 : 3;
	__u32 us = 0;

	while (us < len && us < 7 && name[us] == '_')
		us++;
	if (len > 0x7ff)
		len = 0x7ff;
	return (__u16)(b << 14 | us << 11 | (__u32)len);
}

static int add_sym(struct kallsyms *k, __u64 addr, char type, const char *name, size_t len,
		   int module)
{
	struct ksym *s;
	__u32 off;
	int err;

	err = array__grow((void **)&k->syms, &k->cap, k->nsyms, sizeof(*k->syms), 4096,
			  KALLSYMS_MAX_SYMBOLS);
	if (err)
		return err;
	err = names_add(&k->names, name, len, &off);
	if (err)
		return err;
	s = &k->syms[k->nsyms++];
	s->addr = addr;
	s->name = off;
	s->rank = ksym_rank(type, name, len);
	s->module = module < 0 ? CORE : (__u16)module;
	return 0;
}

/* Split the line [@p, @end). Returns false for a line that is not a text
 * symbol; else sets *@zero for a text symbol with a zero address, and
 * returns true with *@l filled when it has a name too. */
static bool split_line(const char *p, const char *end, struct kline *l, bool *text, bool *zero)
{
	const char *name_end, *mod, *mod_end = NULL;

	*text = false;
	*zero = false;
	if (!scan__hex(&p, end, &l->addr) || end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return false;
	l->type = p[1];
	if (!is_text_type(l->type))
		return false;
	*text = true;
	if (!l->addr) {
		*zero = true;
		return false;
	}
	l->name = p + 3;
	for (name_end = l->name; name_end < end && *name_end != '\t' && *name_end != ' ';
	     name_end++)
		;
	if (name_end == l->name)
		return false;
	l->nlen = (size_t)(name_end - l->name);
	l->mod = NULL;
	l->mlen = 0;
	if (name_end < end) {
		mod = name_end + 1;
		while (mod < end && (*mod == '\t' || *mod == ' '))
			mod++;
		if (mod < end && *mod == '[') {
			mod++;
			mod_end = memchr(mod, ']', (size_t)(end - mod));
		}
		if (mod_end && mod_end > mod) {
			l->mod = mod;
			l->mlen = (size_t)(mod_end - mod);
		}
	}
	return true;
}

/* One line: "ffffffff81000000 T _stext" or "... t ext4_foo\t[ext4]".
 * Sets *@zero for a text symbol with a zero address. */
static int parse_line(struct kallsyms *k, const char *p, const char *end, bool *text, bool *zero)
{
	struct kline l;
	int module = -1, err = 0;

	if (!split_line(p, end, &l, text, zero))
		return 0;
	if (l.mod) {
		module = modnames_index(&k->mods, l.mod, l.mlen, &err);
		if (module < 0)
			return err == -E2BIG ? 0 : err; /* too many modules: drop it */
	}
	return add_sym(k, l.addr, l.type, l.name, l.nlen, module);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* End of symbol @i: the next symbol of the same owner, else the next one
 * within KALLSYMS_MAX_SPAN, else KALLSYMS_MAX_SPAN bytes. */
static __u64 sym_end(const struct kallsyms *k, size_t i)
{
	const struct ksym *s = &k->syms[i];
	__u64 cap = s->addr + KALLSYMS_MAX_SPAN < s->addr ? ~0ull : s->addr + KALLSYMS_MAX_SPAN;

	if (i + 1 < k->nsyms &&
	    (k->syms[i + 1].module == s->module || k->syms[i + 1].addr < cap))
		return k->syms[i + 1].addr;
	return cap;
}

static void finish(struct kallsyms *k)
{
	const char *names;
	__u64 stext = 0, etext = 0, cmin = 0, cmax = 0;
	size_t i, j = 0;

	/* First: the module names below point into the final buffer. */
	buf__shrink(&k->names);
	names = (const char *)k->names.data;

	for (i = 0; i < k->nsyms; i++) {
		const char *n = names + k->syms[i].name;

		if (k->syms[i].module != CORE)
			continue;
		if (!strcmp(n, "_stext"))
			stext = k->syms[i].addr;
		else if (!strcmp(n, "_etext"))
			etext = k->syms[i].addr;
	}
	if (k->nsyms) {
		qsort(k->syms, k->nsyms, sizeof(*k->syms), cmp_ksym);
		for (i = 1; i < k->nsyms; i++) {
			if (k->syms[i].addr == k->syms[j].addr)
				continue;
			k->syms[++j] = k->syms[i];
		}
		k->nsyms = j + 1;
	}
	k->nmodules = k->mods.n;
	for (i = 0; i < k->nmodules; i++) {
		k->modules[i].name = names + k->mods.off[i];
		k->modules[i].start = 0;
		k->modules[i].end = 0;
	}
	for (i = 0; i < k->nsyms; i++) {
		const struct ksym *s = &k->syms[i];
		__u64 end = sym_end(k, i);

		if (s->module != CORE) {
			struct kallsyms_module *m = &k->modules[s->module];

			if (!m->start || s->addr < m->start)
				m->start = s->addr;
			if (end > m->end)
				m->end = end;
		} else {
			if (!cmin || s->addr < cmin)
				cmin = s->addr;
			if (end > cmax)
				cmax = end;
		}
	}
	/* The core kernel's text is more than _stext.._etext: init text and
	 * entry trampolines lie beyond _etext and still show up in stacks
	 * (the idle task's start_kernel frames), so cover every core symbol. */
	k->text_start = stext && stext < cmin ? stext : cmin;
	k->text_end = etext > cmax ? etext : cmax;
	/* Give back what growth by doubling left unused. */
	if (k->nsyms < k->cap) {
		struct ksym *t = realloc(k->syms, k->nsyms * sizeof(*t));

		if (t) {
			k->syms = t;
			k->cap = k->nsyms;
		}
	}
}

static struct kallsyms *parse_begin(void)
{
	struct kallsyms *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	buf__init(&k->names, KALLSYMS_MAX_FILE);
	k->modules = calloc(KALLSYMS_MAX_MODULES, sizeof(*k->modules));
	k->mods.names = &k->names;
	k->mods.off = calloc(KALLSYMS_MAX_MODULES, sizeof(*k->mods.off));
	if (!k->modules || !k->mods.off) {
		kallsyms__free(k);
		return NULL;
	}
	return k;
}

/* Parse the whole lines in [@text, @text + @len) (a last line without a
 * newline too). Returns the bytes used, or -errno; *@full is set once
 * KALLSYMS_MAX_SYMBOLS is reached (the rest is ignored). */
static int parse_lines(struct kallsyms *k, const char *text, size_t len, size_t *ntext,
		       size_t *nzero, bool *full)
{
	const char *p = text, *end = text + len;
	int err;

	while (p < end && !*full) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		bool is_text, zero;

		err = parse_line(k, p, le, &is_text, &zero);
		if (err == -E2BIG)
			*full = true; /* keep what fits */
		else if (err)
			return err;
		*ntext += is_text;
		*nzero += zero;
		p = le + 1;
	}
	return 0;
}

static int parse_end(struct kallsyms *k, size_t ntext, size_t nzero)
{
	if (!k->nsyms)
		return ntext && nzero == ntext ? -EPERM : -ENOENT;
	finish(k);
	return 0;
}

int kallsyms__parse(const char *text, size_t len, struct kallsyms **out)
{
	struct kallsyms *k;
	size_t ntext = 0, nzero = 0;
	bool full = false;
	int err;

	*out = NULL;
	k = parse_begin();
	if (!k)
		return -ENOMEM;
	err = parse_lines(k, text, len, &ntext, &nzero, &full);
	if (!err)
		err = parse_end(k, ntext, nzero);
	if (err) {
		kallsyms__free(k);
		return err;
	}
	*out = k;
	return 0;
}

/* Whole lines of a file, a chunk at a time: @fn gets [@text, @text + @len)
 * (a last line without a newline too) and sets *@stop to end early. */
typedef int (*lines_fn)(void *ctx, const char *text, size_t len, bool *stop);

/* Read @path in READ_CHUNK pieces and hand its whole lines to @fn: never
 * whole (5+ MB of text for 120k symbols). A line longer than a chunk is
 * not a kallsyms line and is skipped. 0, -errno of reading, -EFBIG past
 * KALLSYMS_MAX_FILE bytes, -ENOMEM or @fn's error. */
static int read_lines(const char *path, lines_fn fn, void *ctx)
{
	size_t have = 0, total = 0;
	bool stop = false, skip = false;
	char *chunk = NULL;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	chunk = malloc(READ_CHUNK);
	err = -ENOMEM;
	if (!chunk)
		goto out;
	err = 0;
	while (!stop) {
		ssize_t n = read(fd, chunk + have, READ_CHUNK - have);
		char *last;

		if (n < 0 && errno == EINTR)
			continue;
		err = -errno;
		if (n < 0)
			goto out;
		total += (size_t)n;
		err = -EFBIG;
		if (total > KALLSYMS_MAX_FILE)
			goto out;
		err = 0;
		have += (size_t)n;
		if (skip) { /* the rest of a line longer than a chunk */
			char *nl = memchr(chunk, '\n', have);

			if (!nl) {
				have = 0;
				if (!n)
					break;
				continue;
			}
			have -= (size_t)(nl + 1 - chunk);
			memmove(chunk, nl + 1, have);
			skip = false;
		}
		/* At the end, the last line needs no newline. */
		last = n ? memrchr(chunk, '\n', have) : chunk + have;
		if (!last) {
			if (have == READ_CHUNK) {
				skip = true;
				have = 0;
			}
			if (!n)
				break;
			continue;
		}
		err = fn(ctx, chunk, (size_t)(last - chunk), &stop);
		if (err || !n)
			break;
		have -= (size_t)(last + 1 - chunk);
		memmove(chunk, last + 1, have);
	}
out:
	free(chunk);
	close(fd);
	return err;
}

struct load_ctx {
	struct kallsyms *k;
	size_t ntext, nzero;
};

static int load_lines(void *ctx, const char *text, size_t len, bool *stop)
{
	struct load_ctx *c = ctx;

	return parse_lines(c->k, text, len, &c->ntext, &c->nzero, stop);
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct load_ctx c = {0};
	int err;

	*out = NULL;
	c.k = parse_begin();
	if (!c.k)
		return -ENOMEM;
	err = read_lines(path, load_lines, &c);
	if (!err)
		err = parse_end(c.k, c.ntext, c.nzero);
	if (err)
		kallsyms__free(c.k);
	else
		*out = c.k;
	return err;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->modules);
	free(k->mods.off);
	buf__release(&k->names);
	free(k);
}

const char *kallsyms__lookup(const struct kallsyms *k, __u64 addr, __u64 *sym_addr, int *module)
{
	size_t lo = search__upto(k->syms, k->nsyms, sizeof(*k->syms), offsetof(struct ksym, addr),
				 addr);
	const struct ksym *s;

	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	if (addr >= sym_end(k, lo - 1))
		return NULL;
	if (sym_addr)
		*sym_addr = s->addr;
	if (module)
		*module = s->module == CORE ? -1 : s->module;
	return (const char *)k->names.data + s->name;
}

void kallsyms__text_range(const struct kallsyms *k, __u64 *start, __u64 *end)
{
	*start = k->text_start;
	*end = k->text_end;
}

size_t kallsyms__count(const struct kallsyms *k)
{
	return k->nsyms;
}

size_t kallsyms__module_count(const struct kallsyms *k)
{
	return k->nmodules;
}

const struct kallsyms_module *kallsyms__module(const struct kallsyms *k, size_t idx)
{
	return idx < k->nmodules ? &k->modules[idx] : NULL;
}

/* ---- streaming lookups ------------------------------------------------------------ */

/* Slot i of a query holds, of the symbols in (addrs[i - 1], addrs[i]], the
 * greatest (best) and, of those in (addrs[i], addrs[i + 1]], the least
 * (next): enough to find, after the pass, each address's symbol (the
 * greatest at or below it) and that symbol's end (the least above it). */
struct qsym {
	__u64 addr; /* 0 = none yet */
	__u16 rank;
	__u16 module; /* index in the query's modules, CORE = the core kernel */
};

struct qslot {
	struct qsym best, next;
	char *name; /* best's name, owned (cap bytes) */
	size_t cap;
	size_t upto; /* at the end: 1 + the slot of the address's symbol, 0 = none */
};

struct qowner {
	__u64 min, max; /* 0 = no symbol yet */
};

struct kallsyms_query {
	const __u64 *addrs; /* borrowed for the pass */
	size_t n;
	struct qslot *slots;
	struct kallsyms_hit *hits;
	struct buf names; /* module names */
	struct modnames mods;
	struct qowner *owners; /* per module, then the core kernel last */
	struct kallsyms_module *modules;
	__u64 stext, etext, text_start, text_end;
	size_t ntext, nzero;
};

static bool qsym_above(const struct qsym *a, __u64 addr, __u16 rank)
{
	return !a->addr || addr > a->addr || (addr == a->addr && rank < a->rank);
}

static bool qsym_below(const struct qsym *a, __u64 addr, __u16 rank)
{
	return !a->addr || addr < a->addr || (addr == a->addr && rank < a->rank);
}

static int query_line(struct kallsyms_query *q, const char *p, const char *end)
{
	struct kline l;
	struct qowner *o;
	bool text, zero;
	size_t i;
	__u16 rank, mod = CORE;
	int err = 0, m;

	if (!split_line(p, end, &l, &text, &zero)) {
		q->ntext += text;
		q->nzero += zero;
		return 0;
	}
	q->ntext++;
	if (l.mod) {
		m = modnames_index(&q->mods, l.mod, l.mlen, &err);
		if (m < 0)
			return err == -E2BIG ? 0 : err; /* too many modules: dropped */
		mod = (__u16)m;
	}
	if (l.nlen > KALLSYMS_MAX_NAME)
		l.nlen = KALLSYMS_MAX_NAME;
	o = &q->owners[mod == CORE ? KALLSYMS_MAX_MODULES : mod];
	if (!o->min || l.addr < o->min)
		o->min = l.addr;
	if (l.addr > o->max)
		o->max = l.addr;
	if (mod == CORE && l.nlen == 6 && !memcmp(l.name, "_stext", 6))
		q->stext = l.addr;
	else if (mod == CORE && l.nlen == 6 && !memcmp(l.name, "_etext", 6))
		q->etext = l.addr;
	rank = ksym_rank(l.type, l.name, l.nlen);
	/* addrs[0..i) are below the symbol, addrs[i..n) at or above it. */
	i = search__upto(q->addrs, q->n, sizeof(*q->addrs), 0, l.addr - 1);
	if (i < q->n && qsym_above(&q->slots[i].best, l.addr, rank)) {
		struct qslot *sl = &q->slots[i];

		if (sl->cap < l.nlen + 1) {
			char *t = realloc(sl->name, l.nlen + 1);

			if (!t)
				return -ENOMEM;
			sl->name = t;
			sl->cap = l.nlen + 1;
		}
		memcpy(sl->name, l.name, l.nlen);
		sl->name[l.nlen] = '\0';
		sl->best = (struct qsym){l.addr, rank, mod};
	}
	if (i > 0 && qsym_below(&q->slots[i - 1].next, l.addr, rank))
		q->slots[i - 1].next = (struct qsym){l.addr, rank, mod};
	return 0;
}

static int query_lines(void *ctx, const char *text, size_t len, bool *stop)
{
	struct kallsyms_query *q = ctx;
	const char *p = text, *end = text + len;
	int err;

	(void)stop;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		err = query_line(q, p, le);
		if (err)
			return err;
		p = le + 1;
	}
	return 0;
}

static struct kallsyms_query *query_begin(const __u64 *addrs, size_t n, int *err)
{
	struct kallsyms_query *q;
	size_t i;

	*err = -EINVAL;
	for (i = 1; i < n; i++)
		if (addrs[i] <= addrs[i - 1])
			return NULL;
	*err = -E2BIG;
	if (n > KALLSYMS_MAX_QUERY)
		return NULL;
	*err = -ENOMEM;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->addrs = addrs;
	q->n = n;
	buf__init(&q->names, (size_t)KALLSYMS_MAX_MODULES * (KALLSYMS_MAX_NAME + 1));
	q->mods.names = &q->names;
	q->mods.off = calloc(KALLSYMS_MAX_MODULES, sizeof(*q->mods.off));
	q->owners = calloc(KALLSYMS_MAX_MODULES + 1, sizeof(*q->owners));
	q->slots = n ? calloc(n, sizeof(*q->slots)) : NULL;
	if (!q->mods.off || !q->owners || (n && !q->slots)) {
		kallsyms__query_free(q);
		return NULL;
	}
	*err = 0;
	return q;
}

static __u64 owner_before(const struct qowner *o, __u64 max, __u64 end)
{
	return o->min > max && o->min < end ? o->min : end;
}

/* End of the last symbol of owner @o (a module index, or
 * KALLSYMS_MAX_MODULES for the core): KALLSYMS_MAX_SPAN past it, or the
 * start of another owner when that is sooner. The table's sym_end() with
 * each other owner standing for its symbols: the same unless owners
 * interleave, and only for what a mapping covers. */
static __u64 owner_end(const struct kallsyms_query *q, size_t o)
{
	__u64 max = q->owners[o].max;
	__u64 end = max + KALLSYMS_MAX_SPAN < max ? ~0ull : max + KALLSYMS_MAX_SPAN;
	size_t i;

	for (i = 0; i < q->mods.n; i++)
		if (i != o)
			end = owner_before(&q->owners[i], max, end);
	if (o != KALLSYMS_MAX_MODULES)
		end = owner_before(&q->owners[KALLSYMS_MAX_MODULES], max, end);
	return end;
}

/* The query's modules from its owners: each from its lowest symbol to
 * owner_end() (@named: to the end of the highest symbol named, the owners'
 * max in kallsyms__query_names()). 0 or -ENOMEM. */
static int query_modules(struct kallsyms_query *q, bool named)
{
	size_t i;

	buf__shrink(&q->names);
	q->modules = q->mods.n ? calloc(q->mods.n, sizeof(*q->modules)) : NULL;
	if (q->mods.n && !q->modules)
		return -ENOMEM;
	for (i = 0; i < q->mods.n; i++) {
		q->modules[i].name = (const char *)q->names.data + q->mods.off[i];
		q->modules[i].start = q->owners[i].min;
		q->modules[i].end = named ? q->owners[i].max : owner_end(q, i);
	}
	return 0;
}

static int query_end(struct kallsyms_query *q)
{
	const struct qsym *next = NULL;
	const struct qowner *core = &q->owners[KALLSYMS_MAX_MODULES];
	size_t i;

	if (!core->min && !q->mods.n)
		return q->ntext && q->nzero == q->ntext ? -EPERM : -ENOENT;
	q->hits = q->n ? calloc(q->n, sizeof(*q->hits)) : NULL;
	if ((q->n && !q->hits) || query_modules(q, false))
		return -ENOMEM;
	if (core->min) {
		__u64 cend = owner_end(q, KALLSYMS_MAX_MODULES);

		q->text_start = q->stext && q->stext < core->min ? q->stext : core->min;
		q->text_end = q->etext > cend ? q->etext : cend;
	}
	/* Each address's symbol: the best of its slot or of an earlier one
	 * (a slot's symbols lie above every earlier slot's). */
	for (i = 0; i < q->n; i++)
		q->slots[i].upto = q->slots[i].best.addr ? i + 1 : i ? q->slots[i - 1].upto : 0;
	/* ... and the symbol after it: the next of its slot or a later one. */
	for (i = q->n; i-- > 0;) {
		struct kallsyms_hit *h = &q->hits[i];
		const struct qslot *bs = q->slots[i].upto ? &q->slots[q->slots[i].upto - 1] : NULL;
		const struct qsym *b = bs ? &bs->best : NULL;
		__u64 a = q->addrs[i], cap;

		if (q->slots[i].next.addr)
			next = &q->slots[i].next;
		h->addr = a;
		h->name = NULL;
		h->module = -1;
		h->start = 0; /* no symbol below: nothing from 0 */
		h->end = next ? next->addr : ~0ull;
		if (!b)
			continue;
		cap = b->addr + KALLSYMS_MAX_SPAN < b->addr ? ~0ull : b->addr + KALLSYMS_MAX_SPAN;
		if (!next || (next->module != b->module && next->addr >= cap)) {
			if (a >= cap) { /* past the end: the gap up to the next symbol */
				h->start = cap;
				continue;
			}
			h->end = cap;
		}
		h->start = b->addr;
		h->name = bs->name;
		h->module = b->module == CORE ? -1 : b->module;
	}
	return 0;
}

static int query_finish(struct kallsyms_query *q, int err, struct kallsyms_query **out)
{
	if (!err)
		err = query_end(q);
	if (err) {
		kallsyms__query_free(q);
		return err;
	}
	q->addrs = NULL;
	*out = q;
	return 0;
}

int kallsyms__query_text(const char *text, size_t len, const __u64 *addrs, size_t n,
			 struct kallsyms_query **out)
{
	struct kallsyms_query *q;
	int err;

	*out = NULL;
	q = query_begin(addrs, n, &err);
	if (!q)
		return err;
	return query_finish(q, query_lines(q, text, len, NULL), out);
}

int kallsyms__query_file(const char *path, const __u64 *addrs, size_t n,
			 struct kallsyms_query **out)
{
	struct kallsyms_query *q;
	int err;

	*out = NULL;
	q = query_begin(addrs, n, &err);
	if (!q)
		return err;
	return query_finish(q, read_lines(path, query_lines, q), out);
}

/* Split one "%pS" text: "name+0xoff/0xsize", then " [module]" for module
 * text. False for anything else ("0x..." when no symbol covers the
 * address, or an empty string). */
static bool split_ps(const char *s, struct kline *l, __u64 *off, __u64 *size)
{
	const char *end = s + strlen(s), *p, *plus = NULL;

	l->mod = NULL;
	l->mlen = 0;
	if (end > s && end[-1] == ']') {
		const char *open = end - 1;

		while (open > s && *open != '[')
			open--;
		if (open < s + 2 || open[-1] != ' ' || open + 1 == end - 1)
			return false;
		l->mod = open + 1;
		l->mlen = (size_t)(end - 1 - l->mod);
		end = open - 1;
	}
	/* The last "+0x": names have no '+', but be strict about the rest. */
	for (p = s; p + 3 <= end; p++)
		if (p[0] == '+' && p[1] == '0' && p[2] == 'x')
			plus = p;
	if (!plus || plus == s)
		return false;
	l->name = s;
	l->nlen = (size_t)(plus - s);
	p = plus + 3;
	if (!scan__hex(&p, end, off) || end - p < 3 || p[0] != '/' || p[1] != '0' || p[2] != 'x')
		return false;
	p += 3;
	return scan__hex(&p, end, size) && p == end;
}

/* Register a hit of owner @mod (a module index, or CORE) over
 * [@start, @end) in the owners' extents. */
static void own(struct kallsyms_query *q, __u16 mod, __u64 start, __u64 end)
{
	struct qowner *o = &q->owners[mod == CORE ? KALLSYMS_MAX_MODULES : mod];

	if (!o->min || start < o->min)
		o->min = start;
	if (end > o->max)
		o->max = end; /* here: the end of the highest symbol seen */
}

int kallsyms__query_names(const __u64 *addrs, size_t n, const char *const *names, __u64 stext,
			  __u64 etext, struct kallsyms_query **out)
{
	const struct qowner *core;
	struct kallsyms_query *q;
	size_t i, named = 0;
	int err;

	*out = NULL;
	q = query_begin(addrs, n, &err);
	if (!q)
		return err;
	err = -ENOMEM;
	q->hits = n ? calloc(n, sizeof(*q->hits)) : NULL;
	if (n && !q->hits)
		goto fail;
	for (i = 0; i < n; i++) {
		struct kallsyms_hit *h = &q->hits[i];
		struct qslot *sl = &q->slots[i];
		__u64 off, size;
		__u16 mod = CORE;
		struct kline l;
		int m;

		*h = (struct kallsyms_hit){.addr = addrs[i], .start = addrs[i],
					   .end = addrs[i] + 1, .module = -1};
		if (!names[i] || !split_ps(names[i], &l, &off, &size) || off > addrs[i])
			continue;
		if (l.mod) {
			m = modnames_index(&q->mods, l.mod, l.mlen, &err);
			if (m < 0) {
				if (err != -E2BIG)
					goto fail;
				continue; /* too many modules: unnamed */
			}
			mod = (__u16)m;
		}
		if (l.nlen > KALLSYMS_MAX_NAME)
			l.nlen = KALLSYMS_MAX_NAME;
		sl->name = malloc(l.nlen + 1);
		if (!sl->name) {
			err = -ENOMEM;
			goto fail;
		}
		memcpy(sl->name, l.name, l.nlen);
		sl->name[l.nlen] = '\0';
		sl->cap = l.nlen + 1;
		h->start = addrs[i] - off;
		h->end = size > off && h->start + size > h->start ? h->start + size : addrs[i] + 1;
		h->name = sl->name;
		h->module = mod == CORE ? -1 : mod;
		own(q, mod, h->start, h->end);
		named++;
	}
	err = !named && !stext ? -ENOENT : 0;
	if (err)
		goto fail;
	err = query_modules(q, true);
	if (err)
		goto fail;
	/* The core text: _stext.._etext, and any core symbol named outside. */
	core = &q->owners[KALLSYMS_MAX_MODULES];
	q->text_start = stext;
	q->text_end = etext > stext ? etext : 0;
	if (core->min && (!q->text_start || core->min < q->text_start))
		q->text_start = core->min;
	if (core->max > q->text_end)
		q->text_end = core->max;
	q->addrs = NULL;
	*out = q;
	return 0;
fail:
	kallsyms__query_free(q);
	return err;
}

void kallsyms__query_free(struct kallsyms_query *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; q->slots && i < q->n; i++)
		free(q->slots[i].name);
	free(q->slots);
	free(q->hits);
	free(q->modules);
	free(q->owners);
	free(q->mods.off);
	buf__release(&q->names);
	free(q);
}

const struct kallsyms_hit *kallsyms__query_hit(const struct kallsyms_query *q, size_t i)
{
	return i < q->n ? &q->hits[i] : NULL;
}

void kallsyms__query_text_range(const struct kallsyms_query *q, __u64 *start, __u64 *end)
{
	*start = q->text_start;
	*end = q->text_end;
}

size_t kallsyms__query_module_count(const struct kallsyms_query *q)
{
	return q->mods.n;
}

const struct kallsyms_module *kallsyms__query_module(const struct kallsyms_query *q, size_t idx)
{
	return idx < q->mods.n ? &q->modules[idx] : NULL;
}

struct check_ctx {
	int err;
};

static int check_lines(void *ctx, const char *text, size_t len, bool *stop)
{
	struct check_ctx *c = ctx;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct kline l;
		bool is_text, zero;

		if (split_line(p, le, &l, &is_text, &zero)) {
			c->err = 0;
			*stop = true;
			return 0;
		}
		if (zero) {
			c->err = -EPERM;
			*stop = true;
			return 0;
		}
		p = le + 1;
	}
	return 0;
}

int kallsyms__check(const char *path)
{
	struct check_ctx c = {-ENOENT};
	int err = read_lines(path, check_lines, &c);

	return err ? err : c.err;
}
