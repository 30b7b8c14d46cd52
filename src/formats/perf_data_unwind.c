/* perf_data_unwind.c - unwind rows of mapped files for the perf.data
 * reader (see perf_data_unwind.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/cfi.h"
#include "formats/perf_data_unwind.h"
#include "symbolize/elfsym.h"
#include "util/array.h"
#include "util/intern.h"

/* One file, by (path, build-id). */
struct uw_file {
	bool ok;
	__u64 *rows;
	__u32 nrows;
	unsigned int nseg;
	__u64 seg[CFI_MAX_SEGMENTS][3]; /* offset, vaddr, filesz */
};

struct perf_data_unwinder {
	struct intern *keys; /* "path\0build-id" */
	struct uw_file *files;
	size_t cap;
	size_t rows_used, unusable;
	__s64 not_after;
};

struct perf_data_unwinder *perf_data_unwinder__new(__s64 not_after)
{
	struct perf_data_unwinder *u = calloc(1, sizeof(*u));

	if (u && !(u->keys = intern__new(PERF_DATA_UNWIND_FILES))) {
		free(u);
		u = NULL;
	}
	if (u)
		u->not_after = not_after;
	return u;
}

void perf_data_unwinder__free(struct perf_data_unwinder *u)
{
	size_t i, n;

	if (!u)
		return;
	n = intern__count(u->keys);
	for (i = 0; i < n && i < u->cap; i++)
		free(u->files[i].rows);
	free(u->files);
	intern__free(u->keys);
	free(u);
}

/* Compile @f's rows from the file at @path (build-id @bid or NULL). */
static void load(struct perf_data_unwinder *u, struct uw_file *f, const char *path,
		 const char *bid)
{
	char hex[ELFSYM_BUILD_ID_HEX];
	struct cfi_table *t = NULL;
	const struct cfi_row *rows;
	struct stat sb;
	void *img;
	size_t n, i;
	int fd;

	fd = path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	if ((bid && (elfsym__read_build_id_fd(fd, hex, sizeof(hex)) || strcmp(hex, bid))) ||
	    fstat(fd, &sb) || !S_ISREG(sb.st_mode) || !sb.st_size ||
	    (unsigned long long)sb.st_size > PERF_DATA_UNWIND_FILE_MAX) {
		close(fd);
		return;
	}
	img = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return;
	if (!cfi__parse(img, (size_t)sb.st_size, &t)) {
		rows = cfi__rows(t, &n);
		for (f->nseg = 0; f->nseg < CFI_MAX_SEGMENTS; f->nseg++)
			if (cfi__segment(t, f->nseg, &f->seg[f->nseg][0], &f->seg[f->nseg][1],
					 &f->seg[f->nseg][2]))
				break;
		/* Rows above 4 GiB do not pack: such a file uses frame pointers. */
		if (n && rows[n - 1].pc <= 0xffffffffull &&
		    n <= PERF_DATA_UNWIND_ROWS - u->rows_used &&
		    (f->rows = malloc(n * sizeof(*f->rows)))) {
			for (i = 0; i < n; i++)
				f->rows[i] = cfi__pack(&rows[i]);
			f->nrows = (__u32)n;
			u->rows_used += n;
		}
		f->ok = f->nseg > 0;
	}
	cfi__free(t);
	munmap(img, (size_t)sb.st_size);
}

/* ELF address of file offset @pgoff, the start of a mapping of @f. */
static int vaddr_of(const struct uw_file *f, __u64 pgoff, __u64 *vaddr)
{
	unsigned int i;

	for (i = 0; i < f->nseg; i++) {
		__u64 off = f->seg[i][0], va = f->seg[i][1], sz = f->seg[i][2];

		if (pgoff >= off && pgoff - off < sz) {
			*vaddr = va + (pgoff - off);
			return 0;
		}
		if (pgoff < off && off - pgoff < 4096 && va >= off - pgoff) {
			*vaddr = va - (off - pgoff); /* page-aligned below the segment */
			return 0;
		}
	}
	return -ENOENT;
}

static int rows_cb(void *ctx, const char *path, const char *build_id, __u64 pgoff,
		   const __u64 **rows, __u32 *nrows, __u64 *vaddr)
{
	struct perf_data_unwinder *u = ctx;
	char key[4096 + 64];
	size_t plen = strnlen(path, 4096), blen = build_id ? strnlen(build_id, 63) : 0;
	size_t old = u->cap;
	struct uw_file *f;
	bool added;
	__u32 idx;

	memcpy(key, path, plen);
	key[plen] = '\0';
	memcpy(key + plen + 1, build_id ? build_id : "", blen);
	if (intern__put(u->keys, key, plen + 1 + blen, &idx, &added))
		return -ENOENT;
	if (array__grow((void **)&u->files, &u->cap, idx, sizeof(*u->files), 64,
			PERF_DATA_UNWIND_FILES))
		return -ENOENT;
	if (u->cap > old)
		memset(u->files + old, 0, (u->cap - old) * sizeof(*u->files));
	f = &u->files[idx];
	if (added) {
		load(u, f, path, build_id);
		u->unusable += !f->ok;
	}
	if (!f->ok || vaddr_of(f, pgoff, vaddr))
		return -ENOENT;
	*rows = f->rows;
	*nrows = f->nrows;
	return 0;
}

static int build_id_cb(void *ctx, const char *path, char *hex, size_t len)
{
	const struct perf_data_unwinder *u = ctx;
	struct stat sb;
	int fd, err;

	if (path[0] != '/' || !u->not_after)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	err = fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_mtime > u->not_after ||
	      elfsym__read_build_id_fd(fd, hex, len);
	close(fd);
	return err ? -ENOENT : 0;
}

struct perf_data_unwind_ops perf_data_unwinder__ops(struct perf_data_unwinder *u)
{
	return (struct perf_data_unwind_ops){.rows = rows_cb, .build_id = build_id_cb, .ctx = u};
}

void perf_data_unwinder__stats(const struct perf_data_unwinder *u, size_t *files,
			       size_t *unusable)
{
	*files = intern__count(u->keys);
	*unusable = u->unusable;
}
