/* pyframes.c - naming Python frames from their code objects, read from
 * the live process, and cached (see pyframes.h). Everything read is
 * untrusted: sizes are capped, types and the fingerprint checked, and a
 * frame that does not check out is "<unknown python>", never a guess. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"
#include "proc/pyproc.h"
#include "symbolize/pyframes.h"

#define UNKNOWN "<unknown python>"
#define MAX_PROCS 4096
#define NO_STR 0xffffffffu

struct pf_proc {
	int pid;
	struct pyproc pp;
};

struct code_key {
	__u64 code;
	__u32 pid;
	__u32 fp;
};

/* A code object read (or found unreadable: ok false). */
struct code_entry {
	struct code_key key;
	__u32 name, qualname, file; /* string indices, NO_STR none */
	__s32 firstlineno;
	__u32 ok;
	unsigned char *linetable; /* owned */
	__u32 nlinetable;
	__u32 memo_offset; /* the last offset asked and its line */
	__s64 memo_line;
};

struct pyframes {
	char *proc_root;
	struct htab procs; /* struct pf_proc */
	struct htab codes; /* struct code_entry */
	struct intern *strings;
	size_t string_bytes;
	__u32 unknown; /* index of UNKNOWN */
	struct profile_line *lines;
	size_t lines_cap;
	struct pyframes_stats st;
};

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct pf_proc *)elem)->pid == *(const int *)key;
}

static bool code_eq(const void *elem, const void *key, void *ctx)
{
	const struct code_key *a = &((const struct code_entry *)elem)->key, *b = key;

	(void)ctx;
	return a->code == b->code && a->pid == b->pid && a->fp == b->fp;
}

static __u64 code_hash(const struct code_key *k)
{
	return htab__hash_u64(k->code, ((__u64)k->pid << 32) | k->fp);
}

struct pyframes *pyframes__new(const char *proc_root)
{
	struct pyframes *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->proc_root = proc_root ? strdup(proc_root) : NULL;
	pf->strings = intern__new(1u << 22);
	if ((proc_root && !pf->proc_root) || !pf->strings ||
	    intern__put(pf->strings, UNKNOWN, sizeof(UNKNOWN), &pf->unknown, NULL) ||
	    htab__init(&pf->procs, sizeof(struct pf_proc), MAX_PROCS) ||
	    htab__init(&pf->codes, sizeof(struct code_entry), PYFRAMES_MAX_CODES)) {
		pyframes__free(pf);
		return NULL;
	}
	return pf;
}

static void drop_codes(struct pyframes *pf, int pid, bool all)
{
	struct code_entry *e;
	size_t it = 0;

	while ((e = htab__next(&pf->codes, &it))) {
		if (!all && e->key.pid != (__u32)pid)
			continue;
		free(e->linetable);
		htab__remove(&pf->codes, e);
	}
	if (all)
		htab__clear(&pf->codes);
}

void pyframes__free(struct pyframes *pf)
{
	if (!pf)
		return;
	drop_codes(pf, 0, true);
	htab__release(&pf->codes);
	htab__release(&pf->procs);
	intern__free(pf->strings);
	free(pf->lines);
	free(pf->proc_root);
	free(pf);
}

const struct pyproc *pyframes__process(const struct pyframes *pf, int pid)
{
	const struct pf_proc *p;

	if (!pf)
		return NULL;
	p = htab__find(&pf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	return p ? &p->pp : NULL;
}

void pyframes__forget(struct pyframes *pf, int pid)
{
	struct pf_proc *p;

	if (!pf)
		return;
	p = htab__find(&pf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	if (p)
		htab__remove(&pf->procs, p);
	drop_codes(pf, pid, false);
}

int pyframes__set_process(struct pyframes *pf, int pid, const struct pyproc *pp)
{
	const struct pyproc *old;
	struct pf_proc *p;
	int err;

	if (!pf)
		return -EINVAL;
	old = pyframes__process(pf, pid);
	if (old && pp && !memcmp(old, pp, sizeof(*pp)))
		return 0; /* the same interpreter: its code objects stay */
	pyframes__forget(pf, pid); /* a new program: its old code objects go */
	if (!pp)
		return 0;
	err = htab__add(&pf->procs, htab__hash_u64((__u64)pid, 0), (void **)&p);
	if (err)
		return err;
	p->pid = pid;
	p->pp = *pp;
	return 0;
}

void pyframes__stats(const struct pyframes *pf, struct pyframes_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pf)
		return;
	*out = pf->st;
	out->cached = htab__count(&pf->codes);
}

size_t pyframes__decode(const __u64 *words, size_t nwords, struct pyframes_raw *out, size_t cap)
{
	size_t n = 0, i;

	for (i = 0; i + 1 < nwords && n < cap; i += 2, n++) {
		out[n].code = words[i] & ((1ull << 48) - 1);
		out[n].fingerprint = (__u16)(words[i] >> 48);
		out[n].offset = (__u32)words[i + 1];
		out[n].flags = (__u16)(words[i + 1] >> 32);
	}
	return n;
}

/* ---- reading code objects ---- */

#define CODE_HEAD 256 /* bytes of a code object read: every field profcap uses */

static int rd(const struct pyframes *pf, int pid, __u64 addr, void *buf, size_t len)
{
	return pyproc__read_mem(pf->proc_root, pid, addr, buf, len);
}

/* UTF-8 of code point @c into @out (4 bytes of room): bytes written. */
static size_t put_utf8(__u32 c, char *out)
{
	if (c >= 0xd800 && c < 0xe000)
		c = 0xfffd; /* a lone surrogate */
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 63));
		out[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 63));
	out[2] = (char)(0x80 | ((c >> 6) & 63));
	out[3] = (char)(0x80 | (c & 63));
	return 4;
}

/* The characters of a compact str of @len characters of @kind bytes each
 * at @data, as UTF-8 into @out (4 * PYFRAMES_MAX_NAME + 1). */
static int read_wide(const struct pyframes *pf, int pid, __u64 data, size_t len, unsigned kind,
		     char *out, size_t *outlen)
{
	unsigned char raw[4 * PYFRAMES_MAX_NAME];
	size_t i, n = 0;
	__u32 c;
	int err;

	if (kind != 1 && kind != 2 && kind != 4)
		return -EINVAL;
	err = rd(pf, pid, data, raw, len * kind);
	if (err)
		return err;
	for (i = 0; i < len; i++) {
		if (kind == 1)
			c = raw[i];
		else if (kind == 2)
			c = (__u32)raw[2 * i] | (__u32)raw[2 * i + 1] << 8;
		else
			memcpy(&c, raw + 4 * i, 4);
		if (!c || c > 0x10ffff)
			return -EINVAL;
		n += put_utf8(c, out + n);
	}
	out[n] = 0;
	*outlen = n;
	return 0;
}

/* The str (2.7: str, bytes) at @addr as NUL-terminated UTF-8 into @out
 * (4 * PYFRAMES_MAX_NAME + 1 bytes). */
static int read_str(const struct pyframes *pf, int pid, const struct pyproc_layout *l,
		    __u64 addr, char *out, size_t *outlen)
{
	unsigned char head[128];
	__u32 state = 0;
	__s64 len;
	size_t i, need;
	int err;

	if (!addr)
		return -ENOENT;
	need = (l->str_state == PYPROC_NONE ? l->str_ascii_data : l->str_compact_data);
	if (need > sizeof(head) || (size_t)l->str_length + 8 > sizeof(head))
		return -EINVAL;
	err = rd(pf, pid, addr, head, need);
	if (err)
		return err;
	memcpy(&len, head + l->str_length, 8);
	if (len < 0 || len > PYFRAMES_MAX_NAME)
		return -E2BIG;
	if (l->str_state != PYPROC_NONE) {
		memcpy(&state, head + l->str_state, 4);
		if (!((state >> 5) & 1))
			return -EINVAL; /* not compact: a legacy str */
		if (!((state >> 6) & 1))
			return read_wide(pf, pid, addr + l->str_compact_data, (size_t)len,
					 (state >> 2) & 7, out, outlen);
	}
	err = rd(pf, pid, addr + l->str_ascii_data, out, (size_t)len);
	if (err)
		return err;
	for (i = 0; i < (size_t)len; i++)
		if (!out[i] || (l->str_state != PYPROC_NONE && (unsigned char)out[i] >= 0x80))
			return -EINVAL;
	out[len] = 0;
	*outlen = (size_t)len;
	return 0;
}

/* Intern string @s (@len bytes and its NUL): 0 and *@idx, or an error
 * (past PYFRAMES_MAX_STRINGS a new string is refused). */
static int put_str(struct pyframes *pf, const char *s, size_t len, __u32 *idx)
{
	bool added = false;
	int err;

	if (!intern__find(pf->strings, s, len + 1, idx))
		return 0;
	if (pf->string_bytes + len + 1 > PYFRAMES_MAX_STRINGS)
		return -E2BIG;
	err = intern__put(pf->strings, s, len + 1, idx, &added);
	if (!err && added)
		pf->string_bytes += len + 1;
	return err;
}

static int read_name(struct pyframes *pf, int pid, const struct pyproc_layout *l, __u64 addr,
		     __u32 *idx)
{
	char buf[4 * PYFRAMES_MAX_NAME + 1];
	size_t len;
	int err = read_str(pf, pid, l, addr, buf, &len);

	return err ?: put_str(pf, buf, len, idx);
}

static int read_linetable(struct pyframes *pf, int pid, const struct pyproc_layout *l,
			  __u64 addr, struct code_entry *e)
{
	__s64 size = 0;
	int err;

	if (!addr)
		return -ENOENT;
	err = rd(pf, pid, addr + l->bytes_size, &size, 8);
	if (err)
		return err;
	if (size < 0 || size > PYFRAMES_MAX_LINETABLE)
		return -E2BIG;
	e->linetable = malloc(size ? (size_t)size : 1);
	if (!e->linetable)
		return -ENOMEM;
	err = rd(pf, pid, addr + l->bytes_data, e->linetable, (size_t)size);
	if (err) {
		free(e->linetable);
		e->linetable = NULL;
		return err;
	}
	e->nlinetable = (__u32)size;
	return 0;
}

static __u64 word_at(const unsigned char *head, __u16 off)
{
	__u64 v = 0;

	if (off != PYPROC_NONE && off + 8 <= CODE_HEAD)
		memcpy(&v, head + off, 8);
	return v;
}

/* Bytes of a code object holding every field read (its type first), 0
 * when a field lies past CODE_HEAD: the object's end may be the end of
 * its mapping, so no more is read. */
static size_t head_size(const struct pyproc_layout *l)
{
	const __u16 ptrs[] = {l->code_name, l->code_qualname, l->code_filename, l->code_linetable};
	size_t need = 16, i;

	if ((size_t)l->code_firstlineno + 4 > need)
		need = (size_t)l->code_firstlineno + 4;
	for (i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		if (ptrs[i] != PYPROC_NONE && (size_t)ptrs[i] + 8 > need)
			need = (size_t)ptrs[i] + 8;
	return need <= CODE_HEAD ? need : 0;
}

/* Read code object @e->key of process @pp into @e: e->ok when it checks
 * out (its type, its first line against the fingerprint, its names). */
static void read_code(struct pyframes *pf, const struct pyproc *pp, struct code_entry *e)
{
	const struct pyproc_layout *l = &pp->layout;
	unsigned char head[CODE_HEAD] = {0};
	int pid = (int)e->key.pid;
	size_t need;
	__s32 first;

	e->name = e->qualname = e->file = NO_STR;
	need = head_size(l);
	if (!need || rd(pf, pid, e->key.code, head, need))
		return;
	if (pp->code_type && word_at(head, 8) != pp->code_type)
		return; /* not a code object (any more) */
	memcpy(&first, head + l->code_firstlineno, 4);
	if ((__u32)(first & 0xffff) != e->key.fp) {
		pf->st.changed++;
		return;
	}
	e->firstlineno = first;
	if (read_name(pf, pid, l, word_at(head, l->code_name), &e->name))
		return;
	if (l->code_qualname != PYPROC_NONE &&
	    read_name(pf, pid, l, word_at(head, l->code_qualname), &e->qualname))
		e->qualname = NO_STR;
	if (read_name(pf, pid, l, word_at(head, l->code_filename), &e->file))
		e->file = NO_STR;
	if (read_linetable(pf, pid, l, word_at(head, l->code_linetable), e))
		e->nlinetable = 0;
	e->memo_offset = ~0u;
	e->ok = 1;
}

static struct code_entry *lookup(struct pyframes *pf, int pid, const struct pyproc *pp,
				 const struct pyframes_raw *r)
{
	struct code_key k = {.code = r->code, .pid = (__u32)pid, .fp = r->fingerprint};
	struct code_entry *e, tmp;
	__u64 h = code_hash(&k);

	e = htab__find(&pf->codes, h, &k, code_eq, NULL);
	if (e) {
		pf->st.hits++;
		return e;
	}
	pf->st.misses++;
	memset(&tmp, 0, sizeof(tmp));
	tmp.key = k;
	read_code(pf, pp, &tmp);
	if (htab__count(&pf->codes) >= PYFRAMES_MAX_CODES) {
		drop_codes(pf, 0, true);
		pf->st.evictions++;
	}
	if (htab__add(&pf->codes, h, (void **)&e)) {
		free(tmp.linetable);
		return NULL;
	}
	*e = tmp;
	return e;
}

static const char *str_of(const struct pyframes *pf, __u32 idx)
{
	return idx == NO_STR ? NULL : intern__get(pf->strings, idx, NULL);
}

static __s64 line_of(const struct pyproc *pp, struct code_entry *e, __u32 offset)
{
	if (e->memo_offset == offset)
		return e->memo_line;
	if (!e->linetable)
		return 0;
	e->memo_line = pyframes__line(pp->layout.version, pp->layout.code_bytecode, e->linetable,
				      e->nlinetable, e->firstlineno, offset);
	e->memo_offset = offset;
	return e->memo_line;
}

size_t pyframes__resolve(struct pyframes *pf, int pid, const struct pyframes_raw *raw, size_t n,
			 struct profile_frame *out)
{
	const struct pyproc *pp = pyframes__process(pf, pid);
	struct code_entry *e;
	size_t i, named = 0;

	if (!pf || !n)
		return 0;
	if (array__grow((void **)&pf->lines, &pf->lines_cap, n - 1, sizeof(*pf->lines), 64,
			PROFILE_MAX_ENTRIES))
		pp = NULL; /* no room for lines: every frame unknown */
	for (i = 0; i < n; i++) {
		struct profile_frame *f = &out[i];
		struct profile_line *ln;
		const char *name, *qual;

		memset(f, 0, sizeof(*f));
		f->type_name = PYFRAMES_TYPE;
		f->function = str_of(pf, pf->unknown);
		e = pp && !(raw[i].flags & PYFRAMES_FRAME_NOCODE) ? lookup(pf, pid, pp, &raw[i])
							       : NULL;
		if (!e || !e->ok) {
			pf->st.unknown++;
			continue;
		}
		name = str_of(pf, e->name);
		qual = str_of(pf, e->qualname);
		ln = &pf->lines[i];
		memset(ln, 0, sizeof(*ln));
		ln->function = qual ? qual : name;
		ln->system_name = qual && strcmp(qual, name) ? name : NULL;
		ln->filename = str_of(pf, e->file);
		ln->start_line = e->firstlineno > 0 ? e->firstlineno : 0;
		ln->line = line_of(pp, e, raw[i].offset);
		f->function = ln->function;
		f->system_name = ln->system_name;
		f->lines = ln;
		f->nlines = 1;
		named++;
	}
	return named;
}

/* ---- merge ---- */

static bool in_eval(const struct pyproc *pp, __u64 pc)
{
	__u32 i;

	for (i = 0; i < pp->neval && i < PYPROC_EVAL_RANGES; i++)
		if (pc >= pp->eval[i].lo && pc < pp->eval[i].hi)
			return true;
	return false;
}

size_t pyframes__merge(const struct pyproc *pp, const __u64 *pcs, const struct profile_frame *native,
		       size_t nnative, const struct profile_frame *py,
		       const struct pyframes_raw *raw, size_t npy, struct profile_frame *out,
		       size_t cap)
{
	size_t i, j = 0, n = 0;
	bool one = pp && (pp->layout.flags & PYPROC_ONE_PER_CALL);

	for (i = 0; i < nnative && n < cap; i++) {
		if (!pp || j >= npy || !in_eval(pp, pcs[i])) {
			/* native code, or an eval call whose Python frames
			 * were not recorded (cut): kept as it is */
			out[n++] = native[i];
			continue;
		}
		/* this eval-loop call ran the Python frames up to the first
		 * of its call */
		for (; j < npy && n < cap; j++) {
			out[n++] = py[j];
			if (one || (raw[j].flags & PYFRAMES_FRAME_ENTRY)) {
				j++;
				break;
			}
		}
	}
	/* the native stack ended first (truncated, or not unwound): the
	 * rest of the Python stack is its root end */
	for (; j < npy && n < cap; j++)
		out[n++] = py[j];
	return n;
}
