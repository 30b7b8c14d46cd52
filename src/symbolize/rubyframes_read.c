/* rubyframes_read.c - an iseq's label, path and line table read from the
 * live process (see rubyframes_int.h). Everything read is untrusted: each
 * object's type is checked before a field is used, sizes are capped, and
 * an iseq whose body or fingerprint no longer matches the sample's is not
 * named. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/pyproc.h"
#include "symbolize/rubyframes_int.h"

/* CRuby's object header: the type in the low bits of the flags, the
 * embedded-or-not and embedded length bits of strings and arrays. */
#define T_MASK 0x1fu
#define T_STRING 0x05u
#define T_ARRAY 0x07u
#define T_IMEMO 0x1au
#define FL_USHIFT 12
#define IMEMO_MENT 6u
#define IMEMO_ISEQ 7u
#define NOEMBED (1ull << (FL_USHIFT + 1))      /* a string's: set when on the heap */
#define ARY_EMBEDDED (1ull << (FL_USHIFT + 1)) /* an array's: set when embedded */
#define STR_EMBED_LEN(f) (((f) >> (FL_USHIFT + 2)) & 0x1f)
#define ARY_EMBED_LEN(f) (((f) >> (FL_USHIFT + 3)) & 0x3)

static int rd(const struct rf_reader *r, __u64 addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	return pyproc__read_mem(r->proc_root, r->pid, addr, buf, len);
}

/* The word at byte @off of @buf (@size bytes), 0 outside. */
static __u64 field(const void *buf, size_t size, unsigned off)
{
	__u64 v = 0;

	if (off + 8 <= size)
		memcpy(&v, (const char *)buf + off, 8);
	return v;
}

/* String @addr (a T_STRING) interned into *@idx. */
static int read_string(const struct rf_reader *r, __u64 addr, __u32 *idx)
{
	const struct rubyproc_layout *l = r->l;
	char head[48], buf[RUBYFRAMES_MAX_NAME + 1];
	__u64 flags, len;
	int err;

	err = rd(r, addr, head, sizeof(head));
	if (err)
		return err;
	flags = field(head, sizeof(head), 0);
	if ((flags & T_MASK) != T_STRING)
		return -EINVAL;
	if (flags & NOEMBED) {
		len = field(head, sizeof(head), l->str_heap_len);
		if (len > RUBYFRAMES_MAX_NAME)
			len = RUBYFRAMES_MAX_NAME;
		err = rd(r, field(head, sizeof(head), l->str_heap_ptr), buf, len);
		if (err)
			return err;
	} else {
		len = STR_EMBED_LEN(flags);
		if (l->str_embed + len > sizeof(head))
			return -EINVAL;
		memcpy(buf, head + l->str_embed, len);
	}
	buf[len] = 0;
	len = strnlen(buf, len);
	return r->put_str(r->ctx, buf, len, idx);
}

/* A path object: a String, or an Array [path, realpath] (its first). */
static int read_path(const struct rf_reader *r, __u64 addr, __u32 *idx)
{
	const struct rubyproc_layout *l = r->l;
	__u64 head[6], flags, elem = 0;
	int err;

	err = rd(r, addr, head, sizeof(head));
	if (err)
		return err;
	flags = head[0];
	if ((flags & T_MASK) == T_STRING)
		return read_string(r, addr, idx);
	if ((flags & T_MASK) != T_ARRAY)
		return -EINVAL;
	if (flags & ARY_EMBEDDED) {
		if (!ARY_EMBED_LEN(flags))
			return -EINVAL;
		elem = field(head, sizeof(head), l->ary_embed);
	} else {
		if (!field(head, sizeof(head), l->ary_heap_len) ||
		    rd(r, field(head, sizeof(head), l->ary_heap_ptr), &elem, sizeof(elem)))
			return -EINVAL;
	}
	return read_string(r, elem, idx);
}

/* The line table: each insns_info entry's line, and the succinct index
 * table from instruction positions to entries. Left out (lines from the
 * first line) when over the caps. */
static void read_lines(const struct rf_reader *r, const unsigned char *body, size_t bsize,
		       struct rf_iseq *e)
{
	const struct rubyproc_layout *l = r->l;
	__u32 n = (__u32)field(body, bsize, l->body_insns_size), i;
	__u64 info = field(body, bsize, l->body_insns_info);
	__u64 succ = field(body, bsize, l->body_succ_table);
	size_t sbytes = rubyframes__succ_bytes(e->iseq_size), ibytes;
	unsigned char *raw;

	if (!n || n > RUBYFRAMES_MAX_INSNS || !info || (n > 1 && !succ) ||
	    e->iseq_size > 16 * RUBYFRAMES_MAX_INSNS)
		return;
	ibytes = (size_t)n * l->insn_info_size;
	if (*r->table_bytes + n * sizeof(__s32) + sbytes > RUBYFRAMES_MAX_TABLE_BYTES)
		return;
	raw = malloc(ibytes);
	e->lines = malloc(n * sizeof(*e->lines));
	e->succ = n > 1 ? malloc(sbytes) : NULL;
	if (!raw || !e->lines || (n > 1 && !e->succ) || rd(r, info, raw, ibytes) ||
	    (n > 1 && rd(r, succ, e->succ, sbytes))) {
		free(raw);
		free(e->lines);
		free(e->succ);
		e->lines = NULL;
		e->succ = NULL;
		return;
	}
	for (i = 0; i < n; i++) {
		__s32 line;

		memcpy(&line, raw + (size_t)i * l->insn_info_size + l->insn_info_line,
		       sizeof(line));
		e->lines[i] = line;
	}
	free(raw);
	e->nlines = n;
	e->nsucc = n > 1 ? (__u32)(sbytes / 8) : 0;
	*r->table_bytes += n * sizeof(__s32) + sbytes;
}

void rf__read_iseq(const struct rf_reader *r, __u64 body_addr, struct rf_iseq *e)
{
	const struct rubyproc_layout *l = r->l;
	unsigned char body[256];
	__u64 head[3], first;
	size_t bsize = l->body_read < sizeof(body) ? l->body_read : sizeof(body);

	e->label = e->path = RUBYFRAMES_NO_STR;
	if (rd(r, e->addr, head, sizeof(head)))
		return;
	/* an imemo of type iseq, still holding the body the sample saw */
	if ((head[0] & T_MASK) != T_IMEMO || ((head[0] >> FL_USHIFT) & 0xf) != IMEMO_ISEQ ||
	    field(head, sizeof(head), l->iseq_body) != body_addr || rd(r, body_addr, body, bsize)) {
		*r->changed = true;
		return;
	}
	first = field(body, bsize, l->body_first_lineno);
	if (!(first & 1) || rubyframes__fingerprint(body_addr, first) != e->fp) {
		*r->changed = true;
		return;
	}
	e->body = body_addr;
	e->first_line = (__s64)first >> 1;
	memcpy(&e->iseq_size, body + l->body_iseq_size, sizeof(e->iseq_size));
	if (read_string(r, field(body, bsize, l->body_label), &e->label))
		return;
	if (read_path(r, field(body, bsize, l->body_pathobj), &e->path))
		e->path = RUBYFRAMES_NO_STR;
	read_lines(r, body, bsize, e);
	e->ok = 1;
}

/* Element @idx of array @ary (a T_ARRAY), 0 when outside or unreadable. */
static __u64 array_elem(const struct rf_reader *r, __u64 ary, __u64 idx)
{
	const struct rubyproc_layout *l = r->l;
	__u64 head[6], len, v = 0;

	if (rd(r, ary, head, sizeof(head)) || (head[0] & T_MASK) != T_ARRAY)
		return 0;
	if (head[0] & ARY_EMBEDDED) {
		len = ARY_EMBED_LEN(head[0]);
		if (idx >= len || l->ary_embed + 8 * (idx + 1) > sizeof(head))
			return 0;
		return field(head, sizeof(head), l->ary_embed + 8 * (unsigned)idx);
	}
	len = field(head, sizeof(head), l->ary_heap_len);
	if (idx >= len || rd(r, field(head, sizeof(head), l->ary_heap_ptr) + 8 * idx, &v, 8))
		return 0;
	return v;
}

void rf__read_cfunc(const struct rf_reader *r, __u64 id_table, __u64 def, struct rf_iseq *e)
{
	const struct rubyproc_layout *l = r->l;
	__u64 head[4], id = 0, serial, ids = 0, names;

	e->label = e->path = RUBYFRAMES_NO_STR;
	if (!id_table || rd(r, e->addr, head, sizeof(head)))
		return;
	/* an imemo of type method entry, still with the definition the
	 * sample saw */
	if ((head[0] & T_MASK) != T_IMEMO || ((head[0] >> FL_USHIFT) & 0xf) != IMEMO_MENT || !def ||
	    field(head, sizeof(head), l->me_def) != def) {
		*r->changed = true;
		return;
	}
	if (rd(r, def + l->def_original_id, &id, sizeof(id)) || !id ||
	    rd(r, id_table, &ids, sizeof(ids)) || !ids)
		return;
	serial = id > l->id_last_op ? id >> l->id_scope_shift : id;
	names = array_elem(r, ids, serial / l->id_entry_unit);
	if (!names)
		return;
	if (read_string(r, array_elem(r, names, (serial % l->id_entry_unit) * l->id_entry_size),
			&e->label))
		return;
	e->body = def;
	e->ok = 1;
}
