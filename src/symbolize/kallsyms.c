#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/search.h"
#include "util/buf.h"
#include "symbolize/kallsyms.h"
#include "util/scan.h"

struct ksym {
	__u64 addr;
	__u64 end;  /* computed after sorting */
	__u32 name; /* offset in names */
	__u32 rank; /* lower is the preferred name among aliases */
	int module; /* index in modules, -1 = core */
};

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

static __u32 ksym_rank(char type, const char *name, size_t len)
{
	__u32 b = (type == 'T') ? 0 : (type == 'W') ? 1 : (type == 'w') ? 2 : 3;
	__u32 us = 0;

	while (us < len && us < 7 && name[us] == '_')
		us++;
	if (len > 0xffff)
		len = 0xffff;
	return b << 24 | us << 16 | (__u32)len;
}

static int add_sym(struct kallsyms *k, __u64 addr, char type, const char *name, size_t len,
		   int module)
{
	struct ksym *s;
	__u32 off;
	int err;

	if (k->nsyms == KALLSYMS_MAX_SYMBOLS)
		return -E2BIG;
	if (k->nsyms == k->cap) {
		size_t ncap = k->cap ? k->cap * 2 : 4096;
		struct ksym *n;

		if (ncap > KALLSYMS_MAX_SYMBOLS)
			ncap = KALLSYMS_MAX_SYMBOLS;
		n = realloc(k->syms, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		k->syms = n;
		k->cap = ncap;
	}
	err = add_name(k, name, len, &off);
	if (err)
		return err;
	s = &k->syms[k->nsyms++];
	s->addr = addr;
	s->end = 0;
	s->name = off;
	s->rank = ksym_rank(type, name, len);
	s->module = module;
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

static void finish(struct kallsyms *k)
{
	const char *names = (const char *)k->names.data;
	__u64 stext = 0, etext = 0, cmin = 0, cmax = 0;
	size_t i, j = 0;

	for (i = 0; i < k->nsyms; i++) {
		const char *n = names + k->syms[i].name;

		if (k->syms[i].module >= 0)
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
		struct ksym *s = &k->syms[i];
		__u64 cap =
			s->addr + KALLSYMS_MAX_SPAN < s->addr ? ~0ull : s->addr + KALLSYMS_MAX_SPAN;

		if (i + 1 < k->nsyms && k->syms[i + 1].module == s->module)
			s->end = k->syms[i + 1].addr;
		else if (i + 1 < k->nsyms && k->syms[i + 1].addr < cap)
			s->end = k->syms[i + 1].addr;
		else
			s->end = cap;
		if (s->module >= 0) {
			struct kallsyms_module *m = &k->modules[s->module];

			if (!m->start || s->addr < m->start)
				m->start = s->addr;
			if (s->end > m->end)
				m->end = s->end;
		} else {
			if (!cmin || s->addr < cmin)
				cmin = s->addr;
			if (s->end > cmax)
				cmax = s->end;
		}
	}
	/* The core kernel's text is more than _stext.._etext: init text and
	 * entry trampolines lie beyond _etext and still show up in stacks
	 * (the idle task's start_kernel frames), so cover every core symbol. */
	k->text_start = stext && stext < cmin ? stext : cmin;
	k->text_end = etext > cmax ? etext : cmax;
}

int kallsyms__parse(const char *text, size_t len, struct kallsyms **out)
{
	struct kallsyms *k = NULL;
	const char *p = text, *end = text + len;
	size_t ntext = 0, nzero = 0;
	int err = 0;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	buf__init(&k->names, KALLSYMS_MAX_FILE);
	k->modules = calloc(KALLSYMS_MAX_MODULES, sizeof(*k->modules));
	k->module_names = calloc(KALLSYMS_MAX_MODULES, sizeof(*k->module_names));
	if (!k->modules || !k->module_names) {
		err = -ENOMEM;
		goto err_free;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		bool is_text, zero;

		err = parse_line(k, p, le, &is_text, &zero);
		if (err == -E2BIG)
			break; /* keep what fits */
		if (err)
			goto err_free;
		ntext += is_text;
		nzero += zero;
		p = le + 1;
	}
	err = 0;
	if (!k->nsyms) {
		err = ntext && nzero == ntext ? -EPERM : -ENOENT;
		goto err_free;
	}
	finish(k);
	*out = k;
	return 0;

err_free:
	kallsyms__free(k);
	return err;
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	struct buf b;
	int err;

	*out = NULL;
	buf__init(&b, KALLSYMS_MAX_FILE);
	err = buf__read_file(&b, path);
	if (!err)
		err = kallsyms__parse((const char *)b.data, b.len, out);
	buf__release(&b);
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
	if (addr >= s->end)
		return NULL;
	if (sym_addr)
		*sym_addr = s->addr;
	if (module)
		*module = s->module;
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
