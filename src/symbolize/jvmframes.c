/* jvmframes.c - naming Java frames from HotSpot's objects, read from the
 * live process, and cached (see jvmframes.h). Everything read is
 * untrusted: sizes are capped, fingerprints checked, an nmethod's scopes
 * must end at its own method, and a frame that does not check out is
 * "<unknown java>", never a guess. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"
#include "proc/jvmproc.h"
#include "proc/pyproc.h"
#include "symbolize/jvmframes.h"
#include "symbolize/jvmframes_threads.h"
#include "util/clock.h"

#define UNKNOWN "<unknown java>"
#define MAX_PROCS 1024
#define NO_STR 0xffffffffu
#define HEAD_MAX 512	  /* bytes of an object's header read */
#define MAX_METADATA 8192 /* metadata entries of an nmethod read */
#define NM_NATIVE 2	  /* jf_entry.is_nm of a native method's wrapper */

struct jf_proc {
	int pid;
	struct jvmproc jp;
};

struct ent_key {
	__u64 addr;
	__u32 pid;
	__u32 kind; /* JVMFRAMES_KIND_INTERP: a Method; _BLOB: a CodeBlob */
};

/* A Method or a CodeBlob read (or found unreadable: ok 0). */
struct jf_entry {
	struct ent_key key;
	__u32 fp, ok;
	__u32 name, file; /* string indices (a stub: its blob name) */
	__u32 sys;	  /* name with the JVM signature: "pkg.Class.m(J)V", NO_STR none */
	/* Method */
	__u8 *linetable; /* owned */
	__u32 nlinetable;
	/* nmethod (is_nm) */
	__u32 is_nm; /* 1, or NM_NATIVE: a native method's wrapper (method only) */
	__u64 method;	/* the nmethod's own Method* */
	__u32 code_off; /* code begin - blob */
	__u32 npcs;	/* pc descriptors, as (pc offset, scope offset) pairs */
	__s32 *pcs;	/* owned */
	__u8 *scopes;	/* owned */
	__u32 nscopes;
	__u64 *meta; /* owned */
	__u32 nmeta;
};

struct jvmframes {
	char *proc_root;
	struct htab procs;   /* struct jf_proc */
	struct htab entries; /* struct jf_entry */
	struct intern *strings;
	size_t string_bytes;
	__u32 unknown;
	struct profile_line *lines;
	size_t lines_cap;
	size_t *first; /* per frame of a resolve: its first line */
	size_t first_cap;
	struct jvmframes_stats st;
	struct jvmthreads *threads; /* Java thread names */
};

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct jf_proc *)elem)->pid == *(const int *)key;
}

static bool ent_eq(const void *elem, const void *key, void *ctx)
{
	const struct ent_key *a = &((const struct jf_entry *)elem)->key, *b = key;

	(void)ctx;
	return a->addr == b->addr && a->pid == b->pid && a->kind == b->kind;
}

static __u64 ent_hash(const struct ent_key *k)
{
	return htab__hash_u64(k->addr, ((__u64)k->pid << 32) | k->kind);
}

static void ent_release(struct jf_entry *e)
{
	free(e->linetable);
	free(e->pcs);
	free(e->scopes);
	free(e->meta);
}

struct jvmframes *jvmframes__new(const char *proc_root)
{
	struct jvmframes *jf = calloc(1, sizeof(*jf));

	if (!jf)
		return NULL;
	jf->proc_root = proc_root ? strdup(proc_root) : NULL;
	jf->strings = intern__new(1u << 22);
	jf->threads = jvmthreads__new(jf->proc_root);
	if ((proc_root && !jf->proc_root) || !jf->strings || !jf->threads ||
	    intern__put(jf->strings, UNKNOWN, sizeof(UNKNOWN), &jf->unknown, NULL) ||
	    htab__init(&jf->procs, sizeof(struct jf_proc), MAX_PROCS) ||
	    htab__init(&jf->entries, sizeof(struct jf_entry), JVMFRAMES_MAX_ENTRIES)) {
		jvmframes__free(jf);
		return NULL;
	}
	return jf;
}

static void drop_entries(struct jvmframes *jf, int pid, bool all)
{
	struct jf_entry *e;
	size_t it = 0;

	while ((e = htab__next(&jf->entries, &it))) {
		if (!all && e->key.pid != (__u32)pid)
			continue;
		ent_release(e);
		htab__remove(&jf->entries, e);
	}
	if (all)
		htab__clear(&jf->entries);
}

void jvmframes__free(struct jvmframes *jf)
{
	if (!jf)
		return;
	drop_entries(jf, 0, true);
	jvmthreads__free(jf->threads);
	htab__release(&jf->entries);
	htab__release(&jf->procs);
	intern__free(jf->strings);
	free(jf->lines);
	free(jf->first);
	free(jf->proc_root);
	free(jf);
}

const struct jvmproc *jvmframes__process(const struct jvmframes *jf, int pid)
{
	const struct jf_proc *p;

	if (!jf)
		return NULL;
	p = htab__find(&jf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	return p ? &p->jp : NULL;
}

void jvmframes__forget(struct jvmframes *jf, int pid)
{
	struct jf_proc *p;

	if (!jf)
		return;
	p = htab__find(&jf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	if (p)
		htab__remove(&jf->procs, p);
	drop_entries(jf, pid, false);
	jvmthreads__forget(jf->threads, pid);
}

const char *jvmframes__thread_name(struct jvmframes *jf, int pid, int tid, const char *comm)
{
	const struct jvmproc *jp = jvmframes__process(jf, pid);

	return jp ? jvmthreads__name(jf->threads, jp, pid, tid, comm, clock__mono_ns()) : NULL;
}

int jvmframes__set_process(struct jvmframes *jf, int pid, const struct jvmproc *jp)
{
	const struct jvmproc *old;
	struct jf_proc *p;
	int err;

	if (!jf)
		return -EINVAL;
	old = jvmframes__process(jf, pid);
	if (old && jp && !memcmp(old, jp, sizeof(*jp)))
		return 0;
	jvmframes__forget(jf, pid);
	if (!jp)
		return 0;
	err = htab__add(&jf->procs, htab__hash_u64((__u64)pid, 0), (void **)&p);
	if (err)
		return err;
	p->pid = pid;
	p->jp = *jp;
	return 0;
}

void jvmframes__stats(const struct jvmframes *jf, struct jvmframes_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!jf)
		return;
	*out = jf->st;
	out->cached = htab__count(&jf->entries);
}

/* ---- reading ---- */

static int rd(const struct jvmframes *jf, int pid, __u64 addr, void *buf, size_t len)
{
	return pyproc__read_mem(jf->proc_root, pid, addr, buf, len);
}

static __u64 u64_at(const __u8 *h, __u16 off)
{
	__u64 v = 0;

	if (off != JVMPROC_NONE && off + 8u <= HEAD_MAX)
		memcpy(&v, h + off, 8);
	return v;
}

static __u32 u32_at(const __u8 *h, __u16 off)
{
	__u32 v = 0;

	if (off != JVMPROC_NONE && off + 4u <= HEAD_MAX)
		memcpy(&v, h + off, 4);
	return v;
}

static __u16 u16_at(const __u8 *h, __u16 off)
{
	__u16 v = 0;

	if (off != JVMPROC_NONE && off + 2u <= HEAD_MAX)
		memcpy(&v, h + off, 2);
	return v;
}

static int put_str(struct jvmframes *jf, const char *s, size_t len, __u32 *idx)
{
	bool added = false;
	int err;

	if (!intern__find(jf->strings, s, len + 1, idx))
		return 0;
	if (jf->string_bytes + len + 1 > JVMFRAMES_MAX_STRINGS)
		return -E2BIG;
	err = intern__put(jf->strings, s, len + 1, idx, &added);
	if (!err && added)
		jf->string_bytes += len + 1;
	return err;
}

/* The bytes of Symbol @sym (modified UTF-8, not NUL-terminated) appended
 * to @out at *@len (room JVMFRAMES_MAX_NAME + 1 in all), '/' as '.' when
 * @dots. */
static int read_symbol(const struct jvmframes *jf, int pid, const struct jvmproc_layout *l,
		       __u64 sym, bool dots, char *out, size_t *len)
{
	__u16 n;
	size_t i;
	int err;

	if (!sym)
		return -ENOENT;
	err = rd(jf, pid, sym + l->sym_length, &n, sizeof(n));
	if (err)
		return err;
	if (!n || *len + n > JVMFRAMES_MAX_NAME)
		return -E2BIG;
	err = rd(jf, pid, sym + l->sym_body, out + *len, n);
	if (err)
		return err;
	for (i = *len; i < *len + n; i++) {
		if (!out[i])
			return -EINVAL;
		if (dots && out[i] == '/')
			out[i] = '.';
	}
	*len += n;
	out[*len] = 0;
	return 0;
}

/* The Symbol* in slot @idx of constant pool @cp. */
static int cp_symbol(const struct jvmframes *jf, int pid, const struct jvmproc_layout *l, __u64 cp,
		     __u16 idx, __u64 *sym)
{
	if (!idx)
		return -ENOENT;
	return rd(jf, pid, cp + l->cp_size + (__u64)idx * 8, sym, sizeof(*sym));
}

static void read_linetable(const struct jvmframes *jf, int pid, const struct jvmproc_layout *l,
			   __u64 cm, const __u8 *cmh, struct jf_entry *e)
{
	__u32 flags = l->flags & JVMPROC_CMFLAGS_U32 ? u32_at(cmh, l->cm_flags)
						     : u16_at(cmh, l->cm_flags);
	__u64 code = u16_at(cmh, l->cm_code_size), total = (__u64)u32_at(cmh, l->cm_const_size) * 8;
	__u64 start = l->cm_size + code, n;

	if (!(flags & l->cm_has_linenumbers) || total <= start)
		return;
	n = total - start;
	if (n > JVMFRAMES_MAX_LINETABLE)
		n = JVMFRAMES_MAX_LINETABLE;
	e->linetable = malloc(n);
	if (!e->linetable)
		return;
	if (rd(jf, pid, cm + start, e->linetable, n)) {
		free(e->linetable);
		e->linetable = NULL;
		return;
	}
	e->nlinetable = (__u32)n;
}

/* Method @e->key.addr: its ConstMethod (the fingerprint), names and line
 * number table. */
static void read_method(struct jvmframes *jf, const struct jvmproc *jp, struct jf_entry *e)
{
	const struct jvmproc_layout *l = &jp->layout;
	__u8 mh[HEAD_MAX], cmh[HEAD_MAX], cph[HEAD_MAX];
	char buf[JVMFRAMES_MAX_NAME + 1];
	int pid = (int)e->key.pid;
	__u64 cm, cp, sym, holder;
	size_t len = 0;

	e->name = e->file = e->sys = NO_STR;
	if (l->m_size > HEAD_MAX || l->cm_size > HEAD_MAX || l->cp_size > HEAD_MAX)
		return;
	if (rd(jf, pid, e->key.addr, mh, l->m_size))
		return;
	cm = u64_at(mh, l->m_const_method);
	e->fp = (__u32)((cm >> 3) & 0xffff);
	if (!cm || rd(jf, pid, cm, cmh, l->cm_size))
		return;
	cp = u64_at(cmh, l->cm_constants);
	if (!cp || rd(jf, pid, cp, cph, l->cp_size))
		return;
	holder = u64_at(cph, l->cp_holder);
	if (!holder || rd(jf, pid, holder + l->klass_name, &sym, sizeof(sym)) ||
	    read_symbol(jf, pid, l, sym, true, buf, &len))
		return;
	buf[len++] = '.';
	if (cp_symbol(jf, pid, l, cp, u16_at(cmh, l->cm_name_index), &sym) ||
	    read_symbol(jf, pid, l, sym, false, buf, &len) || put_str(jf, buf, len, &e->name))
		return;
	/* overloads apart: the same name with the method's descriptor */
	if (!cp_symbol(jf, pid, l, cp, u16_at(cmh, l->cm_signature_index), &sym) &&
	    !read_symbol(jf, pid, l, sym, false, buf, &len))
		put_str(jf, buf, len, &e->sys);
	len = 0;
	if (!cp_symbol(jf, pid, l, cp, u16_at(cph, l->cp_source_file), &sym) &&
	    !read_symbol(jf, pid, l, sym, false, buf, &len))
		put_str(jf, buf, len, &e->file);
	read_linetable(jf, pid, l, cm, cmh, e);
	e->ok = 1;
}

/* @n bytes at @addr into a new buffer (capped by the caller). */
static void *read_alloc(const struct jvmframes *jf, int pid, __u64 addr, size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p && rd(jf, pid, addr, p, n)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Where an nmethod's debug information lies, absolute. */
struct nm_ranges {
	__u64 pcs, pcs_end, scopes, scopes_end, meta, meta_end;
};

static int nm_ranges(const struct jvmproc_layout *l, __u64 nm, const __u8 *h, struct nm_ranges *r)
{
	if (l->flags & JVMPROC_IMMUTABLE) {
		__u64 imm = u64_at(h, l->nm_immutable);
		__u64 mut = u64_at(h, l->blob_mutable);

		r->pcs = imm + u32_at(h, l->nm_scopes_pcs);
		r->pcs_end = r->scopes = imm + u32_at(h, l->nm_scopes_data);
		r->scopes_end = imm + u32_at(h, l->nm_immutable_size);
		if (l->blob_mutable != JVMPROC_NONE && l->blob_reloc_size != JVMPROC_NONE) {
			/* JDK 25+: the metadata table follows the relocations
			 * in the mutable data (its end read up to that of the
			 * section: indices are checked by the root scope) */
			r->meta = mut + u32_at(h, l->blob_reloc_size);
			r->meta_end = mut + u32_at(h, l->blob_mutable_size);
		} else {
			/* JDK 23, 24: in the data section, at a u16 offset */
			__u64 data = nm + u32_at(h, l->blob_data_offset);

			r->meta = data + u16_at(h, l->nm_metadata);
			r->meta_end = l->have_jvmci ? data + u16_at(h, (__u16)(l->nm_metadata + 2))
						    : nm + u32_at(h, l->blob_size);
		}
	} else {
		r->pcs = nm + u32_at(h, l->nm_scopes_pcs);
		r->pcs_end = nm + u32_at(h, l->nm_scopes_pcs_end);
		r->scopes = u64_at(h, l->nm_scopes_data);
		r->scopes_end = r->pcs;
		r->meta = nm + u32_at(h, l->nm_metadata);
		r->meta_end = r->scopes;
	}
	if (r->pcs_end < r->pcs || r->scopes_end < r->scopes || r->meta_end < r->meta ||
	    r->pcs_end - r->pcs + r->scopes_end - r->scopes > JVMFRAMES_MAX_DEBUGINFO)
		return -E2BIG;
	if ((r->meta_end - r->meta) / 8 > MAX_METADATA)
		r->meta_end = r->meta + MAX_METADATA * 8;
	return 0;
}

/* nmethod @e->key.addr (header @h): its method, code start and debug
 * information. */
static void read_nmethod(struct jvmframes *jf, const struct jvmproc *jp, struct jf_entry *e,
			 const __u8 *h)
{
	const struct jvmproc_layout *l = &jp->layout;
	int pid = (int)e->key.pid;
	__u64 nm = e->key.addr, code, i;
	struct nm_ranges r;
	__u8 *pcs;
	size_t npcs;

	e->method = u64_at(h, l->nm_method);
	code = l->flags & JVMPROC_BLOB_OFFSETS ? nm + u32_at(h, l->blob_code_begin)
					       : u64_at(h, l->blob_code_begin);
	if (!e->method || code < nm || code - nm > (1u << 20) || nm_ranges(l, nm, h, &r))
		return;
	e->code_off = (__u32)(code - nm);
	npcs = l->pcd_size ? (size_t)((r.pcs_end - r.pcs) / l->pcd_size) : 0;
	pcs = read_alloc(jf, pid, r.pcs, npcs * l->pcd_size);
	e->pcs = malloc(npcs ? npcs * 2 * sizeof(__s32) : 1);
	e->scopes = read_alloc(jf, pid, r.scopes, r.scopes_end - r.scopes);
	e->meta = read_alloc(jf, pid, r.meta, r.meta_end - r.meta);
	if (!pcs || !e->pcs || !e->scopes || !e->meta) {
		free(pcs);
		return;
	}
	for (i = 0; i < npcs; i++) {
		memcpy(&e->pcs[2 * i], pcs + i * l->pcd_size + l->pcd_pc_offset, 4);
		memcpy(&e->pcs[2 * i + 1], pcs + i * l->pcd_size + l->pcd_scope_decode, 4);
	}
	free(pcs);
	e->npcs = (__u32)npcs;
	e->nscopes = (__u32)(r.scopes_end - r.scopes);
	e->nmeta = (__u32)((r.meta_end - r.meta) / 8);
	e->is_nm = 1;
	e->ok = 1;
}

/* CodeBlob @e->key.addr: an nmethod (fingerprint @fp checked), or a stub
 * named after its blob. */
static void read_blob(struct jvmframes *jf, const struct jvmproc *jp, struct jf_entry *e, __u16 fp)
{
	const struct jvmproc_layout *l = &jp->layout;
	char name[JVMFRAMES_MAX_NAME + 1];
	__u8 h[HEAD_MAX];
	size_t len;
	__u64 np;

	e->name = e->file = e->sys = NO_STR;
	if (l->nm_size > HEAD_MAX || rd(jf, (int)e->key.pid, e->key.addr, h, l->nm_size))
		return;
	np = u64_at(h, l->blob_name);
	if (!np || rd(jf, (int)e->key.pid, np, name, 64))
		return;
	name[64] = 0;
	len = strnlen(name, 64);
	if (!len || len == 64)
		return;
	if (strcmp(name, "nmethod") && strcmp(name, "native nmethod")) {
		/* a stub: its code never changes, nor the word the walker
		 * read as its fingerprint */
		e->fp = fp;
		e->ok = !put_str(jf, name, len, &e->name);
		return;
	}
	e->fp = u32_at(h, l->nm_compile_id) & 0xffff;
	if (e->fp != fp) {
		jf->st.changed++;
		return;
	}
	if (!strcmp(name, "native nmethod")) {
		/* a native method's wrapper: no debug information, one method */
		e->method = u64_at(h, l->nm_method);
		e->is_nm = NM_NATIVE;
		e->ok = e->method != 0;
		return;
	}
	read_nmethod(jf, jp, e, h);
}

/* The cached entry of @key; read (@fp: the fingerprint the walker saw)
 * when missing or when its fingerprint differs (@check). NULL on ENOMEM
 * or a full table. */
static struct jf_entry *lookup(struct jvmframes *jf, const struct jvmproc *jp, struct ent_key key,
			       __u16 fp, bool check)
{
	__u64 h = ent_hash(&key);
	struct jf_entry *e, tmp;

	e = htab__find(&jf->entries, h, &key, ent_eq, NULL);
	if (e && (!check || e->fp == fp)) {
		jf->st.hits++;
		return e;
	}
	if (e) {
		ent_release(e); /* the address holds another object now */
		htab__remove(&jf->entries, e);
	}
	jf->st.misses++;
	memset(&tmp, 0, sizeof(tmp));
	tmp.key = key;
	if (key.kind == JVMFRAMES_KIND_INTERP)
		read_method(jf, jp, &tmp);
	else
		read_blob(jf, jp, &tmp, fp);
	if (htab__add(&jf->entries, h, (void **)&e)) {
		ent_release(&tmp);
		return NULL;
	}
	*e = tmp;
	return e;
}

static const char *str_of(const struct jvmframes *jf, __u32 idx)
{
	return idx == NO_STR ? NULL : intern__get(jf->strings, idx, NULL);
}

/* ---- resolving ---- */

/* One method of a frame (innermost first). */
struct jmethod {
	__u64 method;
	__s32 bci;
};

/* The methods (innermost first) nmethod @e runs at code offset @off:
 * the first pc descriptor at or after it, its scope chain. Their count,
 * 0 when it does not check out. */
static size_t scope_chain(const struct jvmproc *jp, const struct jf_entry *e, __s64 off,
			  struct jmethod *m)
{
	const int x1 = !!(jp->layout.flags & JVMPROC_UNSIGNED5_X1);
	__u32 lo = 0, hi = e->npcs, dec, sender, midx;
	size_t n = 0;
	__s32 bci;

	if (e->is_nm == NM_NATIVE) {
		m[0] = (struct jmethod){.method = e->method, .bci = -1};
		return 1;
	}
	while (lo < hi) { /* pc descriptors are sorted by pc offset */
		__u32 mid = lo + (hi - lo) / 2;

		if (e->pcs[2 * mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= e->npcs)
		return 0;
	dec = (__u32)e->pcs[2 * lo + 1];
	if (!dec) { /* no debug information here: the method itself */
		m[0] = (struct jmethod){.method = e->method, .bci = -1};
		return 1;
	}
	while (dec && n < JVMFRAMES_MAX_INLINE) {
		if (dec >= e->nscopes ||
		    jvmframes__scope(e->scopes + dec, e->nscopes - dec, x1, &sender, &midx, &bci) ||
		    !midx || midx > e->nmeta || sender >= e->nscopes)
			return 0;
		m[n++] = (struct jmethod){.method = e->meta[midx - 1], .bci = bci};
		dec = sender;
	}
	/* the outermost scope is the nmethod's own method, or the decoding
	 * went wrong */
	return !dec && n && m[n - 1].method == e->method ? n : 0;
}

/* The methods of raw frame @r; 0 when it cannot be named. A stub: one
 * entry with method 0 and *@stub its name. */
static size_t frame_methods(struct jvmframes *jf, const struct jvmproc *jp, int pid,
			    const struct jvmframes_raw *r, struct jmethod *m, __u32 *stub)
{
	struct ent_key k = {.addr = r->addr, .pid = (__u32)pid, .kind = JVMFRAMES_KIND_BLOB};
	struct jf_entry *e;

	if (r->flags & JVMFRAMES_FRAME_NOREAD)
		return 0;
	if (r->kind == JVMFRAMES_KIND_INTERP) {
		m[0] = (struct jmethod){.method = r->addr, .bci = (__s32)r->pos};
		return 1;
	}
	if (r->kind != JVMFRAMES_KIND_BLOB)
		return 0;
	e = lookup(jf, jp, k, r->fingerprint, true);
	if (!e || !e->ok)
		return 0;
	if (!e->is_nm) {
		*stub = e->name;
		m[0].method = 0;
		return 1;
	}
	return scope_chain(jp, e, (__s64)r->pos - e->code_off, m);
}

/* Fill @ln for method @m; false when it does not check out. */
static bool method_line(struct jvmframes *jf, const struct jvmproc *jp, int pid,
			const struct jmethod *m, const struct jvmframes_raw *r, bool interp,
			struct profile_line *ln)
{
	struct ent_key k = {.addr = m->method, .pid = (__u32)pid, .kind = JVMFRAMES_KIND_INTERP};
	const int x1 = !!(jp->layout.flags & JVMPROC_UNSIGNED5_X1);
	struct jf_entry *e = lookup(jf, jp, k, r->fingerprint, interp);

	if (!e || !e->ok || (interp && e->fp != r->fingerprint)) {
		if (e && e->ok)
			jf->st.changed++;
		return false;
	}
	memset(ln, 0, sizeof(*ln));
	ln->function = str_of(jf, e->name);
	ln->system_name = str_of(jf, e->sys);
	ln->filename = str_of(jf, e->file);
	ln->line = e->linetable ? jvmframes__line(e->linetable, e->nlinetable, m->bci, x1) : 0;
	return true;
}

size_t jvmframes__resolve(struct jvmframes *jf, int pid, const struct jvmframes_raw *raw, size_t n,
			  struct profile_frame *out)
{
	const struct jvmproc *jp = jvmframes__process(jf, pid);
	struct jmethod m[JVMFRAMES_MAX_INLINE];
	size_t i, j, k, nl = 0, named = 0;

	if (!jf || !n)
		return 0;
	if (array__grow((void **)&jf->first, &jf->first_cap, n - 1, sizeof(*jf->first), 64,
			PROFILE_MAX_ENTRIES))
		jp = NULL; /* no room: every frame unknown */
	/* eviction only here: entries read below stay valid for this call */
	if (htab__count(&jf->entries) + n * (JVMFRAMES_MAX_INLINE + 1) >= JVMFRAMES_MAX_ENTRIES) {
		drop_entries(jf, 0, true);
		jf->st.evictions++;
	}
	for (i = 0; i < n; i++) {
		struct profile_frame *f = &out[i];
		__u32 stub = NO_STR;
		size_t nm = jp ? frame_methods(jf, jp, pid, &raw[i], m, &stub) : 0;

		memset(f, 0, sizeof(*f));
		f->type_name = JVMFRAMES_TYPE;
		f->function = str_of(jf, jf->unknown);
		if (jp)
			jf->first[i] = nl;
		if (!nm || array__grow((void **)&jf->lines, &jf->lines_cap, nl + nm,
				       sizeof(*jf->lines), 64, PROFILE_MAX_ENTRIES)) {
			jf->st.unknown++;
			continue;
		}
		if (stub != NO_STR) {
			memset(&jf->lines[nl], 0, sizeof(jf->lines[nl]));
			jf->lines[nl].function = str_of(jf, stub);
			f->function = jf->lines[nl].function;
			f->nlines = 1;
			nl++;
			named++;
			continue;
		}
		for (j = 0; j < nm; j++)
			if (!method_line(jf, jp, pid, &m[j], &raw[i],
					 raw[i].kind == JVMFRAMES_KIND_INTERP, &jf->lines[nl + j]))
				break;
		if (j < nm) {
			jf->st.unknown++;
			continue;
		}
		jf->st.inlined += nm - 1;
		f->function = jf->lines[nl + nm - 1].function;
		f->system_name = jf->lines[nl + nm - 1].system_name;
		f->nlines = nm;
		nl += nm;
		named++;
	}
	/* the lines are in place now: point the frames at them */
	for (k = 0; jp && k < n; k++)
		if (out[k].nlines)
			out[k].lines = &jf->lines[jf->first[k]];
	return named;
}
