/* perlframes.c - naming Perl frames from their subs and statements, read
 * from the live process, and cached (see perlframes.h). Everything read
 * is untrusted: lengths are capped, the fingerprint and the line checked,
 * and a sub that does not check out is "<unknown perl>", never a guess. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"
#include "proc/perlproc.h"
#include "proc/pyproc.h"
#include "symbolize/perlframes.h"

#define MAX_PROCS 4096
#define NO_STR 0xffffffffu

struct pl_proc {
	int pid;
	struct perlproc pp;
};

/* A sub (kind 0) or a statement (kind 1) of a process; @check is the
 * sub's fingerprint or the statement's line. */
struct obj_key {
	__u64 addr;
	__u32 pid;
	__u32 check;
};

struct obj_entry {
	struct obj_key key;
	__u32 str; /* the sub's full name or the statement's file, NO_STR none */
	__u32 ok;
};

struct perlframes {
	char *proc_root;
	struct htab procs; /* struct pl_proc */
	struct htab subs;  /* struct obj_entry */
	struct htab cops;  /* struct obj_entry */
	struct intern *strings;
	size_t string_bytes;
	__u32 unknown, eval, main; /* indices of the fixed names */
	struct profile_line *lines;
	size_t lines_cap;
	struct perlframes_stats st;
};

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct pl_proc *)elem)->pid == *(const int *)key;
}

static bool obj_eq(const void *elem, const void *key, void *ctx)
{
	const struct obj_key *a = &((const struct obj_entry *)elem)->key, *b = key;

	(void)ctx;
	return a->addr == b->addr && a->pid == b->pid && a->check == b->check;
}

static __u64 obj_hash(const struct obj_key *k)
{
	return htab__hash_u64(k->addr, ((__u64)k->pid << 32) | k->check);
}

__u16 perlframes__fingerprint(__u64 gv)
{
	__u64 h = gv >> 3;

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)(h | 1);
}

size_t perlframes__decode(const __u64 *words, size_t nwords, struct perlframes_raw *out,
			  size_t cap)
{
	size_t n = 0, i;

	for (i = 0; i + PERLFRAMES_WORDS <= nwords && n < cap; i += PERLFRAMES_WORDS, n++) {
		out[n].cv = words[i] & ((1ull << 48) - 1);
		out[n].fingerprint = (__u16)(words[i] >> 48);
		out[n].cop = words[i + 1];
		out[n].line = (__u32)words[i + 2];
		out[n].kind = (__u8)(words[i + 2] >> 32);
		out[n].flags = (__u8)(words[i + 2] >> 40);
	}
	return n;
}

/* Intern @s (@len bytes and its NUL): 0 and *@idx, or an error (past
 * PERLFRAMES_MAX_STRINGS a new string is refused). */
static int put_str(struct perlframes *pf, const char *s, size_t len, __u32 *idx)
{
	bool added = false;
	int err;

	if (!intern__find(pf->strings, s, len + 1, idx))
		return 0;
	if (pf->string_bytes + len + 1 > PERLFRAMES_MAX_STRINGS)
		return -E2BIG;
	err = intern__put(pf->strings, s, len + 1, idx, &added);
	if (!err && added)
		pf->string_bytes += len + 1;
	return err;
}

struct perlframes *perlframes__new(const char *proc_root)
{
	struct perlframes *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->proc_root = proc_root ? strdup(proc_root) : NULL;
	pf->strings = intern__new(1u << 22);
	if ((proc_root && !pf->proc_root) || !pf->strings ||
	    put_str(pf, PERLFRAMES_UNKNOWN, strlen(PERLFRAMES_UNKNOWN), &pf->unknown) ||
	    put_str(pf, PERLFRAMES_EVAL, strlen(PERLFRAMES_EVAL), &pf->eval) ||
	    put_str(pf, PERLFRAMES_MAIN, strlen(PERLFRAMES_MAIN), &pf->main) ||
	    htab__init(&pf->procs, sizeof(struct pl_proc), MAX_PROCS) ||
	    htab__init(&pf->subs, sizeof(struct obj_entry), PERLFRAMES_MAX_SUBS) ||
	    htab__init(&pf->cops, sizeof(struct obj_entry), PERLFRAMES_MAX_COPS)) {
		perlframes__free(pf);
		return NULL;
	}
	return pf;
}

void perlframes__free(struct perlframes *pf)
{
	if (!pf)
		return;
	htab__release(&pf->cops);
	htab__release(&pf->subs);
	htab__release(&pf->procs);
	intern__free(pf->strings);
	free(pf->lines);
	free(pf->proc_root);
	free(pf);
}

const struct perlproc *perlframes__process(const struct perlframes *pf, int pid)
{
	const struct pl_proc *p;

	if (!pf)
		return NULL;
	p = htab__find(&pf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	return p ? &p->pp : NULL;
}

static void drop_objs(struct htab *h, int pid)
{
	struct obj_entry *e;
	size_t it = 0;

	while ((e = htab__next(h, &it)))
		if (e->key.pid == (__u32)pid)
			htab__remove(h, e);
}

void perlframes__forget(struct perlframes *pf, int pid)
{
	struct pl_proc *p;

	if (!pf)
		return;
	p = htab__find(&pf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	if (p)
		htab__remove(&pf->procs, p);
	drop_objs(&pf->subs, pid);
	drop_objs(&pf->cops, pid);
}

int perlframes__set_process(struct perlframes *pf, int pid, const struct perlproc *pp)
{
	const struct perlproc *old;
	struct pl_proc *p;
	int err;

	if (!pf)
		return -EINVAL;
	old = perlframes__process(pf, pid);
	if (old && pp && !memcmp(old, pp, sizeof(*pp)))
		return 0; /* the same interpreter: its subs stay */
	perlframes__forget(pf, pid);
	if (!pp)
		return 0;
	err = htab__add(&pf->procs, htab__hash_u64((__u64)pid, 0), (void **)&p);
	if (err)
		return err;
	p->pid = pid;
	p->pp = *pp;
	return 0;
}

void perlframes__stats(const struct perlframes *pf, struct perlframes_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pf)
		return;
	*out = pf->st;
	out->cached = htab__count(&pf->subs);
}

/* ---- reading ---- */

static int rd(const struct perlframes *pf, int pid, __u64 addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	return pyproc__read_mem(pf->proc_root, pid, addr, buf, len);
}

static int rd_word(const struct perlframes *pf, int pid, __u64 addr, __u64 *v)
{
	return rd(pf, pid, addr, v, sizeof(*v));
}

/* The characters of HEK @hek into @out (room for PERLFRAMES_MAX_NAME + 1):
 * 0 and *@len, or -errno (-EINVAL: not a name). */
static int read_hek(const struct perlframes *pf, int pid, const struct perlproc_layout *l,
		    __u64 hek, char *out, size_t *len)
{
	__s32 n = 0;
	size_t i;
	int err;

	err = rd(pf, pid, hek + l->hek_len, &n, sizeof(n));
	if (err)
		return err;
	if (n <= 0 || n > PERLFRAMES_MAX_NAME)
		return -EINVAL;
	err = rd(pf, pid, hek + l->hek_key, out, (size_t)n);
	if (err)
		return err;
	for (i = 0; i < (size_t)n; i++)
		if (!out[i])
			return -EINVAL;
	out[n] = 0;
	*len = (size_t)n;
	return 0;
}

/* The name of stash (package) @hv: HvNAME, from the aux part of its body
 * (a hash with SVf_OOK has one). */
static int read_stash(const struct perlframes *pf, int pid, const struct perlproc_layout *l,
		      __u64 hv, char *out, size_t *len)
{
	__u64 body = 0, name = 0, aux;
	__u32 flags = 0;
	__s32 count = 0;

	if (rd_word(pf, pid, hv + l->sv_any, &body) ||
	    rd(pf, pid, hv + l->sv_flags, &flags, sizeof(flags)) || !(flags & l->svf_ook))
		return -EINVAL;
	aux = body + l->hv_aux;
	if (rd_word(pf, pid, aux + l->aux_name, &name) ||
	    rd(pf, pid, aux + l->aux_name_count, &count, sizeof(count)) || !name)
		return -EINVAL;
	if (count) { /* a list of names (effective name first) */
		__u64 list = name;

		if (rd_word(pf, pid, list, &name) ||
		    (!name && count < 0 && rd_word(pf, pid, list + 8, &name)) || !name)
			return -EINVAL;
	}
	return read_hek(pf, pid, l, name, out, len);
}

/* "Package::sub" of the sub at @cv whose fingerprint is @fp: 0 and the
 * interned name, -ESTALE when the CV no longer matches, else -errno. */
static int read_sub(struct perlframes *pf, int pid, const struct perlproc *pp, __u64 cv,
		    __u16 fp, __u32 *idx)
{
	const struct perlproc_layout *l = &pp->layout;
	char pkg[PERLFRAMES_MAX_NAME + 1], name[PERLFRAMES_MAX_NAME + 1];
	char full[2 * PERLFRAMES_MAX_NAME + 3];
	__u64 body = 0, gv = 0, stash = 0, gbody = 0, hek;
	size_t plen = 0, nlen = 0;
	__u32 cvflags = 0;
	int err;

	if (rd_word(pf, pid, cv + l->sv_any, &body) || rd_word(pf, pid, body + l->cv_gv, &gv) ||
	    rd(pf, pid, body + l->cv_flags, &cvflags, sizeof(cvflags)))
		return -EFAULT;
	if (!gv || perlframes__fingerprint(gv) != fp)
		return -ESTALE;
	if (cvflags & l->cvf_named) { /* a lexical sub: a name HEK, the CV's stash */
		hek = gv;
		err = rd_word(pf, pid, body + l->cv_stash, &stash);
	} else {
		err = rd_word(pf, pid, gv + l->sv_any, &gbody);
		if (!err)
			err = rd_word(pf, pid, gbody + l->gv_namehek, &hek);
		if (!err)
			err = rd_word(pf, pid, gbody + l->gv_stash, &stash);
	}
	if (!err)
		err = read_hek(pf, pid, l, hek, name, &nlen);
	if (err)
		return err;
	if (!stash || read_stash(pf, pid, l, stash, pkg, &plen))
		return put_str(pf, name, nlen, idx); /* no package: the bare name */
	memcpy(full, pkg, plen);
	memcpy(full + plen, "::", 2);
	memcpy(full + plen + 2, name, nlen + 1);
	return put_str(pf, full, plen + 2 + nlen, idx);
}

/* The file of statement @cop, which must still read line @line. */
static int read_file(struct perlframes *pf, int pid, const struct perlproc *pp, __u64 cop,
		     __u32 line, __u32 *idx)
{
	const struct perlproc_layout *l = &pp->layout;
	char buf[PERLFRAMES_MAX_FILE + 1];
	__u64 file = 0;
	__u32 now = 0;
	size_t len = 0, chunk;

	if (rd(pf, pid, cop + l->cop_line, &now, sizeof(now)) ||
	    rd_word(pf, pid, cop + l->cop_file, &file) || !file)
		return -EFAULT;
	if (now != line)
		return -ESTALE;
	/* a C string: read in pieces that stay within a page */
	while (len < PERLFRAMES_MAX_FILE) {
		chunk = 4096 - ((file + len) & 4095);
		if (chunk > PERLFRAMES_MAX_FILE - len)
			chunk = PERLFRAMES_MAX_FILE - len;
		if (rd(pf, pid, file + len, buf + len, chunk))
			return -EFAULT;
		buf[len + chunk] = 0;
		if (strlen(buf + len) < chunk)
			break;
		len += chunk;
	}
	len = strlen(buf);
	if (!len || len >= PERLFRAMES_MAX_FILE)
		return -EINVAL;
	return put_str(pf, buf, len, idx);
}

/* The cached entry of (@addr, @check) in @h, read with @sub or the file
 * reader when missing; NULL when no room. */
static struct obj_entry *lookup(struct perlframes *pf, struct htab *h, __u32 max, int pid,
				const struct perlproc *pp, __u64 addr, __u32 check, bool sub)
{
	struct obj_key k = {.addr = addr, .pid = (__u32)pid, .check = check};
	struct obj_entry *e, tmp = {.key = k, .str = NO_STR};
	__u64 hh = obj_hash(&k);
	int err;

	e = htab__find(h, hh, &k, obj_eq, NULL);
	if (e) {
		pf->st.hits += sub;
		return e;
	}
	if (sub) {
		pf->st.misses++;
		err = read_sub(pf, pid, pp, addr, (__u16)check, &tmp.str);
		if (err == -ESTALE)
			pf->st.changed++;
	} else {
		pf->st.cops++;
		err = read_file(pf, pid, pp, addr, check, &tmp.str);
	}
	tmp.ok = !err;
	if (err == -ESRCH)
		return NULL; /* the process is gone: nothing worth caching */
	if (htab__count(h) >= max) {
		htab__clear(h);
		pf->st.evictions++;
	}
	if (htab__add(h, hh, (void **)&e))
		return NULL;
	*e = tmp;
	return e;
}

static const char *str_of(const struct perlframes *pf, __u32 idx)
{
	return idx == NO_STR ? NULL : intern__get(pf->strings, idx, NULL);
}

/* The function name of frame @r, NULL when unknown. */
static const char *frame_name(struct perlframes *pf, int pid, const struct perlproc *pp,
			      const struct perlframes_raw *r)
{
	struct obj_entry *e;

	if (r->kind == PERLFRAMES_KIND_MAIN)
		return str_of(pf, pf->main);
	if (r->kind == PERLFRAMES_KIND_EVAL)
		return str_of(pf, pf->eval);
	if (r->kind != PERLFRAMES_KIND_SUB || !r->cv || (r->flags & PERLFRAMES_FRAME_NOCV))
		return NULL;
	e = lookup(pf, &pf->subs, PERLFRAMES_MAX_SUBS, pid, pp, r->cv, r->fingerprint, true);
	return e && e->ok ? str_of(pf, e->str) : NULL;
}

size_t perlframes__resolve(struct perlframes *pf, int pid, const struct perlframes_raw *raw,
			   size_t n, struct profile_frame *out)
{
	const struct perlproc *pp = perlframes__process(pf, pid);
	struct obj_entry *e;
	size_t i, named = 0;

	if (!pf || !n)
		return 0;
	if (array__grow((void **)&pf->lines, &pf->lines_cap, n - 1, sizeof(*pf->lines), 64,
			PROFILE_MAX_ENTRIES))
		pp = NULL; /* no room for lines: every frame unknown */
	for (i = 0; i < n; i++) {
		struct profile_frame *f = &out[i];
		struct profile_line *ln = pp ? &pf->lines[i] : NULL;
		const char *name = pp ? frame_name(pf, pid, pp, &raw[i]) : NULL;

		memset(f, 0, sizeof(*f));
		f->type_name = PERLFRAMES_TYPE;
		f->function = str_of(pf, pf->unknown);
		if (!name) {
			pf->st.unknown++;
			continue;
		}
		memset(ln, 0, sizeof(*ln));
		ln->function = name;
		e = raw[i].cop ? lookup(pf, &pf->cops, PERLFRAMES_MAX_COPS, pid, pp, raw[i].cop,
					raw[i].line, false)
			       : NULL;
		if (e && e->ok) {
			ln->filename = str_of(pf, e->str);
			ln->line = raw[i].line;
		}
		f->function = name;
		f->lines = ln;
		f->nlines = 1;
		named++;
	}
	return named;
}

/* ---- merge ---- */

size_t perlframes__merge(const struct perlproc *pp, const __u64 *pcs,
			 const struct profile_frame *native, size_t nnative,
			 const struct profile_frame *perl, const struct perlframes_raw *raw,
			 size_t nperl, struct profile_frame *out, size_t cap)
{
	size_t i, j = 0, n = 0;

	for (i = 0; i < nnative && n < cap; i++) {
		if (!pp || j >= nperl || !perlproc__in_runops(pp, pcs[i])) {
			/* native code, or a runops call whose Perl frames
			 * were not recorded (cut): kept as it is */
			out[n++] = native[i];
			continue;
		}
		/* this runops call ran the Perl frames up to the first of
		 * its call */
		for (; j < nperl && n < cap; j++) {
			out[n++] = perl[j];
			if (raw[j].flags & PERLFRAMES_FRAME_ENTRY) {
				j++;
				break;
			}
		}
	}
	/* the native stack ended first (cut, or not unwound): the rest of
	 * the Perl stack is its root end */
	for (; j < nperl && n < cap; j++)
		out[n++] = perl[j];
	return n;
}
