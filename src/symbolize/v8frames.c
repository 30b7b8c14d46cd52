/* v8frames.c - naming JavaScript frames from their SharedFunctionInfo,
 * read from the live process, cached per process; their merge with the
 * native stack (see v8frames.h). A frame whose objects do not check out
 * (type, fingerprint) is "<unknown js>", never a guess. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"
#include "proc/v8proc.h"
#include "symbolize/v8frames.h"
#include "symbolize/v8frames_int.h"

#define MAX_PROCS 4096
#define NO_STR 0xffffffffu
#define NAME_BUF (4 * V8FRAMES_MAX_NAME + 1)

struct vf_proc {
	int pid;
	struct v8proc vp;
};

struct obj_key {
	__u64 addr;
	__u32 pid;
	__u32 fp; /* fingerprint (functions), 0 (scripts) */
};

/* A script: its name and line ends; the words it was read with, so a
 * script moved by the collector and another one at its address are told
 * apart. */
struct script_entry {
	struct obj_key key;
	__u64 name_word, source_word;
	__u32 name; /* string index, NO_STR none */
	__u32 *ends;
	__u32 nends;
	__u32 ok;
};

/* A function read (or found unreadable: ok false). */
struct func_entry {
	struct obj_key key;
	__u32 name, file; /* string indices, NO_STR none */
	__u64 script;	  /* address of its script, 0 none */
	__s64 start_pos;  /* script offset of its start, -1 unknown */
	__s64 start_line;
	unsigned char *positions; /* bytecode source positions, owned */
	__u32 npositions;
	__u32 ok;
	__u32 memo_offset; /* the last bytecode offset asked and its line */
	__s64 memo_line;
};

struct v8frames {
	char *proc_root;
	struct htab procs;   /* struct vf_proc */
	struct htab funcs;   /* struct func_entry */
	struct htab scripts; /* struct script_entry */
	struct intern *strings;
	size_t string_bytes, line_bytes;
	__u32 unknown, anonymous;
	struct profile_line *lines;
	size_t lines_cap;
	struct v8frames_stats st;
};

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct vf_proc *)elem)->pid == *(const int *)key;
}

static bool key_eq(const struct obj_key *a, const struct obj_key *b)
{
	return a->addr == b->addr && a->pid == b->pid && a->fp == b->fp;
}

static bool func_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return key_eq(&((const struct func_entry *)elem)->key, key);
}

static bool script_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return key_eq(&((const struct script_entry *)elem)->key, key);
}

static __u64 key_hash(const struct obj_key *k)
{
	return htab__hash_u64(k->addr, ((__u64)k->pid << 32) | k->fp);
}

__u16 v8frames__fingerprint(__u16 length, __u16 params, __u16 token, __u64 script)
{
	__u64 h = length ^ ((__u64)params << 5) ^ ((__u64)token << 10) ^ (script >> 3);

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)h;
}

struct v8frames *v8frames__new(const char *proc_root)
{
	struct v8frames *vf = calloc(1, sizeof(*vf));

	if (!vf)
		return NULL;
	vf->proc_root = proc_root ? strdup(proc_root) : NULL;
	vf->strings = intern__new(1u << 22);
	if ((proc_root && !vf->proc_root) || !vf->strings ||
	    intern__put(vf->strings, V8FRAMES_UNKNOWN, sizeof(V8FRAMES_UNKNOWN), &vf->unknown,
			NULL) ||
	    intern__put(vf->strings, V8FRAMES_ANONYMOUS, sizeof(V8FRAMES_ANONYMOUS),
			&vf->anonymous, NULL) ||
	    htab__init(&vf->procs, sizeof(struct vf_proc), MAX_PROCS) ||
	    htab__init(&vf->funcs, sizeof(struct func_entry), V8FRAMES_MAX_FUNCS) ||
	    htab__init(&vf->scripts, sizeof(struct script_entry), V8FRAMES_MAX_SCRIPTS)) {
		v8frames__free(vf);
		return NULL;
	}
	return vf;
}

static void drop_funcs(struct v8frames *vf, int pid, bool all)
{
	struct func_entry *e;
	size_t it = 0;

	while ((e = htab__next(&vf->funcs, &it))) {
		if (!all && e->key.pid != (__u32)pid)
			continue;
		free(e->positions);
		htab__remove(&vf->funcs, e);
	}
}

static void drop_scripts(struct v8frames *vf, int pid, bool all)
{
	struct script_entry *e;
	size_t it = 0;

	while ((e = htab__next(&vf->scripts, &it))) {
		if (!all && e->key.pid != (__u32)pid)
			continue;
		vf->line_bytes -= (size_t)e->nends * sizeof(*e->ends);
		free(e->ends);
		htab__remove(&vf->scripts, e);
	}
}

void v8frames__free(struct v8frames *vf)
{
	if (!vf)
		return;
	drop_funcs(vf, 0, true);
	drop_scripts(vf, 0, true);
	htab__release(&vf->funcs);
	htab__release(&vf->scripts);
	htab__release(&vf->procs);
	intern__free(vf->strings);
	free(vf->lines);
	free(vf->proc_root);
	free(vf);
}

const struct v8proc *v8frames__process(const struct v8frames *vf, int pid)
{
	const struct vf_proc *p;

	if (!vf)
		return NULL;
	p = htab__find(&vf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	return p ? &p->vp : NULL;
}

void v8frames__forget(struct v8frames *vf, int pid)
{
	struct vf_proc *p;

	if (!vf)
		return;
	p = htab__find(&vf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	if (p)
		htab__remove(&vf->procs, p);
	drop_funcs(vf, pid, false);
	drop_scripts(vf, pid, false);
}

int v8frames__set_process(struct v8frames *vf, int pid, const struct v8proc *vp)
{
	const struct v8proc *old;
	struct vf_proc *p;
	int err;

	if (!vf)
		return -EINVAL;
	old = v8frames__process(vf, pid);
	if (old && vp && !memcmp(&old->layout, &vp->layout, sizeof(vp->layout))) {
		/* the same V8: what was read stays; its code ranges change */
		p = (struct vf_proc *)((char *)old - offsetof(struct vf_proc, vp));
		p->vp = *vp;
		return 0;
	}
	v8frames__forget(vf, pid);
	if (!vp)
		return 0;
	err = htab__add(&vf->procs, htab__hash_u64((__u64)pid, 0), (void **)&p);
	if (err)
		return err;
	p->pid = pid;
	p->vp = *vp;
	return 0;
}

void v8frames__stats(const struct v8frames *vf, struct v8frames_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!vf)
		return;
	*out = vf->st;
	out->cached = htab__count(&vf->funcs);
}

size_t v8frames__decode(const __u64 *words, size_t nwords, struct v8frames_raw *out, size_t cap)
{
	size_t n = 0, i;

	for (i = 0; i + V8FRAMES_WORDS <= nwords && n < cap; i += V8FRAMES_WORDS, n++) {
		out[n].sfi = words[i] & ((1ull << 48) - 1);
		out[n].fingerprint = (__u16)(words[i] >> 48);
		out[n].pc = words[i + 1];
		out[n].offset = (__u32)words[i + 2];
		out[n].kind = (__u8)(words[i + 2] >> 32);
		out[n].flags = (__u8)(words[i + 2] >> 40);
	}
	return n;
}

/* ---- pure: positions and lines ---- */

/* A zigzag varint at *@p (below @end): 0, or -1 when cut or too long. */
static int varint(const unsigned char **p, const unsigned char *end, __s64 *out)
{
	__u64 v = 0;
	unsigned shift = 0;

	for (;;) {
		if (*p >= end || shift > 63)
			return -1;
		v |= (__u64)(**p & 0x7f) << shift;
		shift += 7;
		if (!(*(*p)++ & 0x80))
			break;
	}
	*out = (__s64)(v >> 1) ^ -(__s64)(v & 1);
	return 0;
}

/* The script offset encoded in a SourcePosition: bit 0 external (none
 * then), bits 1..30 the offset plus one. */
static __s64 script_offset(__s64 raw)
{
	if (raw & 1)
		return -1;
	return (__s64)(((__u64)raw >> 1) & ((1u << 30) - 1)) - 1;
}

__s64 v8frames__position(const unsigned char *table, size_t len, __u32 offset)
{
	const unsigned char *p = table, *end = table + len;
	__s64 code = 0, pos = 0, d, best = -1;

	while (p < end) {
		if (varint(&p, end, &d))
			break;
		code += d >= 0 ? d : -d - 1; /* the sign is the statement bit */
		if (varint(&p, end, &d))
			break;
		pos += d;
		if (code > (__s64)offset)
			break;
		best = script_offset(pos);
	}
	return best;
}

__s64 v8frames__first_position(const unsigned char *table, size_t len)
{
	const unsigned char *p = table, *end = table + len;
	__s64 d, pos;

	if (varint(&p, end, &d) || varint(&p, end, &pos))
		return -1;
	return script_offset(pos);
}

__s64 v8frames__line(const __u32 *ends, size_t n, __s64 pos)
{
	size_t lo = 0, hi = n;

	if (pos < 0)
		return 0;
	/* the first line whose end is at or after pos */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((__s64)ends[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (__s64)lo + 1;
}

/* ---- reading ---- */

static int put_str(struct v8frames *vf, const char *s, size_t len, __u32 *idx)
{
	bool added = false;
	int err;

	if (!intern__find(vf->strings, s, len + 1, idx))
		return 0;
	if (vf->string_bytes + len + 1 > V8FRAMES_MAX_STRINGS)
		return -E2BIG;
	err = intern__put(vf->strings, s, len + 1, idx, &added);
	if (!err && added)
		vf->string_bytes += len + 1;
	return err;
}

static const char *str_of(const struct v8frames *vf, __u32 idx)
{
	return idx == NO_STR ? NULL : intern__get(vf->strings, idx, NULL);
}

/* Read script @addr into @e (e->ok when its name was read). */
static void read_script(struct v8frames *vf, const struct v8r *r, __u64 addr, __u64 words[2],
			struct script_entry *e)
{
	char buf[NAME_BUF];
	__u32 *ends = NULL;
	size_t len, n = 0;

	e->name = NO_STR;
	e->name_word = words[0];
	e->source_word = words[1];
	vf->st.scripts++;
	if (!v8r__string(r, words[0], buf, sizeof(buf), &len) && len)
		put_str(vf, buf, len, &e->name);
	if (vf->line_bytes < V8FRAMES_MAX_LINE_BYTES && !v8r__line_ends(r, addr, &ends, &n)) {
		e->ends = ends;
		e->nends = (__u32)n;
		vf->line_bytes += n * sizeof(*ends);
	}
	e->ok = 1;
}

/* The cached script at @addr, read again when its name or source word
 * changed (another script, or the same one moved). */
static struct script_entry *script_of(struct v8frames *vf, const struct v8r *r, __u64 addr)
{
	const struct v8proc_layout *l = r->l;
	struct obj_key k = {.addr = addr, .pid = (__u32)r->pid};
	struct script_entry *e;
	__u64 words[2] = {0, 0}, h = key_hash(&k);

	if (v8r__word(r, addr + l->script_name, &words[0]) ||
	    (l->script_source != V8PROC_NONE && v8r__word(r, addr + l->script_source, &words[1])))
		return NULL;
	e = htab__find(&vf->scripts, h, &k, script_eq, NULL);
	if (e && e->name_word == words[0] && e->source_word == words[1])
		return e;
	if (e) {
		vf->line_bytes -= (size_t)e->nends * sizeof(*e->ends);
		free(e->ends);
		htab__remove(&vf->scripts, e);
	}
	if (htab__count(&vf->scripts) >= V8FRAMES_MAX_SCRIPTS) {
		drop_scripts(vf, 0, true);
		vf->st.evictions++;
	}
	if (htab__add(&vf->scripts, h, (void **)&e))
		return NULL;
	memset(e, 0, sizeof(*e));
	e->key = k;
	read_script(vf, r, addr, words, e);
	return e;
}

/* The bytecode source positions of function data @data: a BytecodeArray,
 * or what holds one (InterpreterData, baseline Code) one level down. */
static void read_positions(const struct v8r *r, __u64 data, struct func_entry *e)
{
	const struct v8proc_layout *l = r->l;
	__u16 type;
	__u64 tab;
	size_t n = 0;
	__u16 off;
	int hops;

	for (hops = 0; hops < 2; hops++) {
		if (v8r__type(r, data, &type))
			return;
		if (type == l->type_bytecode)
			break;
		/* baseline Code points to its bytecode; InterpreterData
		 * keeps it in its first field */
		off = type == l->type_code ? l->code_bytecode : l->tagged_size;
		if (off == V8PROC_NONE || v8r__word(r, v8r__untag(r, data) + off, &data))
			return;
	}
	if (hops == 2 || l->bytecode_positions == V8PROC_NONE ||
	    v8r__word(r, v8r__untag(r, data) + l->bytecode_positions, &tab))
		return;
	if (!v8r__byte_array(r, tab, &e->positions, &n))
		e->npositions = (__u32)n;
}

static __u64 field(const unsigned char *head, size_t size, __u16 off, size_t width)
{
	__u64 v = 0;

	if (off != V8PROC_NONE && off + width <= size)
		memcpy(&v, head + off, width);
	return v;
}

#define SFI_HEAD 128

/* Bytes of a SharedFunctionInfo holding every field read, 0 when one lies
 * past SFI_HEAD: no more than the object is read, so an object at the end
 * of its heap page reads. */
static size_t sfi_size(const struct v8proc_layout *l)
{
	const __u16 words[] = {l->sfi_script, l->sfi_name_or_scope_info, l->sfi_function_data};
	const __u16 halves[] = {l->sfi_length, l->sfi_param_count, l->sfi_token_offset};
	size_t need = 8, i;

	for (i = 0; i < 3; i++) {
		if (words[i] != V8PROC_NONE && (size_t)words[i] + 8 > need)
			need = (size_t)words[i] + 8;
		if (halves[i] != V8PROC_NONE && (size_t)halves[i] + 2 > need)
			need = (size_t)halves[i] + 2;
	}
	return need <= SFI_HEAD ? need : 0;
}

/* Read function @e->key of process @vp into @e: e->ok when it checks out
 * (its type, its fingerprint, its name). */
static void read_func(struct v8frames *vf, const struct v8proc *vp, struct func_entry *e)
{
	const struct v8proc_layout *l = &vp->layout;
	struct v8r r = {.proc_root = vf->proc_root, .pid = (int)e->key.pid, .l = l};
	unsigned char head[SFI_HEAD] = {0};
	size_t size = sfi_size(l);
	char buf[NAME_BUF];
	__u64 name, script;
	__u16 type, fp;
	__s64 start = -1;
	size_t len = 0;
	struct script_entry *s;

	e->name = e->file = NO_STR;
	e->start_pos = -1;
	e->memo_offset = V8FRAMES_NO_OFFSET;
	if (!size || v8r__type(&r, e->key.addr | l->heap_tag, &type) || type != l->type_sfi ||
	    v8r__read(&r, e->key.addr, head, size))
		return;
	script = field(head, sizeof(head), l->sfi_script, 8);
	fp = v8frames__fingerprint((__u16)field(head, sizeof(head), l->sfi_length, 2),
				   (__u16)field(head, sizeof(head), l->sfi_param_count, 2),
				   (__u16)field(head, sizeof(head), l->sfi_token_offset, 2), script);
	if (fp != e->key.fp) {
		vf->st.changed++;
		return;
	}
	name = field(head, sizeof(head), l->sfi_name_or_scope_info, 8);
	if (!v8r__type(&r, name, &type) && type == l->type_scope_info)
		v8r__scope_info(&r, name, buf, sizeof(buf), &len, &start);
	else if (v8r__string(&r, name, buf, sizeof(buf), &len))
		len = 0;
	if (len && put_str(vf, buf, len, &e->name))
		return;
	if (!len)
		e->name = vf->anonymous;
	read_positions(&r, field(head, sizeof(head), l->sfi_function_data, 8), e);
	if (start < 0 && e->positions)
		start = v8frames__first_position(e->positions, e->npositions);
	e->start_pos = start;
	if (!v8r__type(&r, script, &type) && type == l->type_script) {
		e->script = v8r__untag(&r, script);
		s = script_of(vf, &r, e->script);
		if (s) {
			e->file = s->name;
			e->start_line = v8frames__line(s->ends, s->nends, start);
			if (!s->nends)
				e->start_line = 0;
		}
	}
	e->ok = 1;
}

static struct func_entry *lookup(struct v8frames *vf, int pid, const struct v8proc *vp,
				 const struct v8frames_raw *raw)
{
	struct obj_key k = {.addr = raw->sfi, .pid = (__u32)pid, .fp = raw->fingerprint};
	struct func_entry *e, tmp;
	__u64 h = key_hash(&k);

	e = htab__find(&vf->funcs, h, &k, func_eq, NULL);
	if (e) {
		vf->st.hits++;
		return e;
	}
	vf->st.misses++;
	memset(&tmp, 0, sizeof(tmp));
	tmp.key = k;
	read_func(vf, vp, &tmp);
	if (htab__count(&vf->funcs) >= V8FRAMES_MAX_FUNCS) {
		drop_funcs(vf, 0, true);
		vf->st.evictions++;
	}
	if (htab__add(&vf->funcs, h, (void **)&e)) {
		free(tmp.positions);
		return NULL;
	}
	*e = tmp;
	return e;
}

/* The line running in frame @raw of function @e. */
static __s64 line_of(struct v8frames *vf, const struct v8proc *vp, int pid,
		     struct func_entry *e, const struct v8frames_raw *raw)
{
	struct v8r r = {.proc_root = vf->proc_root, .pid = pid, .l = &vp->layout};
	struct script_entry *s;
	__s64 pos;

	if (raw->kind != V8FRAMES_KIND_INTERPRETED || raw->offset == V8FRAMES_NO_OFFSET ||
	    !e->positions || !e->script)
		return e->start_line;
	if (e->memo_offset == raw->offset)
		return e->memo_line;
	pos = v8frames__position(e->positions, e->npositions, raw->offset);
	s = pos < 0 ? NULL : script_of(vf, &r, e->script);
	e->memo_offset = raw->offset;
	e->memo_line = s && s->nends ? v8frames__line(s->ends, s->nends, pos) : e->start_line;
	return e->memo_line;
}

size_t v8frames__resolve(struct v8frames *vf, int pid, const struct v8frames_raw *raw, size_t n,
			 struct profile_frame *out)
{
	const struct v8proc *vp = v8frames__process(vf, pid);
	struct func_entry *e;
	size_t i, named = 0;

	if (!vf || !n)
		return 0;
	if (array__grow((void **)&vf->lines, &vf->lines_cap, n - 1, sizeof(*vf->lines), 64,
			PROFILE_MAX_ENTRIES))
		vp = NULL; /* no room for lines: every frame unknown */
	for (i = 0; i < n; i++) {
		struct profile_frame *f = &out[i];
		struct profile_line *ln;

		memset(f, 0, sizeof(*f));
		f->type_name = V8FRAMES_TYPE;
		f->function = str_of(vf, vf->unknown);
		e = vp && !(raw[i].flags & V8FRAMES_FRAME_NOSFI) ? lookup(vf, pid, vp, &raw[i]) : NULL;
		if (!e || !e->ok) {
			vf->st.unknown++;
			continue;
		}
		ln = &vf->lines[i];
		memset(ln, 0, sizeof(*ln));
		ln->function = str_of(vf, e->name);
		ln->filename = str_of(vf, e->file);
		ln->start_line = e->start_line;
		ln->line = line_of(vf, vp, pid, e, &raw[i]);
		f->function = ln->function;
		f->lines = ln;
		f->nlines = 1;
		named++;
	}
	return named;
}

/* ---- merge ---- */

#define MERGE_LOOKAHEAD 8 /* JS frames the native walk may have missed */

size_t v8frames__merge(const __u64 *pcs, const struct profile_frame *native, size_t nnative,
		       const struct profile_frame *js, const struct v8frames_raw *raw, size_t njs,
		       struct profile_frame *out, size_t cap)
{
	size_t i, j = 0, k, n = 0;
	bool kept;

	for (i = 0; i < nnative && n < cap; i++) {
		for (k = j; k < njs && k < j + MERGE_LOOKAHEAD; k++)
			if (raw[k].pc == pcs[i])
				break;
		if (k >= njs || k >= j + MERGE_LOOKAHEAD) {
			out[n++] = native[i]; /* native code */
			continue;
		}
		/* frames the native walk did not see (a leaf in a prologue)
		 * come before the one that replaces this native frame */
		for (; j < k && n < cap; j++)
			out[n++] = js[j];
		/* a perf map (--perf-basic-prof) named it already: V8's own
		 * word on its code, kept */
		kept = native[i].type_name && !strcmp(native[i].type_name, V8FRAMES_TYPE);
		if (n < cap)
			out[n++] = kept ? native[i] : js[k];
		j = k + 1;
	}
	for (; j < njs && n < cap; j++)
		out[n++] = js[j];
	return n;
}
