/* kbtf.c - the layout of a few kernel structs, read fast from kernel BTF
 * (see kbtf.h). Passes over the raw file: the string section for the
 * structs' names, the type section for their members (again for anonymous
 * members declared before their parent), the string section for the
 * members' names. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "collect/kbtf.h"

#define KBTF_MAX_STRUCTS 16
#define KBTF_NAME_MAX 64   /* longer struct or member names are not looked for */
#define KBTF_MAX_DEPTH 4   /* anonymous members inside anonymous members */
#define KBTF_MAX_PASSES 6  /* over the type section */
/* The first pass notes where every KBTF_STEP-th type starts (up to
 * KBTF_CHECKPOINTS of them: 2^19 types): a later pass, for the types
 * anonymous members named before their struct, starts at the nearest
 * one below each, instead of walking the whole section again. */
#define KBTF_STEP 64
#define KBTF_CHECKPOINTS 8192
#define KBTF_MAX_WANTED 256
#define KBTF_MAX_MEMBERS 4096
#define KBTF_WANT_BITS 4096

/* A reader of one section of the file: from its mapping (Linux >= 6.16
 * maps the kernel's BTF: no copy), else buffered (sysfs reads come a page
 * at a time). */
struct kbtf_rd {
	int fd;
	const unsigned char *map;
	size_t map_len;
	__u64 off, len, pos; /* section, and the position in it */
	const unsigned char *buf;
	__u32 bpos, blen;
	unsigned char store[1 << 16];
};

struct kbtf_member {
	__u32 name_off;
	__u32 bit_off;
};

/* An anonymous member to look into when the type pass reaches @id. */
struct kbtf_wanted {
	__u32 id;
	__u32 target;
	__u32 bit_off;
	__u32 depth;
	bool done;
};

struct kbtf {
	const char *const *names;
	size_t n;
	size_t name_len[KBTF_MAX_STRUCTS];
	__u32 name_off[KBTF_MAX_STRUCTS]; /* 0: name not in the strings */
	__u32 id[KBTF_MAX_STRUCTS];	  /* 0: not found */
	__u32 size[KBTF_MAX_STRUCTS];
	struct kbtf_member *mem;
	__u32 *mem_target;
	__u32 nmem;
	char (*mem_name)[KBTF_NAME_MAX];
	__u32 *order; /* members by name offset */
	__u32 cursor;
	struct kbtf_wanted want[KBTF_MAX_WANTED];
	__u32 nwant;
	/* Bit (id % KBTF_WANT_BITS) set for each id in want[]: a type pass
	 * looks through want[] only for the few ids that may be there, not
	 * for each of the kernel's 100k+ types. */
	__u64 want_bits[KBTF_WANT_BITS / 64];
	__u32 *cp; /* cp[j]: offset in the type section of type j * KBTF_STEP + 1 */
	__u32 ncp;
	/* The string section where the file is mapped (NULL: read through
	 * the buffer): struct names are compared there, not looked up by a
	 * pass over all the strings first. */
	const char *strs;
	__u32 str_len;
};

static void rd_start(struct kbtf_rd *r, __u64 off, __u64 len)
{
	r->off = off;
	r->len = len;
	r->pos = 0;
	r->bpos = r->blen = 0;
}

/* Refill the empty buffer. 0 or -errno (-EIO: short file). */
static int rd_fill(struct kbtf_rd *r)
{
	__u64 want = r->len - r->pos;
	ssize_t got;

	if (!want)
		return -EIO;
	if (r->map) {
		if (r->off + r->len > r->map_len)
			return -EIO;
		r->buf = r->map + r->off + r->pos;
		want = want > (1u << 30) ? 1u << 30 : want;
		r->pos += want;
		r->bpos = 0;
		r->blen = (__u32)want;
		return 0;
	}
	if (want > sizeof(r->store))
		want = sizeof(r->store);
	r->buf = r->store;
	got = pread(r->fd, r->store, want, (off_t)(r->off + r->pos));
	if (got <= 0)
		return got < 0 ? -errno : -EIO;
	r->pos += (__u64)got;
	r->bpos = 0;
	r->blen = (__u32)got;
	return 0;
}

/* Next @n bytes into @dst. 0 or -errno. */
static int rd_get(struct kbtf_rd *r, void *dst, __u32 n)
{
	unsigned char *d = dst;
	int err;

	if (n <= 16 && r->blen - r->bpos >= n) { /* the usual case, without a call */
		const unsigned char *p = r->buf + r->bpos;
		__u32 i;

		for (i = 0; i < n; i++)
			d[i] = p[i];
		r->bpos += n;
		return 0;
	}
	while (n) {
		__u32 k;

		if (r->bpos == r->blen && (err = rd_fill(r)))
			return err;
		k = r->blen - r->bpos < n ? r->blen - r->bpos : n;
		memcpy(d, r->buf + r->bpos, k);
		r->bpos += k;
		d += k;
		n -= k;
	}
	return 0;
}

static bool rd_end(const struct kbtf_rd *r)
{
	return r->bpos == r->blen && r->pos == r->len;
}

/* Offset of the next byte in the section. */
static __u64 rd_tell(const struct kbtf_rd *r)
{
	return r->pos - (r->blen - r->bpos);
}

/* Skip @n bytes. 0 or -errno. */
static int rd_skip(struct kbtf_rd *r, __u64 n)
{
	int err;

	while (n) {
		__u32 k;

		if (r->bpos == r->blen && (err = rd_fill(r)))
			return err;
		k = r->blen - r->bpos < n ? r->blen - r->bpos : (__u32)n;
		r->bpos += k;
		n -= k;
	}
	return 0;
}

/* Bytes that follow a type's 12-byte head. */
static __u64 type_extra(const struct btf_type *t)
{
	__u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64:
		return (__u64)vlen * 12;
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return (__u64)vlen * 8;
	default:
		return 0;
	}
}

/* One pass over the string section: @cb for each string of at most
 * KBTF_NAME_MAX - 1 bytes (@len of them, NUL-terminated), with its offset.
 * A string within the buffer is handed over in place; only one split by a
 * buffer refill is copied. */
static int strings_pass(struct kbtf_rd *r,
			void (*cb)(struct kbtf *, __u32, const char *, size_t),
			struct kbtf *k)
{
	char s[KBTF_NAME_MAX];
	__u32 off = 0, len = 0;
	int err;

	while (!rd_end(r)) {
		const unsigned char *p, *z;
		__u32 n;

		if (r->bpos == r->blen && (err = rd_fill(r)))
			return err;
		p = r->buf + r->bpos;
		z = memchr(p, 0, r->blen - r->bpos);
		n = (__u32)((z ? z : r->buf + r->blen) - p);
		r->bpos += n;
		if (z && !len) { /* whole in the buffer */
			r->bpos++;
			if (n < sizeof(s))
				cb(k, off, (const char *)p, n);
			off += n + 1;
			continue;
		}
		if (len < sizeof(s))
			memcpy(s + len, p, len + n < sizeof(s) ? n : sizeof(s) - len);
		len += n;
		if (!z)
			continue;
		r->bpos++;
		if (len < sizeof(s)) {
			s[len] = '\0';
			cb(k, off, s, len);
		}
		off += len + 1;
		len = 0;
	}
	return 0;
}

static void match_struct_name(struct kbtf *k, __u32 off, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!k->name_off[i] && k->name_len[i] == len && !memcmp(s, k->names[i], len))
			k->name_off[i] = off;
}

/* Strings come by offset: k->order (members by name offset) is walked
 * along with them. */
static void match_member_name(struct kbtf *k, __u32 off, const char *s, size_t len)
{
	while (k->cursor < k->nmem && k->mem[k->order[k->cursor]].name_off < off)
		k->cursor++;
	for (; k->cursor < k->nmem && k->mem[k->order[k->cursor]].name_off == off; k->cursor++)
		memcpy(k->mem_name[k->order[k->cursor]], s, len + 1);
}

/* With the file mapped: each member's name read at its offset in the
 * string section [@strs, @strs + @len), no pass over all strings. */
static void member_names_mapped(struct kbtf *k, const char *strs, __u32 len)
{
	for (__u32 i = 0; i < k->nmem; i++) {
		__u32 o = k->mem[i].name_off;
		size_t n;

		if (o >= len)
			continue;
		n = strnlen(strs + o, len - o < KBTF_NAME_MAX ? len - o : KBTF_NAME_MAX);
		if (n < KBTF_NAME_MAX && n < len - o)
			memcpy(k->mem_name[i], strs + o, n + 1);
	}
}

static const struct kbtf_member *sort_base;

static int by_name_off(const void *a, const void *b)
{
	__u32 x = sort_base[*(const __u32 *)a].name_off, y = sort_base[*(const __u32 *)b].name_off;

	return x < y ? -1 : x > y;
}

static void want(struct kbtf *k, __u32 id, __u32 target, __u32 bit_off, __u32 depth)
{
	if (depth > KBTF_MAX_DEPTH || k->nwant == KBTF_MAX_WANTED)
		return;
	k->want[k->nwant++] = (struct kbtf_wanted){id, target, bit_off, depth, false};
	k->want_bits[id % KBTF_WANT_BITS / 64] |= 1ull << (id % 64);
}

/* The members of struct/union @t (id @id, head read, members next in @r):
 * named ones kept for @target at @base bits on, anonymous ones wanted. */
static int take_members(struct kbtf *k, struct kbtf_rd *r, const struct btf_type *t,
			__u32 target, __u32 base, __u32 depth)
{
	__u32 vlen = BTF_INFO_VLEN(t->info), i;
	struct btf_member m;
	int err;

	for (i = 0; i < vlen; i++) {
		__u32 off;

		err = rd_get(r, &m, sizeof(m));
		if (err)
			return err;
		off = base + (BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m.offset) : m.offset);
		if (!m.name_off) {
			want(k, m.type, target, off, depth + 1);
		} else if (k->nmem < KBTF_MAX_MEMBERS) {
			k->mem[k->nmem] = (struct kbtf_member){m.name_off, off};
			k->mem_target[k->nmem++] = target;
		}
	}
	return 0;
}

/* The wanted entry for type @id not done yet, or NULL. */
static struct kbtf_wanted *wanted(struct kbtf *k, __u32 id)
{
	__u32 i;

	if (!(k->want_bits[id % KBTF_WANT_BITS / 64] >> (id % 64) & 1))
		return NULL;
	for (i = 0; i < k->nwant; i++)
		if (!k->want[i].done && k->want[i].id == id)
			return &k->want[i];
	return NULL;
}

/* Index in k->names of the struct not found yet named at string offset
 * @off, or k->n. */
static size_t struct_index(const struct kbtf *k, __u32 off)
{
	const char *name;
	size_t i, room;

	if (!k->strs) {
		for (i = 0; i < k->n; i++)
			if (!k->id[i] && off == k->name_off[i])
				return i;
		return k->n;
	}
	if (off >= k->str_len)
		return k->n;
	name = k->strs + off;
	room = k->str_len - off;
	for (i = 0; i < k->n; i++)
		if (!k->id[i] && k->name_len[i] < room && name[0] == k->names[i][0] &&
		    !memcmp(name, k->names[i], k->name_len[i] + 1))
			return i;
	return k->n;
}

/* The types after type *@idp (@r positioned at the next one) up to type
 * @last (0: to the end); *@idp is then the last type read. @first: the
 * first pass, from the start: also find the structs, and note the
 * checkpoints. */
static int types_pass(struct kbtf *k, struct kbtf_rd *r, bool first, __u32 *idp, __u32 last)
{
	struct btf_type t;
	__u32 id = *idp;
	size_t i;
	int err = 0;

	while (!rd_end(r) && (!last || id < last)) {
		struct kbtf_wanted *w;
		__u64 skip;

		if (first && id % KBTF_STEP == 0 && id / KBTF_STEP == k->ncp &&
		    k->ncp < KBTF_CHECKPOINTS && rd_tell(r) <= UINT32_MAX)
			k->cp[k->ncp++] = (__u32)rd_tell(r);
		err = rd_get(r, &t, sizeof(t));
		if (err)
			goto out;
		id++;
		skip = type_extra(&t);
		w = k->nwant ? wanted(k, id) : NULL;
		if (w) {
			__u32 kind = BTF_INFO_KIND(t.info);

			w->done = true;
			if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION) {
				err = take_members(k, r, &t, w->target, w->bit_off, w->depth);
				if (err)
					goto out;
				continue;
			}
			if (kind == BTF_KIND_TYPEDEF || kind == BTF_KIND_CONST ||
			    kind == BTF_KIND_VOLATILE || kind == BTF_KIND_RESTRICT ||
			    kind == BTF_KIND_TYPE_TAG)
				want(k, t.type, w->target, w->bit_off, w->depth);
		} else if (first && BTF_INFO_KIND(t.info) == BTF_KIND_STRUCT && t.name_off) {
			i = struct_index(k, t.name_off);
			if (i < k->n) {
				k->id[i] = id;
				k->size[i] = t.size;
				err = take_members(k, r, &t, (__u32)i, 0, 0);
				if (err)
					goto out;
				continue;
			}
		}
		err = rd_skip(r, skip);
		if (err)
			goto out;
	}
out:
	*idp = id;
	return err;
}

/* The lowest id wanted and not found yet, 0 when none. */
static __u32 next_wanted(const struct kbtf *k)
{
	__u32 i, id = 0;

	for (i = 0; i < k->nwant; i++)
		if (!k->want[i].done && (!id || k->want[i].id < id))
			id = k->want[i].id;
	return id;
}

/* The passes after the first: from the checkpoint below each type still
 * wanted, to it. A full pass when it has none (the first pass stopped
 * noting them). 0 or -errno. */
static int later_passes(struct kbtf *k, struct kbtf_rd *r, __u64 off, __u64 len)
{
	int err = 0, pass = 1;
	__u32 id, j, i, at;

	while (!err && (id = next_wanted(k))) {
		j = (id - 1) / KBTF_STEP;
		if (j >= k->ncp || k->cp[j] > len) {
			if (++pass > KBTF_MAX_PASSES)
				break;
			rd_start(r, off, len);
			at = 0;
			err = types_pass(k, r, false, &at, 0);
		} else {
			rd_start(r, off + k->cp[j], len - k->cp[j]);
			at = j * KBTF_STEP;
			err = types_pass(k, r, false, &at, id);
		}
		/* At the end: types past the last one are never found. */
		for (i = 0; !err && rd_end(r) && i < k->nwant; i++)
			if (k->want[i].id > at)
				k->want[i].done = true;
	}
	return err;
}

/* The result: each struct found, with its members (type: one 64-bit int). */
static struct btf *build(const struct kbtf *k)
{
	struct btf *btf = btf__new_empty();
	int ty, err = 0;
	size_t i;
	__u32 j;

	if (!btf)
		return NULL;
	ty = btf__add_int(btf, "long", 8, BTF_INT_SIGNED);
	err = ty < 0 ? ty : 0;
	for (i = 0; i < k->n && !err; i++) {
		if (!k->id[i])
			continue;
		err = btf__add_struct(btf, k->names[i], k->size[i]);
		for (j = 0; j < k->nmem && err >= 0; j++)
			if (k->mem_target[j] == i && k->mem_name[j][0])
				/* A bitfield keeps its bit offset (size 1 is enough). */
				err = btf__add_field(btf, k->mem_name[j], ty, k->mem[j].bit_off,
						     k->mem[j].bit_off % 8 ? 1 : 0);
		err = err < 0 ? err : 0;
	}
	if (err) {
		btf__free(btf);
		errno = -err;
		return NULL;
	}
	return btf;
}

/* The header into *@h, and where k->names are in the strings (mapped:
 * compared in place later). 0 or -errno. */
static int scan_head(struct kbtf *k, struct kbtf_rd *r, struct btf_header *h)
{
	int err;

	rd_start(r, 0, sizeof(*h));
	err = rd_get(r, h, sizeof(*h));
	if (err)
		return err;
	if (h->magic != BTF_MAGIC || h->hdr_len < sizeof(*h))
		return -EINVAL;
	if (r->map) {
		__u64 so = (__u64)h->hdr_len + h->str_off;

		if (so > r->map_len || h->str_len > r->map_len - so)
			return -EIO;
		k->strs = (const char *)r->map + so;
		k->str_len = h->str_len;
		return 0;
	}
	rd_start(r, (__u64)h->hdr_len + h->str_off, h->str_len);
	return strings_pass(r, match_struct_name, k);
}

/* The passes; 0 or -errno. */
static int scan(struct kbtf *k, struct kbtf_rd *r)
{
	struct btf_header h;
	int err;

	err = scan_head(k, r, &h);
	if (!err) {
		__u32 at = 0;

		rd_start(r, (__u64)h.hdr_len + h.type_off, h.type_len);
		err = types_pass(k, r, true, &at, 0);
	}
	if (!err)
		err = later_passes(k, r, (__u64)h.hdr_len + h.type_off, h.type_len);
	if (!err && k->strs) {
		member_names_mapped(k, k->strs, k->str_len);
	} else if (!err) {
		__u32 i;

		for (i = 0; i < k->nmem; i++)
			k->order[i] = i;
		sort_base = k->mem;
		qsort(k->order, k->nmem, sizeof(*k->order), by_name_off);
		rd_start(r, (__u64)h.hdr_len + h.str_off, h.str_len);
		err = strings_pass(r, match_member_name, k);
	}
	return err;
}

/* Open @path into @r: mapped when it can be, else read through the
 * buffer. 0 or -errno. */
static int rd_open(struct kbtf_rd *r, const char *path)
{
	struct stat st;

	r->map = NULL;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	if (!fstat(r->fd, &st) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
			       r->fd, 0);

		if (m != MAP_FAILED) {
			r->map = m;
			r->map_len = (size_t)st.st_size;
		}
	}
	return 0;
}

static void rd_close(struct kbtf_rd *r)
{
	if (r->map)
		munmap((void *)r->map, r->map_len);
	close(r->fd);
}

struct btf *kbtf__load(const char *path, const char *const *structs, size_t n)
{
	struct kbtf *k = NULL;
	struct kbtf_rd *r = NULL;
	struct btf *btf = NULL;
	int err = 0;

	if (n > KBTF_MAX_STRUCTS) {
		errno = E2BIG;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	r = malloc(sizeof(*r));
	if (k) {
		k->mem = calloc(KBTF_MAX_MEMBERS, sizeof(*k->mem));
		k->mem_target = calloc(KBTF_MAX_MEMBERS, sizeof(*k->mem_target));
		k->mem_name = calloc(KBTF_MAX_MEMBERS, sizeof(*k->mem_name));
		k->order = calloc(KBTF_MAX_MEMBERS, sizeof(*k->order));
		k->cp = malloc(KBTF_CHECKPOINTS * sizeof(*k->cp));
	}
	if (!k || !r || !k->mem || !k->mem_target || !k->mem_name || !k->order || !k->cp) {
		err = -ENOMEM;
		goto out;
	}
	k->names = structs;
	k->n = n;
	for (size_t i = 0; i < n; i++)
		k->name_len[i] = strlen(structs[i]);
	err = rd_open(r, path);
	if (err)
		goto out;
	err = scan(k, r);
	rd_close(r);
	if (!err) {
		btf = build(k);
		err = btf ? 0 : -errno;
	}
out:
	if (k) {
		free(k->mem);
		free(k->mem_target);
		free(k->mem_name);
		free(k->order);
		free(k->cp);
	}
	free(k);
	free(r);
	if (err)
		errno = -err;
	return btf;
}

int kbtf__func_id(const char *path, const char *name, __u32 *id)
{
	const char *names[1] = {name};
	struct kbtf *k = calloc(1, sizeof(*k));
	struct kbtf_rd *r = malloc(sizeof(*r));
	struct btf_header h;
	struct btf_type t;
	__u32 at = 0;
	int err;

	if (!k || !r) {
		err = -ENOMEM;
		goto out;
	}
	k->names = names;
	k->n = 1;
	k->name_len[0] = strlen(name);
	err = rd_open(r, path);
	if (err)
		goto out;
	err = scan_head(k, r, &h);
	if (!err && !k->strs && !k->name_off[0])
		err = -ENOENT; /* not among the strings */
	if (!err)
		rd_start(r, (__u64)h.hdr_len + h.type_off, h.type_len);
	while (!err) {
		if (rd_end(r)) {
			err = -ENOENT;
			break;
		}
		err = rd_get(r, &t, sizeof(t));
		if (err)
			break;
		at++;
		if (BTF_INFO_KIND(t.info) == BTF_KIND_FUNC && t.name_off &&
		    struct_index(k, t.name_off) == 0) {
			*id = at;
			break;
		}
		err = rd_skip(r, type_extra(&t));
	}
	rd_close(r);
out:
	free(k);
	free(r);
	return err;
}

/* Byte offset of member @name of the composite type @id (inside anonymous
 * structs and unions too), -1 if absent. */
static long member_off(const struct btf *btf, __u32 id, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;
	__u16 i;

	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_composite(t) || depth > 4)
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		long off;

		if (mn && *mn) {
			if (!strcmp(mn, name))
				return (long)(btf_member_bit_offset(t, i) / 8);
			continue;
		}
		off = member_off(btf, m->type, name, depth + 1);
		if (off >= 0)
			return (long)(btf_member_bit_offset(t, i) / 8) + off;
	}
	return -1;
}

int kbtf__member_off(const struct btf *btf, const char *sname, const char *name, __u32 *out)
{
	__s32 id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	long off = id > 0 ? member_off(btf, (__u32)id, name, 0) : -1;

	if (off < 0)
		return -ENOENT;
	*out = (__u32)off;
	return 0;
}
