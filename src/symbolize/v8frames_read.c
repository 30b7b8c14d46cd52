/* v8frames_read.c - V8 objects read from a live process for naming frames:
 * strings (sequential, cons, thin, sliced; one- and two-byte), scripts'
 * line ends, byte arrays, scope infos. Everything read is untrusted:
 * types are checked before a field is used, sizes capped, and cons
 * strings followed to a bounded depth. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/pyproc.h"
#include "symbolize/v8frames.h"
#include "symbolize/v8frames_int.h"

#define MAX_DEPTH 16	      /* cons and sliced strings followed */
#define CHUNK 4096	      /* characters read at once (on the stack) */
#define SCOPE_SLOTS 24	      /* ScopeInfo slots looked at for the name */
#define INLINE_LOCAL_NAMES 75 /* more context locals: their names are a table (one slot) */

int v8r__read(const struct v8r *r, __u64 addr, void *buf, size_t len)
{
	return pyproc__read_mem(r->proc_root, r->pid, addr, buf, len);
}

int v8r__word(const struct v8r *r, __u64 addr, __u64 *v)
{
	return v8r__read(r, addr, v, 8);
}

bool v8r__is_heap(const struct v8r *r, __u64 v)
{
	return (v & r->l->heap_tag_mask) == r->l->heap_tag && v > 0xffff;
}

__u64 v8r__untag(const struct v8r *r, __u64 v)
{
	return v & ~(__u64)r->l->heap_tag_mask;
}

__s64 v8r__smi(const struct v8r *r, __u64 v)
{
	if (v & 1)
		return -1;
	return (__s64)(__s32)(v >> r->l->smi_shift);
}

int v8r__type(const struct v8r *r, __u64 v, __u16 *type)
{
	__u64 map;
	int err;

	if (!v8r__is_heap(r, v))
		return -EINVAL;
	err = v8r__word(r, v8r__untag(r, v) + r->l->obj_map, &map);
	if (err)
		return err;
	if (!v8r__is_heap(r, map))
		return -EINVAL;
	return v8r__read(r, v8r__untag(r, map) + r->l->map_instance_type, type, 2);
}

/* ---- strings ---- */

/* Where the characters of a string go: UTF-8 text, or line ends. */
struct sink {
	/* text */
	char *out;
	size_t cap, len;
	/* line ends */
	__u32 *ends;
	size_t nends, ends_cap;
	__u32 pos;	/* characters seen */
	bool lines;
	__u16 pending; /* a high surrogate waiting for its pair */
};

static size_t put_utf8(__u32 c, char *o)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 63));
		o[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 63));
	o[2] = (char)(0x80 | ((c >> 6) & 63));
	o[3] = (char)(0x80 | (c & 63));
	return 4;
}

static int sink_text(struct sink *s, __u32 u)
{
	__u32 c = u;

	if (s->pending) {
		if (u >= 0xdc00 && u < 0xe000)
			c = 0x10000 + (((__u32)s->pending - 0xd800) << 10) + (u - 0xdc00);
		else if (s->len + 3 < s->cap)
			s->len += put_utf8(0xfffd, s->out + s->len);
		s->pending = 0;
		if (c != u)
			goto put;
	}
	if (u >= 0xd800 && u < 0xdc00) {
		s->pending = (__u16)u;
		return 0;
	}
	if (u >= 0xdc00 && u < 0xe000)
		c = 0xfffd;
	if (!c)
		return -EINVAL;
put:
	if (s->len + 4 >= s->cap)
		return -E2BIG;
	s->len += put_utf8(c, s->out + s->len);
	return 0;
}

static int sink_line(struct sink *s, __u32 u)
{
	if (u == '\n') {
		if (s->nends >= V8FRAMES_MAX_LINES)
			return -E2BIG;
		if (s->nends == s->ends_cap) {
			size_t nc = s->ends_cap ? s->ends_cap * 2 : 1024;
			__u32 *p = realloc(s->ends, nc * sizeof(*p));

			if (!p)
				return -ENOMEM;
			s->ends = p;
			s->ends_cap = nc;
		}
		s->ends[s->nends++] = s->pos;
	}
	s->pos++;
	return 0;
}

/* Characters [@from, @from + @n) of a sequential string whose chars start
 * at @data, @wide bytes each. */
static int seq_chars(const struct v8r *r, __u64 data, __u32 from, __u32 n, int wide,
		     struct sink *s)
{
	unsigned char buf[2 * CHUNK];
	__u32 done = 0, k, i;
	int err;

	while (done < n) {
		k = n - done < CHUNK ? n - done : CHUNK;
		err = v8r__read(r, data + (__u64)(from + done) * (unsigned)wide, buf,
				(size_t)k * (unsigned)wide);
		if (err)
			return err;
		for (i = 0; i < k; i++) {
			__u32 u = wide == 1 ? buf[i] : (__u32)buf[2 * i] | (__u32)buf[2 * i + 1] << 8;

			err = s->lines ? sink_line(s, u) : sink_text(s, u);
			if (err)
				return err;
		}
		done += k;
	}
	return 0;
}

/* Characters [@from, @from + @n) of the string at tagged @v. */
static int str_walk(const struct v8r *r, __u64 v, __u32 from, __u32 n, int depth, struct sink *s)
{
	const struct v8proc_layout *l = r->l;
	__u64 a, w[2];
	__s32 len;
	__u16 type;
	int err;

	if (depth > MAX_DEPTH)
		return -E2BIG;
	err = v8r__type(r, v, &type);
	if (err)
		return err;
	if (type >= l->type_first_nonstring)
		return -EINVAL;
	a = v8r__untag(r, v);
	err = v8r__read(r, a + l->str_length, &len, 4);
	if (err)
		return err;
	if (len < 0 || (__u32)len < from || (__u32)len - from < n)
		return -EINVAL;
	if ((type & l->str_repr_mask) == l->str_seq)
		return seq_chars(r, a + l->seq_chars, from, n,
				 (type & l->str_enc_mask) == l->str_onebyte ? 1 : 2, s);
	if ((type & l->str_repr_mask) == l->str_thin && l->thin_actual != V8PROC_NONE)
		return v8r__word(r, a + l->thin_actual, &w[0]) ?: str_walk(r, w[0], from, n, depth + 1, s);
	if ((type & l->str_repr_mask) == l->str_sliced && l->sliced_parent != V8PROC_NONE &&
	    l->sliced_offset != V8PROC_NONE) {
		__s64 off;

		if (v8r__word(r, a + l->sliced_parent, &w[0]) || v8r__word(r, a + l->sliced_offset, &w[1]))
			return -EFAULT;
		off = v8r__smi(r, w[1]);
		if (off < 0)
			return -EINVAL;
		return str_walk(r, w[0], from + (__u32)off, n, depth + 1, s);
	}
	if ((type & l->str_repr_mask) == l->str_cons && l->cons_first != V8PROC_NONE &&
	    l->cons_second != V8PROC_NONE) {
		__s32 flen;
		__u32 take;

		if (v8r__word(r, a + l->cons_first, &w[0]) || v8r__word(r, a + l->cons_second, &w[1]))
			return -EFAULT;
		err = v8r__read(r, v8r__untag(r, w[0]) + l->str_length, &flen, 4);
		if (err)
			return err;
		if (flen < 0 || flen > len)
			return -EINVAL;
		if (from < (__u32)flen) {
			take = (__u32)flen - from < n ? (__u32)flen - from : n;
			err = str_walk(r, w[0], from, take, depth + 1, s);
			if (err)
				return err;
			from += take;
			n -= take;
		}
		return n ? str_walk(r, w[1], from - (__u32)flen, n, depth + 1, s) : 0;
	}
	return -EINVAL; /* external strings: their bytes are outside the heap */
}

/* The length of the string at tagged @v. */
static int str_len(const struct v8r *r, __u64 v, __u32 *len)
{
	__s32 n;
	int err;

	if (!v8r__is_heap(r, v))
		return -EINVAL;
	err = v8r__read(r, v8r__untag(r, v) + r->l->str_length, &n, 4);
	if (err)
		return err;
	if (n < 0)
		return -EINVAL;
	*len = (__u32)n;
	return 0;
}

int v8r__string(const struct v8r *r, __u64 v, char *out, size_t cap, size_t *outlen)
{
	struct sink s = {.out = out, .cap = cap};
	__u32 len;
	int err;

	if (cap < 5)
		return -EINVAL;
	err = str_len(r, v, &len);
	if (err)
		return err;
	if (len > V8FRAMES_MAX_NAME)
		return -E2BIG;
	err = str_walk(r, v, 0, len, 0, &s);
	if (!err && s.pending)
		err = sink_text(&s, 0xfffd);
	if (err)
		return err;
	out[s.len] = 0;
	*outlen = s.len;
	return 0;
}

/* ---- scripts ---- */

/* Line ends V8 computed: a FixedArray of Smis. */
static int line_ends_array(const struct v8r *r, __u64 v, __u32 **ends, size_t *n)
{
	const struct v8proc_layout *l = r->l;
	__u64 *w = NULL, len;
	__u32 *e = NULL;
	__u16 type;
	__s64 cnt, i, x;
	int err;

	if (l->fixed_length == V8PROC_NONE || l->fixed_data == V8PROC_NONE || v8r__type(r, v, &type) ||
	    type != l->type_fixed_array)
		return -ENOENT;
	err = v8r__word(r, v8r__untag(r, v) + l->fixed_length, &len);
	if (err)
		return err;
	cnt = v8r__smi(r, len);
	if (cnt < 0 || cnt > (__s64)V8FRAMES_MAX_LINES)
		return -E2BIG;
	w = malloc((size_t)(cnt ? cnt : 1) * 8);
	e = malloc((size_t)(cnt ? cnt : 1) * 4);
	err = !w || !e ? -ENOMEM : v8r__read(r, v8r__untag(r, v) + l->fixed_data, w, (size_t)cnt * 8);
	for (i = 0; !err && i < cnt; i++) {
		x = v8r__smi(r, w[i]);
		if (x < 0 || (i && (__u32)x <= e[i - 1]))
			err = -EINVAL; /* not ascending offsets */
		else
			e[i] = (__u32)x;
	}
	free(w);
	if (err) {
		free(e);
		return err;
	}
	*ends = e;
	*n = (size_t)cnt;
	return 0;
}

int v8r__line_ends(const struct v8r *r, __u64 script, __u32 **ends, size_t *n)
{
	const struct v8proc_layout *l = r->l;
	struct sink s = {.lines = true};
	__u64 v;
	__u32 len;
	int err;

	*ends = NULL;
	*n = 0;
	if (l->script_line_ends != V8PROC_NONE && !v8r__word(r, script + l->script_line_ends, &v) &&
	    !line_ends_array(r, v, ends, n))
		return 0;
	if (l->script_source == V8PROC_NONE)
		return -ENOENT;
	err = v8r__word(r, script + l->script_source, &v);
	err = err ?: str_len(r, v, &len);
	if (err)
		return err == -EINVAL ? -ENOENT : err;
	if (len > V8FRAMES_MAX_SOURCE)
		return -E2BIG;
	err = str_walk(r, v, 0, len, 0, &s);
	if (err) {
		free(s.ends);
		return err == -EINVAL ? -ENOENT : err;
	}
	*ends = s.ends;
	*n = s.nends;
	return 0;
}

int v8r__byte_array(const struct v8r *r, __u64 v, unsigned char **out, size_t *n)
{
	const struct v8proc_layout *l = r->l;
	unsigned char *b;
	__u64 len;
	__s64 cnt;
	__u16 type;
	int err;

	if (l->type_byte_array == V8PROC_NONE || l->fixed_length == V8PROC_NONE ||
	    l->fixed_data == V8PROC_NONE)
		return -ENOENT;
	if (v8r__type(r, v, &type) || type != l->type_byte_array)
		return -ENOENT;
	err = v8r__word(r, v8r__untag(r, v) + l->fixed_length, &len);
	if (err)
		return err;
	cnt = v8r__smi(r, len);
	if (cnt < 0 || cnt > V8FRAMES_MAX_POSITIONS)
		return -E2BIG;
	b = malloc(cnt ? (size_t)cnt : 1);
	if (!b)
		return -ENOMEM;
	err = v8r__read(r, v8r__untag(r, v) + l->fixed_data, b, (size_t)cnt);
	if (err) {
		free(b);
		return err;
	}
	*out = b;
	*n = (size_t)cnt;
	return 0;
}

int v8r__scope_info(const struct v8r *r, __u64 v, char *out, size_t cap, size_t *outlen,
		    __s64 *start)
{
	const struct v8proc_layout *l = r->l;
	__u64 slot[SCOPE_SLOTS];
	__s64 locals, a, b;
	size_t i, first;
	bool named = false;

	*start = -1;
	if (l->scope_first_vars == 0xff || l->scope_ncontextlocals == 0xff ||
	    l->scope_first_vars >= SCOPE_SLOTS || l->scope_ncontextlocals >= SCOPE_SLOTS)
		return -ENOENT;
	/* the slots follow the map word */
	if (v8r__read(r, v8r__untag(r, v) + l->tagged_size, slot, sizeof(slot)))
		return -EFAULT;
	locals = v8r__smi(r, slot[l->scope_ncontextlocals]);
	if (locals < 0)
		return -EINVAL;
	/* context local names (inline, or one table slot), then their infos */
	first = l->scope_first_vars + (size_t)(locals < INLINE_LOCAL_NAMES ? locals : 1) +
		(size_t)locals;
	for (i = first; i < SCOPE_SLOTS; i++) {
		__u16 type;

		/* an empty name: the inferred one ("Module._compile" of
		 * `Module.prototype._compile = function`) may follow */
		if (!named && v8r__is_heap(r, slot[i]) && !v8r__type(r, slot[i], &type) &&
		    type < l->type_first_nonstring && !v8r__string(r, slot[i], out, cap, outlen))
			named = *outlen > 0;
		if (i > first) {
			a = v8r__smi(r, slot[i - 1]);
			b = v8r__smi(r, slot[i]);
			if (a >= 0 && b > a && !(slot[i - 1] & 1) && !(slot[i] & 1)) {
				*start = a;
				break;
			}
		}
	}
	return named ? 0 : -ENOENT;
}
