/* phpframes.c - PHP functions named from the live process (phpframes.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/phpproc.h"
#include "proc/pyproc.h"
#include "symbolize/phpframes.h"
#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"

#define UNKNOWN "<unknown php>"
#define MAX_PROCS 4096
#define FUNC_HEAD 256 /* bytes of a function read at most: every field profcap uses */
#define NO_STR 0xffffffffu

struct pf_proc {
	int pid;
	struct phpproc pp;
};

struct func_key {
	__u64 func;
	__u32 pid;
	__u32 fp;
};

struct func_entry {
	struct func_key key;
	bool ok;	  /* named; else the frame is unknown */
	__u32 name, file; /* string indices, NO_STR none */
	__u32 line_start;
	__u32 last; /* oplines */
	__u64 opcodes;
	__u32 *lines; /* the line of each opline, NULL: read one at a time */
};

struct phpframes {
	char *proc_root;
	struct htab procs; /* struct pf_proc */
	struct htab funcs; /* struct func_entry */
	struct intern *strings;
	size_t string_bytes;
	size_t nlines; /* line numbers kept */
	__u32 unknown; /* index of UNKNOWN */
	struct profile_line *lines;
	size_t lines_cap;
	struct phpframes_stats st;
};

__u16 phpframes__fingerprint(__u64 name, __u64 scope, __u64 file, __u32 line)
{
	__u64 h = (name >> 3) ^ (scope << 7) ^ (file >> 2) ^ ((__u64)line << 21);

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)h;
}

void phpframes__name(const char *cls, const char *fn, char *out, size_t cap)
{
	if (!cap)
		return;
	if (!fn || !*fn)
		snprintf(out, cap, "{main}");
	else if (cls && *cls)
		snprintf(out, cap, "%s::%s", cls, fn);
	else
		snprintf(out, cap, "%s", fn);
}

long phpframes__op_index(__u64 opcodes, __u32 last, __u32 size, __u64 opline)
{
	__u64 d;

	if (!size || !opcodes || opline < opcodes)
		return -1;
	d = opline - opcodes;
	if (d % size || d / size >= last)
		return -1;
	return (long)(d / size);
}

size_t phpframes__decode(const __u64 *words, size_t nwords, struct phpframes_raw *out, size_t cap)
{
	size_t n = 0, i;

	for (i = 0; i + 2 < nwords && n < cap; i += 3, n++) {
		out[n].func = words[i] & ((1ull << 48) - 1);
		out[n].fingerprint = (__u16)(words[i] >> 48);
		out[n].opline = words[i + 1];
		out[n].call_info = (__u32)words[i + 2];
		out[n].flags = (__u8)(words[i + 2] >> 32);
		out[n].type = (__u8)(words[i + 2] >> 40);
	}
	return n;
}

/* ---- processes ---- */

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct pf_proc *)elem)->pid == *(const int *)key;
}

static bool func_eq(const void *elem, const void *key, void *ctx)
{
	const struct func_key *a = &((const struct func_entry *)elem)->key, *b = key;

	(void)ctx;
	return a->func == b->func && a->pid == b->pid && a->fp == b->fp;
}

static __u64 func_hash(const struct func_key *k)
{
	return htab__hash_u64(k->func, ((__u64)k->pid << 32) | k->fp);
}

struct phpframes *phpframes__new(const char *proc_root)
{
	struct phpframes *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->proc_root = proc_root ? strdup(proc_root) : NULL;
	pf->strings = intern__new(1u << 22);
	if ((proc_root && !pf->proc_root) || !pf->strings ||
	    intern__put(pf->strings, UNKNOWN, sizeof(UNKNOWN), &pf->unknown, NULL) ||
	    htab__init(&pf->procs, sizeof(struct pf_proc), MAX_PROCS) ||
	    htab__init(&pf->funcs, sizeof(struct func_entry), PHPFRAMES_MAX_FUNCS)) {
		phpframes__free(pf);
		return NULL;
	}
	return pf;
}

static void drop_funcs(struct phpframes *pf, int pid, bool all)
{
	struct func_entry *e;
	size_t it = 0;

	while ((e = htab__next(&pf->funcs, &it))) {
		if (!all && e->key.pid != (__u32)pid)
			continue;
		if (e->lines)
			pf->nlines -= e->last;
		free(e->lines);
		htab__remove(&pf->funcs, e);
	}
	if (all) {
		htab__clear(&pf->funcs);
		pf->nlines = 0;
	}
}

void phpframes__free(struct phpframes *pf)
{
	if (!pf)
		return;
	drop_funcs(pf, 0, true);
	htab__release(&pf->funcs);
	htab__release(&pf->procs);
	intern__free(pf->strings);
	free(pf->lines);
	free(pf->proc_root);
	free(pf);
}

const struct phpproc *phpframes__process(const struct phpframes *pf, int pid)
{
	const struct pf_proc *p;

	if (!pf)
		return NULL;
	p = htab__find(&pf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	return p ? &p->pp : NULL;
}

void phpframes__forget(struct phpframes *pf, int pid)
{
	struct pf_proc *p;

	if (!pf)
		return;
	p = htab__find(&pf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	if (p)
		htab__remove(&pf->procs, p);
	drop_funcs(pf, pid, false);
}

int phpframes__set_process(struct phpframes *pf, int pid, const struct phpproc *pp)
{
	const struct phpproc *old;
	struct pf_proc *p;
	int err;

	if (!pf)
		return -EINVAL;
	old = phpframes__process(pf, pid);
	if (old && pp && !memcmp(old, pp, sizeof(*pp)))
		return 0; /* the same interpreter: its functions stay */
	phpframes__forget(pf, pid);
	if (!pp)
		return 0;
	err = htab__add(&pf->procs, htab__hash_u64((__u64)pid, 0), (void **)&p);
	if (err)
		return err;
	p->pid = pid;
	p->pp = *pp;
	return 0;
}

void phpframes__stats(const struct phpframes *pf, struct phpframes_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pf)
		return;
	*out = pf->st;
	out->cached = htab__count(&pf->funcs);
}

/* ---- reading functions ---- */

static int rd(const struct phpframes *pf, int pid, __u64 addr, void *buf, size_t len)
{
	return pyproc__read_mem(pf->proc_root, pid, addr, buf, len);
}

static __u64 u64_at(const unsigned char *b, __u16 off)
{
	__u64 v;

	memcpy(&v, b + off, 8);
	return v;
}

static __u32 u32_at(const unsigned char *b, __u16 off)
{
	__u32 v;

	memcpy(&v, b + off, 4);
	return v;
}

/* The zend_string at @addr into @out (@cap bytes, NUL-terminated): its
 * length, or -errno. Names with a NUL or longer than the cap are cut. */
static long read_str(const struct phpframes *pf, int pid, const struct phpproc_layout *l,
		     __u64 addr, char *out, size_t cap)
{
	unsigned char head[32];
	__u64 len;
	int err;

	if (!addr || l->str_val > sizeof(head) || l->str_len + 8u > sizeof(head))
		return -EINVAL;
	err = rd(pf, pid, addr, head, l->str_val);
	if (err)
		return err;
	len = u64_at(head, l->str_len);
	if (len >= cap)
		len = cap - 1;
	if (len > PHPFRAMES_MAX_NAME)
		len = PHPFRAMES_MAX_NAME;
	err = rd(pf, pid, addr + l->str_val, out, len);
	if (err)
		return err;
	out[len] = 0;
	return (long)strlen(out);
}

/* Intern @s: its index, NO_STR past the cap. */
static __u32 put_str(struct phpframes *pf, const char *s)
{
	size_t len = strlen(s) + 1;
	bool added;
	__u32 idx;

	if (pf->string_bytes + len > PHPFRAMES_MAX_STRINGS)
		return intern__find(pf->strings, s, len, &idx) ? NO_STR : idx;
	if (intern__put(pf->strings, s, len, &idx, &added))
		return NO_STR;
	if (added)
		pf->string_bytes += len;
	return idx;
}

static const char *str_of(const struct phpframes *pf, __u32 idx)
{
	return idx == NO_STR ? NULL : intern__get(pf->strings, idx, NULL);
}

/* The line of every opline of @e, read at once when it has few. */
static void read_lines(struct phpframes *pf, int pid, const struct phpproc_layout *l,
		       struct func_entry *e)
{
	unsigned char *ops;
	__u32 i;

	if (!e->last || e->last > PHPFRAMES_MAX_OPS || pf->nlines + e->last > PHPFRAMES_MAX_LINES)
		return;
	ops = malloc((size_t)e->last * l->zop_size);
	e->lines = malloc((size_t)e->last * sizeof(*e->lines));
	if (!ops || !e->lines || rd(pf, pid, e->opcodes, ops, (size_t)e->last * l->zop_size)) {
		free(e->lines);
		e->lines = NULL;
		free(ops);
		return;
	}
	for (i = 0; i < e->last; i++)
		e->lines[i] = u32_at(ops + (size_t)i * l->zop_size, l->zop_lineno);
	pf->nlines += e->last;
	free(ops);
}

/* Read function @r->func of process @pid into @e: ok when it still
 * matches the fingerprint and its names read. */
static void read_func(struct phpframes *pf, int pid, const struct phpproc_layout *l,
		      const struct phpframes_raw *r, struct func_entry *e)
{
	unsigned char head[FUNC_HEAD];
	char name[PHPFRAMES_MAX_NAME + 1], cls[PHPFRAMES_MAX_NAME + 1],
		full[2 * PHPFRAMES_MAX_NAME + 4];
	bool user = r->type != 1;
	size_t span = user ? l->op_size : l->internal_size;
	__u64 file = 0, scope;
	__u32 line = 0;

	e->name = e->file = NO_STR;
	if (span > sizeof(head) || rd(pf, pid, r->func, head, span) || head[0] != r->type)
		return;
	scope = u64_at(head, l->fn_scope);
	if (user) {
		file = u64_at(head, l->op_filename);
		line = u32_at(head, l->op_line_start);
	}
	if (phpframes__fingerprint(u64_at(head, l->fn_name), scope, file, line) != r->fingerprint) {
		pf->st.changed++;
		return;
	}
	name[0] = cls[0] = 0;
	if (u64_at(head, l->fn_name) &&
	    read_str(pf, pid, l, u64_at(head, l->fn_name), name, sizeof(name)) < 0)
		return;
	if (!u64_at(head, l->fn_name) && !user)
		return; /* an internal function always has a name */
	if (scope) {
		__u64 cname;

		if (rd(pf, pid, scope + l->ce_name, &cname, sizeof(cname)) ||
		    read_str(pf, pid, l, cname, cls, sizeof(cls)) < 0)
			return;
	}
	phpframes__name(cls, name, full, sizeof(full));
	e->name = put_str(pf, full);
	if (e->name == NO_STR)
		return;
	if (user) {
		if (read_str(pf, pid, l, file, name, sizeof(name)) < 0)
			return;
		e->file = put_str(pf, name);
		e->line_start = line;
		e->last = u32_at(head, l->op_last);
		e->opcodes = u64_at(head, l->op_opcodes);
		read_lines(pf, pid, l, e);
	}
	e->ok = true;
}

static struct func_entry *lookup(struct phpframes *pf, int pid, const struct phpproc *pp,
				 const struct phpframes_raw *r)
{
	struct func_key k = {.func = r->func, .pid = (__u32)pid, .fp = r->fingerprint};
	struct func_entry *e;
	__u64 h = func_hash(&k);

	e = htab__find(&pf->funcs, h, &k, func_eq, NULL);
	if (e) {
		pf->st.hits++;
		return e;
	}
	pf->st.misses++;
	if (htab__count(&pf->funcs) >= PHPFRAMES_MAX_FUNCS) {
		drop_funcs(pf, 0, true); /* a bounded cache: start over */
		pf->st.evictions++;
	}
	if (htab__add(&pf->funcs, h, (void **)&e))
		return NULL;
	memset(e, 0, sizeof(*e));
	e->key = k;
	read_func(pf, pid, &pp->layout, r, e);
	return e;
}

/* The line opline @opline of @e runs, the function's first when it is
 * none of its oplines. */
static __s64 line_of(const struct phpframes *pf, int pid, const struct phpproc_layout *l,
		     const struct func_entry *e, __u64 opline)
{
	long i = phpframes__op_index(e->opcodes, e->last, l->zop_size, opline);
	__u32 line;

	if (i < 0)
		return e->line_start;
	if (e->lines)
		return e->lines[i];
	if (rd(pf, pid, opline + l->zop_lineno, &line, sizeof(line)))
		return e->line_start;
	return line;
}

size_t phpframes__resolve(struct phpframes *pf, int pid, const struct phpframes_raw *raw, size_t n,
			  struct profile_frame *out)
{
	const struct phpproc *pp = phpframes__process(pf, pid);
	struct func_entry *e;
	size_t i, named = 0;

	if (!pf || !n)
		return 0;
	if (array__grow((void **)&pf->lines, &pf->lines_cap, n - 1, sizeof(*pf->lines), 64,
			PROFILE_MAX_ENTRIES))
		pp = NULL; /* no room for lines: every frame unknown */
	for (i = 0; i < n; i++) {
		struct profile_frame *f = &out[i];
		struct profile_line *ln;

		memset(f, 0, sizeof(*f));
		f->type_name = PHPFRAMES_TYPE;
		f->function = str_of(pf, pf->unknown);
		e = pp && !(raw[i].flags & PHPFRAMES_FRAME_NOFUNC) ? lookup(pf, pid, pp, &raw[i])
								   : NULL;
		if (!e || !e->ok) {
			pf->st.unknown++;
			continue;
		}
		f->function = str_of(pf, e->name);
		if (e->file == NO_STR) {
			named++;
			continue; /* internal: the name alone */
		}
		ln = &pf->lines[i];
		memset(ln, 0, sizeof(*ln));
		ln->function = f->function;
		ln->filename = str_of(pf, e->file);
		ln->start_line = e->line_start;
		ln->line = line_of(pf, pid, &pp->layout, e, raw[i].opline);
		f->lines = ln;
		f->nlines = 1;
		named++;
	}
	return named;
}

/* ---- merge ---- */

size_t phpframes__merge(const struct phpproc *pp, const __u64 *pcs,
			const struct profile_frame *native, size_t nnative,
			const struct profile_frame *php, const struct phpframes_raw *raw,
			size_t nphp, struct profile_frame *out, size_t cap)
{
	size_t i, j = 0, n = 0;

	for (i = 0; i < nnative && n < cap; i++) {
		if (!pp || j >= nphp || pcs[i] < pp->exec_lo || pcs[i] >= pp->exec_hi) {
			/* native code, or an executor call whose PHP frames
			 * were not recorded (cut): kept as it is */
			out[n++] = native[i];
			continue;
		}
		/* this executor call ran the PHP frames up to the first of its
		 * call */
		for (; j < nphp && n < cap; j++) {
			out[n++] = php[j];
			if (raw[j].flags & PHPFRAMES_FRAME_ENTRY) {
				j++;
				break;
			}
		}
	}
	/* the native stack ended first (cut, or not unwound): the rest of
	 * the PHP stack is its root end */
	for (; j < nphp && n < cap; j++)
		out[n++] = php[j];
	return n;
}
