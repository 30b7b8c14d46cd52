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

struct kallsyms {
	struct ksym *syms;
	size_t nsyms, cap;
	struct buf names;
	struct kallsyms_module *modules;
	__u32 *module_names; /* offsets in names, resolved into modules[].name at the end */
	size_t nmodules;
	__u64 text_start, text_end;
};

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static int add_name(struct kallsyms *k, const char *name, size_t len, __u32 *off)
{
	size_t o = k->names.len;
	int err;

	if (len > KALLSYMS_MAX_NAME)
		len = KALLSYMS_MAX_NAME;
	err = buf__append(&k->names, name, len);
	if (!err)
		err = buf__append(&k->names, "", 1);
	if (err) {
		k->names.len = o;
		return err;
	}
	*off = (__u32)o;
	return 0;
}

/* Index of module @name, adding it. -1 with *@err set when full or no memory. */
static int module_index(struct kallsyms *k, const char *name, size_t len, int *err)
{
	size_t i;
	__u32 off;

	/* Symbols of one module are contiguous in kallsyms: check the last first. */
	for (i = k->nmodules; i > 0; i--) {
		const char *m = (const char *)k->names.data + k->module_names[i - 1];

		if (!strncmp(m, name, len) && m[len] == '\0')
			return (int)(i - 1);
	}
	if (k->nmodules == KALLSYMS_MAX_MODULES) {
		*err = -E2BIG;
		return -1;
	}
	*err = add_name(k, name, len, &off);
	if (*err)
		return -1;
	k->module_names[k->nmodules] = off;
	return (int)k->nmodules++;
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
	err = add_name(k, name, len, &off);
	if (err)
		return err;
	s = &k->syms[k->nsyms++];
	s->addr = addr;
	s->name = off;
	s->rank = ksym_rank(type, name, len);
	s->module = module < 0 ? CORE : (__u16)module;
	return 0;
}

/* One line: "ffffffff81000000 T _stext" or "... t ext4_foo\t[ext4]".
 * Sets *@zero for a text symbol with a zero address. */
static int parse_line(struct kallsyms *k, const char *p, const char *end, bool *text, bool *zero)
{
	const char *name, *name_end, *mod = NULL, *mod_end = NULL;
	__u64 addr;
	char type;
	int module = -1, err = 0;

	*text = false;
	*zero = false;
	if (!scan__hex(&p, end, &addr) || end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return 0;
	type = p[1];
	if (!is_text_type(type))
		return 0;
	*text = true;
	if (!addr) {
		*zero = true;
		return 0;
	}
	name = p + 3;
	for (name_end = name; name_end < end && *name_end != '\t' && *name_end != ' '; name_end++)
		;
	if (name_end == name)
		return 0;
	if (name_end < end) {
		mod = name_end + 1;
		while (mod < end && (*mod == '\t' || *mod == ' '))
			mod++;
		if (mod < end && *mod == '[') {
			mod++;
			mod_end = memchr(mod, ']', (size_t)(end - mod));
		}
		if (mod_end && mod_end > mod) {
			module = module_index(k, mod, (size_t)(mod_end - mod), &err);
			if (module < 0)
				return err == -E2BIG ? 0 : err; /* too many modules: drop it */
		}
	}
	return add_sym(k, addr, type, name, (size_t)(name_end - name), module);
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
	for (i = 0; i < k->nmodules; i++) {
		k->modules[i].name = names + k->module_names[i];
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
	k->module_names = calloc(KALLSYMS_MAX_MODULES, sizeof(*k->module_names));
	if (!k->modules || !k->module_names) {
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

/* The file is read in READ_CHUNK pieces and parsed line by line: never
 * whole (5+ MB of text for 120k symbols). A line longer than a chunk is
 * not a kallsyms line and is skipped. */
int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct kallsyms *k = NULL;
	size_t have = 0, total = 0, ntext = 0, nzero = 0;
	bool full = false, skip = false;
	char *chunk = NULL;
	int fd = -1, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	chunk = malloc(READ_CHUNK);
	k = parse_begin();
	err = -ENOMEM;
	if (!chunk || !k)
		goto out;
	while (!full) {
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
			continue;
		}
		err = parse_lines(k, chunk, (size_t)(last - chunk), &ntext, &nzero, &full);
		if (err)
			goto out;
		if (!n)
			break;
		have -= (size_t)(last + 1 - chunk);
		memmove(chunk, last + 1, have);
	}
	err = parse_end(k, ntext, nzero);
out:
	if (err)
		kallsyms__free(k);
	else
		*out = k;
	free(chunk);
	close(fd);
	return err;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->modules);
	free(k->module_names);
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
