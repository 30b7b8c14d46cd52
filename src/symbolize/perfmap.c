#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/pfile.h"
#include "util/utf8.h"
#include "util/search.h"
#include "util/arena.h"
#include "util/htab.h"
#include "symbolize/perfmap.h"
#include "util/scan.h"

/* Lookups first search the start of every SPARSE-th segment, a compact
 * array that stays in cache, then SPARSE segments. */
#define SPARSE 32

/* Bytes read from the file per pread (and parsed as one batch), at most;
 * always more than a line. */
#define READ_CHUNK (8u << 20)

/* An element of the name set. */
struct name_elem {
	const char *name;
	size_t len;
};

/* A parsed line of the batch being added; @seq orders lines (newer wins). */
struct raw_entry {
	__u64 start, end;
	const char *name;
	size_t seq;
};

struct perfmap {
	struct perfmap_sym *segs; /* sorted, non-overlapping */
	size_t nsegs, segs_cap;
	__u64 *sparse; /* segs[i * SPARSE].start, for i < nsparse */
	size_t nsparse;
	struct arena names_mem; /* the names, in chunks that never move */
	/* Open-addressing set of the names, so a name written many times (code
	 * recompiled at each tier, anonymous functions) is stored once. */
	struct htab names; /* struct name_elem */
	bool skip_line;	  /* inside a too-long line: drop bytes up to its newline */
	__u64 dev, ino;	  /* the file read so far */
	__u64 offset;	  /* bytes of it consumed */
	__u64 total_read; /* bytes consumed over the table's life, rereads included */
	bool have_file;
	__u64 max_bytes;
	size_t max_segs;
	struct perfmap_stats st;
};

struct perfmap *perfmap__new_limited(__u64 max_bytes, size_t max_segments)
{
	struct perfmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->max_bytes = max_bytes < PERFMAP_MAX_BYTES ? max_bytes : PERFMAP_MAX_BYTES;
	m->max_segs = max_segments < PERFMAP_MAX_SEGMENTS ? max_segments : PERFMAP_MAX_SEGMENTS;
	/* Names are bounded by the bytes read: one per line at most. */
	htab__init(&m->names, sizeof(struct name_elem), 0xffffffffu);
	return m;
}

struct perfmap *perfmap__new(void)
{
	return perfmap__new_limited(PERFMAP_MAX_BYTES, PERFMAP_MAX_SEGMENTS);
}

/* Drop the segments and their sparse index (the names stay). */
static void release_segs(struct perfmap *m)
{
	free(m->segs);
	m->segs = NULL;
	m->nsegs = m->segs_cap = 0;
	free(m->sparse);
	m->sparse = NULL;
	m->nsparse = 0;
}

static void release_all(struct perfmap *m)
{
	arena__release(&m->names_mem);
	htab__release(&m->names);
	release_segs(m);
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	release_all(m);
	free(m);
}

/* ---- names --------------------------------------------------------------------------- */

static bool name_eq(const void *elem, const void *key, void *ctx)
{
	const struct name_elem *e = elem, *k = key;

	(void)ctx;
	return e->len == k->len && !memcmp(e->name, k->name, k->len);
}

/* The stored copy of name @raw[0, @len) whose htab__hash() is @h: the same
 * pointer for the same bytes. Stored sanitized and NUL-terminated, for as
 * long as @m lives. (A name with bytes that needed sanitizing never equals
 * its stored copy, so it is stored again each time: rare, and bounded by
 * the byte cap.) NULL on allocation failure. */
static const char *intern_name(struct perfmap *m, const char *raw, size_t len, __u64 h)
{
	struct name_elem key = {.name = raw, .len = len}, *e;
	char *p;

	e = htab__find(&m->names, h, &key, name_eq, NULL);
	if (e)
		return e->name;
	p = arena__alloc(&m->names_mem, len + 1, 1);
	if (!p || htab__add(&m->names, h, (void **)&e))
		return NULL;
	utf8__sanitize(p, raw, len, '?');
	p[len] = '\0';
	e->name = p;
	e->len = len;
	return p;
}

/* ---- parsing ----------------------------------------------------------------------- */

/* Perf maps write addresses with or without "0x". */
static bool parse_hex(const char **p, const char *end, __u64 *val)
{
	const char *s = *p;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!scan__hex(&s, end, val))
		return false;
	*p = s;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Parse "START SIZE NAME" in [@s, @end) (no newline). The name is the rest of
 * the line without surrounding blanks or a trailing CR. */
static bool parse_line(const char *s, const char *end, __u64 *start, __u64 *size, const char **name,
		       size_t *nlen)
{
	const char *p = s;

	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, start) || p == end || !is_blank(*p))
		return false;
	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, size) || p == end || !is_blank(*p))
		return false;
	while (p < end && is_blank(*p))
		p++;
	while (end > p && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;
	if (p == end || !*size || *start + *size < *start)
		return false;
	*name = p;
	*nlen = (size_t)(end - p);
	return true;
}

/* ---- flattening ------------------------------------------------------------------- */

/* Stable LSD radix sort of @n elements of @size bytes at @a by the __u64 key
 * at byte @off, one byte per pass; passes where every key has the same byte
 * are skipped (addresses share their high bytes). @tmp has room for @n
 * elements. Stability keeps raw entries of the same start in line order.
 * Always inlined so that each caller's element size is a constant. */
static inline __attribute__((always_inline)) void radix_sort(void *a, void *tmp, size_t n,
							       size_t size, size_t off)
{
	unsigned char *e = a, *t = tmp;
	size_t count[256], i;
	int shift;

#define RADIX_KEY(p, i) (*(const __u64 *)(const void *)((p) + (i) * size + off))
	for (shift = 0; shift < 64; shift += 8) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(RADIX_KEY(e, i) >> shift) & 0xff]++;
		if (count[(RADIX_KEY(e, 0) >> shift) & 0xff] == n)
			continue;
		for (i = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			memcpy(t + count[(RADIX_KEY(e, i) >> shift) & 0xff]++ * size, e + i * size,
			       size);
		memcpy(e, t, n * size);
	}
#undef RADIX_KEY
}

/* Append [start, end) -> name to @out (room is guaranteed by the caller),
 * joining it to the previous segment when contiguous with the same name. */
static void emit(struct perfmap_sym *out, size_t *n, __u64 start, __u64 end, const char *name)
{
	if (start >= end)
		return;
	if (*n && out[*n - 1].end == start && out[*n - 1].name == name) {
		out[*n - 1].end = end;
		return;
	}
	out[*n].start = start;
	out[*n].end = end;
	out[*n].name = name;
	(*n)++;
}

/* Max-heap of raw entries by seq. */
static void heap_push(struct raw_entry **h, size_t *n, struct raw_entry *e)
{
	size_t i = (*n)++;

	while (i) {
		size_t parent = (i - 1) / 2;

		if (h[parent]->seq >= e->seq)
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = e;
}

static void heap_pop(struct raw_entry **h, size_t *n)
{
	struct raw_entry *last = h[--(*n)];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1]->seq > h[c]->seq)
			c++;
		if (h[c]->seq <= last->seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
}

/* Flatten @n raw entries into non-overlapping segments in @out (room for
 * 2 * @n), the highest seq winning. Sorts @raw. 0 or -ENOMEM. */
static int flatten(struct raw_entry *raw, size_t n, struct perfmap_sym *out, size_t *nout)
{
	struct raw_entry **heap = NULL, *tmp = NULL;
	__u64 *bounds = NULL;
	size_t nb = 0, nh = 0, i, next = 0;
	int err = 0;

	*nout = 0;
	bounds = malloc(2 * n * sizeof(*bounds));
	heap = malloc(n * sizeof(*heap));
	/* Scratch for the sorts: n entries hold 2n bounds too. */
	tmp = malloc(n * sizeof(*tmp));
	if (!bounds || !heap || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	radix_sort(raw, tmp, n, sizeof(*raw), offsetof(struct raw_entry, start));
	for (i = 0; i < n; i++) {
		bounds[nb++] = raw[i].start;
		bounds[nb++] = raw[i].end;
	}
	radix_sort(bounds, tmp, nb, sizeof(*bounds), 0);
	for (i = 0; i < nb; i++) {
		__u64 b = bounds[i];

		if (i && b == bounds[i - 1])
			continue;
		while (next < n && raw[next].start <= b)
			heap_push(heap, &nh, &raw[next++]);
		while (nh && heap[0]->end <= b)
			heap_pop(heap, &nh);
		if (nh) {
			/* Constant winner up to the next distinct boundary. */
			size_t j = i + 1;

			while (j < nb && bounds[j] == b)
				j++;
			if (j < nb)
				emit(out, nout, b,
				     bounds[j] < heap[0]->end ? bounds[j] : heap[0]->end,
				     heap[0]->name);
		}
	}
out:
	free(tmp);
	free(heap);
	free(bounds);
	return err;
}

/* Overlay the flattened segments @nw over @old into @out (room for
 * nold + 2 * nnew): inside a new segment the new name wins. */
static void overlay(const struct perfmap_sym *old, size_t nold, const struct perfmap_sym *nw,
		    size_t nnew, struct perfmap_sym *out, size_t *nout)
{
	__u64 clip = 0;
	size_t i = 0, j;

	*nout = 0;
	for (j = 0; j <= nnew; j++) {
		__u64 ns = j < nnew ? nw[j].start : ~0ull;

		/* The parts of old segments before @ns that no new one covers. */
		while (i < nold && old[i].start < ns) {
			__u64 s = old[i].start > clip ? old[i].start : clip;
			__u64 e = old[i].end < ns ? old[i].end : ns;

			if (s < e)
				emit(out, nout, s, e, old[i].name);
			if (old[i].end > ns)
				break; /* continues after the new segment */
			i++;
		}
		if (j == nnew)
			break;
		emit(out, nout, nw[j].start, nw[j].end, nw[j].name);
		clip = nw[j].end;
	}
}

/* Overlay batch @raw (@n entries) on @m. 0, -E2BIG (batch not applied),
 * -ENOMEM. */
static int apply_batch(struct perfmap *m, struct raw_entry *raw, size_t n)
{
	struct perfmap_sym *flat = NULL, *merged = NULL;
	size_t nflat = 0, nmerged = 0, i;
	__u64 *sparse = NULL;
	int err;

	if (!n)
		return 0;
	flat = malloc(2 * n * sizeof(*flat));
	if (!flat)
		return -ENOMEM;
	err = flatten(raw, n, flat, &nflat);
	if (err)
		goto out;
	if (!m->nsegs) {
		merged = flat;
		nmerged = nflat;
		flat = NULL;
	} else {
		merged = malloc((m->nsegs + 2 * nflat) * sizeof(*merged));
		if (!merged) {
			err = -ENOMEM;
			goto out;
		}
		overlay(m->segs, m->nsegs, flat, nflat, merged, &nmerged);
	}
	if (nmerged > m->max_segs) {
		err = -E2BIG;
		goto out;
	}
	sparse = malloc((nmerged / SPARSE + 1) * sizeof(*sparse));
	if (!sparse) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i * SPARSE < nmerged; i++)
		sparse[i] = merged[i * SPARSE].start;
	free(m->segs);
	free(m->sparse);
	m->segs = merged;
	m->nsegs = m->segs_cap = nmerged;
	m->sparse = sparse;
	m->nsparse = i;
	merged = NULL;
	m->st.segments = nmerged;
out:
	free(merged);
	free(flat);
	return err;
}

int perfmap__add_text(struct perfmap *m, const char *text, size_t len, size_t *consumed)
{
	struct raw_entry *raw = NULL;
	const char *s = text, *end = text + len;
	size_t nraw = 0, cap = 0, nlines = 0, i, lines = 0, bad = 0, *nlens = NULL;
	__u64 *hashes = NULL;
	bool skip = m->skip_line, capped = false;
	int err = 0;

	*consumed = 0;
	if (m->st.capped) {
		*consumed = len;
		return -E2BIG;
	}
	for (i = 0; i < len; i++)
		nlines += text[i] == '\n';
	if (nlines) {
		cap = nlines;
		raw = malloc(cap * sizeof(*raw));
		nlens = malloc(cap * sizeof(*nlens));
		hashes = malloc(cap * sizeof(*hashes));
		if (!raw || !nlens || !hashes) {
			err = -ENOMEM;
			goto out;
		}
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *name;
		__u64 start, size;
		size_t nlen;

		if (!nl) {
			/* A partial last line: wait for the rest, unless it is
			 * already too long to keep. */
			if (!skip) {
				if (end - s <= PERFMAP_MAX_LINE)
					break;
				bad++;
				skip = true;
			}
			s = end;
			break;
		}
		if (skip) {
			skip = false; /* the rest of a line already counted */
		} else if (nl - s > PERFMAP_MAX_LINE ||
			   !parse_line(s, nl, &start, &size, &name, &nlen)) {
			bad++;
		} else if (nraw >= m->max_segs) {
			capped = true;
		} else {
			/* The name is interned below: for now, where it is. */
			if (nlen >= PERFMAP_MAX_LINE)
				nlen = PERFMAP_MAX_LINE - 1;
			raw[nraw].start = start;
			raw[nraw].end = start + size;
			raw[nraw].name = name;
			raw[nraw].seq = nraw;
			nlens[nraw] = nlen;
			hashes[nraw] = htab__hash(name, nlen);
			nraw++;
			lines++;
		}
		s = nl + 1;
	}
	/* Intern the names, fetching the hash slot of a later one meanwhile:
	 * the slot loads are the cost of a big map. */
	for (i = 0; i < nraw; i++) {
		if (i + 8 < nraw)
			htab__prefetch(&m->names, hashes[i + 8]);
		raw[i].name = intern_name(m, raw[i].name, nlens[i], hashes[i]);
		if (!raw[i].name) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = apply_batch(m, raw, nraw);
	if (err == -E2BIG)
		capped = true;
	else if (err)
		goto out;
	m->skip_line = skip;
	m->st.lines += lines;
	m->st.bad_lines += bad;
	*consumed = (size_t)(s - text);
	if (capped) {
		m->st.capped = true;
		*consumed = len;
		err = -E2BIG;
	}
out:
	free(hashes);
	free(nlens);
	free(raw);
	return err;
}

/* ---- files ------------------------------------------------------------------------- */

int perfmap__update_fd(struct perfmap *m, int fd)
{
	char *chunk = NULL;
	struct stat st;
	size_t have = 0, used, csize;
	ssize_t n;
	int err = 0;

	if (fstat(fd, &st))
		return -errno;
	if (m->have_file && ((__u64)st.st_dev != m->dev || (__u64)st.st_ino != m->ino ||
			     (__u64)st.st_size < m->offset)) {
		/* Rewritten or replaced: start over. Names handed out stay
		 * valid (and interned); the byte cap counts both reads. */
		release_segs(m);
		m->skip_line = false;
		m->offset = 0;
		m->st.segments = 0;
		m->st.rereads++;
	}
	m->have_file = true;
	m->dev = (__u64)st.st_dev;
	m->ino = (__u64)st.st_ino;
	if (m->st.capped || (__u64)st.st_size <= m->offset)
		return m->st.capped ? -E2BIG : 0;
	/* No more than the new bytes need, but always room for a whole line. */
	csize = (__u64)st.st_size - m->offset < READ_CHUNK ? (size_t)(st.st_size - m->offset)
							   : READ_CHUNK;
	if (csize < 2 * PERFMAP_MAX_LINE)
		csize = 2 * PERFMAP_MAX_LINE;
	chunk = malloc(csize);
	if (!chunk)
		return -ENOMEM;
	for (;;) {
		__u64 room = m->max_bytes - m->total_read - have;
		size_t want = csize - have;

		if (!room) {
			m->st.capped = true;
			err = -E2BIG;
			break;
		}
		if (want > room)
			want = (size_t)room;
		n = pread(fd, chunk + have, want, (off_t)(m->offset + have));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		err = perfmap__add_text(m, chunk, have, &used);
		m->offset += used;
		m->total_read += used;
		m->st.bytes = m->total_read;
		if (err)
			break;
		memmove(chunk, chunk + used, have - used);
		have -= used;
	}
	free(chunk);
	return err;
}

int perfmap__open(const char *root, int nspid, unsigned int uid, int *fd)
{
	char name[64];
	struct stat st;
	int f = -1, err;

	*fd = -1;
	if (nspid <= 0)
		return -EINVAL;
	snprintf(name, sizeof(name), "/tmp/perf-%d.map", nspid);
	err = pfile__open_in_root(root, name, &f, &st);
	if (err)
		return err;
	if (st.st_uid != 0 && st.st_uid != uid) {
		close(f);
		return -EPERM;
	}
	*fd = f;
	return 0;
}

const struct perfmap_sym *perfmap__lookup(const struct perfmap *m, __u64 addr)
{
	size_t lo, hi;

	/* The last block whose first start is <= @addr, then within it. */
	lo = search__upto(m->sparse, m->nsparse, sizeof(*m->sparse), 0, addr);
	if (!lo)
		return NULL;
	hi = lo * SPARSE < m->nsegs ? lo * SPARSE : m->nsegs;
	lo = (lo - 1) * SPARSE;
	lo += search__upto(m->segs + lo, hi - lo, sizeof(*m->segs),
			   offsetof(struct perfmap_sym, start), addr);
	if (lo && addr < m->segs[lo - 1].end)
		return &m->segs[lo - 1];
	return NULL;
}

size_t perfmap__count(const struct perfmap *m)
{
	return m->nsegs;
}

const struct perfmap_sym *perfmap__sym(const struct perfmap *m, size_t i)
{
	return i < m->nsegs ? &m->segs[i] : NULL;
}

void perfmap__stats(const struct perfmap *m, struct perfmap_stats *st)
{
	*st = m->st;
}
