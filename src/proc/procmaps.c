#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/search.h"
#include "util/buf.h"
#include "proc/procmaps.h"
#include "util/scan.h"

struct procmaps {
	struct procmaps_entry *entries;
	size_t n;
	char *text;  /* copy of the input; paths point into it */
	size_t size; /* bytes of the one block that holds this, the entries and the text */
};

/* Blocks of freed tables, kept for the next parse: one allocated and freed
 * per read of a new process's maps (snapshot, symbolizer, table builder)
 * cost an munmap each, with a TLB shootdown on every CPU. Blocks are whole
 * pages, so one fits the next process of a similar size; larger than
 * PROCMAPS_POOL_BLOCK are freed. Under pool_mu (tables are freed by other
 * threads than the ones that read them). */
#define PROCMAPS_POOL 8
#define PROCMAPS_POOL_BLOCK (64u << 10)
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct procmaps *pool[PROCMAPS_POOL];
static unsigned int npool;

/* A block of at least @need bytes, from the pool or new. NULL on ENOMEM. */
static struct procmaps *block_get(size_t need)
{
	size_t size = (need + 4095) & ~(size_t)4095;
	struct procmaps *m = NULL;
	unsigned int i, best = PROCMAPS_POOL;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < npool; i++)
		if (pool[i]->size >= need &&
		    (best == PROCMAPS_POOL || pool[i]->size < pool[best]->size))
			best = i;
	if (best < PROCMAPS_POOL) {
		m = pool[best];
		pool[best] = pool[--npool];
	}
	pthread_mutex_unlock(&pool_mu);
	if (m)
		return m;
	m = malloc(size);
	if (m)
		m->size = size;
	return m;
}

/* Give @m's block back to the pool, or free it. */
static void block_put(struct procmaps *m)
{
	if (m->size <= PROCMAPS_POOL_BLOCK) {
		pthread_mutex_lock(&pool_mu);
		if (npool < PROCMAPS_POOL) {
			pool[npool++] = m;
			m = NULL;
		}
		pthread_mutex_unlock(&pool_mu);
	}
	free(m);
}

_Static_assert(sizeof(struct procmaps) % _Alignof(struct procmaps_entry) == 0,
	       "entries follow the table in its block");

static const char deleted_suffix[] = PROCMAPS_DELETED_SUFFIX;

static bool expect_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

/* Parse one line [@s, @end) (no newline) of the owned, writable text.
 * "start-end perms offset major:minor inode   path". */
static bool parse_line(char *s, char *end, struct procmaps_entry *e)
{
	const char *p = s;
	__u64 maj, min;
	size_t plen, slen = sizeof(deleted_suffix) - 1;
	char *path;

	memset(e, 0, sizeof(*e));
	if (!scan__hex(&p, end, &e->start) || !expect_char(&p, end, '-') ||
	    !scan__hex(&p, end, &e->end) || !expect_char(&p, end, ' '))
		return false;
	if (e->end <= e->start || end - p < 4)
		return false;
	e->perms |= p[0] == 'r' ? PROCMAPS_READ : 0;
	e->perms |= p[1] == 'w' ? PROCMAPS_WRITE : 0;
	e->perms |= p[2] == 'x' ? PROCMAPS_EXEC : 0;
	e->perms |= p[3] == 's' ? PROCMAPS_SHARED : 0;
	p += 4;
	if (!expect_char(&p, end, ' ') || !scan__hex(&p, end, &e->offset) ||
	    !expect_char(&p, end, ' ') || !scan__hex(&p, end, &maj) || !expect_char(&p, end, ':') ||
	    !scan__hex(&p, end, &min) || !expect_char(&p, end, ' ') ||
	    !scan__dec(&p, end, &e->inode))
		return false;
	if (maj > 0xffffffffu || min > 0xffffffffu)
		return false;
	e->dev_major = (__u32)maj;
	e->dev_minor = (__u32)min;
	if (p < end && *p != ' ' && *p != '\t')
		return false;
	skip_spaces(&p, end);
	path = s + (p - s);
	plen = (size_t)(end - path);
	/* The kernel pads with spaces and writes the path verbatim to the line
	 * end, so interior and trailing spaces belong to the path. */
	if (plen >= slen && !memcmp(path + plen - slen, deleted_suffix, slen)) {
		e->deleted = true;
		plen -= slen;
	}
	path[plen] = '\0';
	e->path = path;
	e->anonymous = plen == 0;
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct procmaps_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

int procmaps__parse(const char *text, size_t len, struct procmaps **out)
{
	struct procmaps *m = NULL;
	size_t cap = 0, nlines = 0, i;
	bool sorted = true;
	char *s, *end;
	int err;

	*out = NULL;
	for (i = 0; i < len; i++)
		nlines += text[i] == '\n';
	cap = nlines + 1;
	if (cap > PROCMAPS_MAX_ENTRIES + 1)
		cap = PROCMAPS_MAX_ENTRIES + 1;
	/* One block: the table, its entries, the text. */
	m = block_get(sizeof(*m) + cap * sizeof(*m->entries) + len + 1);
	if (!m)
		return -ENOMEM;
	m->n = 0;
	m->entries = (struct procmaps_entry *)(m + 1);
	m->text = (char *)(m->entries + cap);
	if (len)
		memcpy(m->text, text, len);
	m->text[len] = '\0';
	for (s = m->text, end = m->text + len; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		char *le = nl ? nl : end;
		struct procmaps_entry e;

		if (le - s <= PROCMAPS_MAX_LINE && parse_line(s, le, &e)) {
			if (m->n == PROCMAPS_MAX_ENTRIES) {
				err = -E2BIG;
				goto err_free;
			}
			if (m->n && e.start < m->entries[m->n - 1].start)
				sorted = false;
			m->entries[m->n++] = e;
		}
		s = le + 1;
	}
	if (!sorted)
		qsort(m->entries, m->n, sizeof(*m->entries), cmp_entry);
	*out = m;
	return 0;

err_free:
	procmaps__free(m);
	return err;
}

int procmaps__from_entries(const struct procmaps_entry *e, size_t n, struct procmaps **out)
{
	struct procmaps *m;
	size_t i, text = 0, at = 0;

	*out = NULL;
	if (n > PROCMAPS_MAX_ENTRIES)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		if (!e[i].path || e[i].end <= e[i].start)
			return -EINVAL;
		text += strlen(e[i].path) + 1;
	}
	m = block_get(sizeof(*m) + n * sizeof(*m->entries) + text + 1);
	if (!m)
		return -ENOMEM;
	m->n = n;
	m->entries = (struct procmaps_entry *)(m + 1);
	m->text = (char *)(m->entries + n);
	for (i = 0; i < n; i++) {
		size_t len = strlen(e[i].path);

		m->entries[i] = e[i];
		memcpy(m->text + at, e[i].path, len + 1);
		m->entries[i].path = m->text + at;
		m->entries[i].anonymous = len == 0;
		at += len + 1;
	}
	m->text[at] = '\0';
	qsort(m->entries, m->n, sizeof(*m->entries), cmp_entry);
	*out = m;
	return 0;
}

/* Each thread reads maps files into its own buffer, kept between reads: a
 * buffer per read cost a page-sized allocation and its release (an munmap
 * and a TLB shootdown) for every new process. One that grew past
 * PROCMAPS_KEEP_BUF for a huge process is released after use. */
#define PROCMAPS_KEEP_BUF (64u << 10)
static __thread struct buf read_buf;

int procmaps__read(const char *path, struct procmaps **out)
{
	struct buf *b = &read_buf;
	int err;

	*out = NULL;
	if (!b->max)
		buf__init(b, PROCMAPS_MAX_FILE);
	err = buf__read_file(b, path);
	if (!err)
		err = procmaps__parse((const char *)b->data, b->len, out);
	if (b->cap > PROCMAPS_KEEP_BUF)
		buf__release(b);
	buf__reset(b);
	return err;
}

void procmaps__source_set(struct procmaps_source *dst, const struct procmaps_source *src)
{
	if (src)
		*dst = *src;
	else
		memset(dst, 0, sizeof(*dst));
}

int procmaps__read_pid(const struct procmaps_source *src, const char *proc_root, int pid,
		       struct procmaps **out)
{
	char path[4200];

	*out = NULL;
	if (src && src->fn && !src->fn(src->ctx, pid, out))
		return 0;
	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
	return procmaps__read(path, out);
}

void procmaps__thread_done(void)
{
	buf__release(&read_buf);
}

void procmaps__free(struct procmaps *m)
{
	if (m)
		block_put(m);
}

size_t procmaps__count(const struct procmaps *m)
{
	return m->n;
}

const struct procmaps_entry *procmaps__entry(const struct procmaps *m, size_t i)
{
	return i < m->n ? &m->entries[i] : NULL;
}

const struct procmaps_entry *procmaps__find(const struct procmaps *m, __u64 addr)
{
	size_t lo = search__upto(m->entries, m->n, sizeof(*m->entries),
				 offsetof(struct procmaps_entry, start), addr);

	if (lo && addr < m->entries[lo - 1].end)
		return &m->entries[lo - 1];
	return NULL;
}
