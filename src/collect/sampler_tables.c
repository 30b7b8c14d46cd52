/* sampler_tables.c - what the table builder writes for the BPF walker:
 * processes' mapping entries, file tables (an array map each, in a slot
 * of unwind_files) and the file index; and the kernel memory of the
 * sampler's maps (memlock). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/fileidx.h"
#include "collect/kbtf.h"
#include "collect/kver.h"
#include "collect/sampler_int.h"
#include "util/fdio.h"

/* A process's mapping entries in one bpf() call (BPF_MAP_UPDATE_BATCH:
 * Linux >= 5.6, below the 5.8 profcap needs). */
static int unwind_set_maps(void *ctx, const struct unwind_map_key *k, const struct unwind_map *m,
			   __u32 n)
{
	struct sampler *s = ctx;

	return bpf_map_update_batch(s->tfd.maps, k, m, &n, NULL);
}

static int unwind_set_proc(void *ctx, __u32 tgid, __u32 nmaps)
{
	struct sampler *s = ctx;

	return bpf_map_update_elem(s->tfd.procs, &tgid, &nmaps, BPF_ANY) ? -errno : 0;
}

/* An exited process's mapping entries: one bpf() call (BPF_MAP_DELETE_BATCH
 * stops at the first key it cannot delete: the rest one by one). */
static int unwind_del_maps(void *ctx, const struct unwind_map_key *k, __u32 n)
{
	struct sampler *s = ctx;
	__u32 done = n, i;
	int err = 0;

	if (!bpf_map_delete_batch(s->tfd.maps, k, &done, NULL) || done >= n)
		return 0;
	for (i = done; i < n; i++)
		if (bpf_map_delete_elem(s->tfd.maps, &k[i]) && errno != ENOENT)
			err = -errno;
	return err;
}

static int unwind_del_proc(void *ctx, __u32 tgid)
{
	struct sampler *s = ctx;

	/* Its next sample (a reused PID's first) announces it again. */
	bpf_map_delete_elem(s->tfd.seen, &tgid);
	return bpf_map_delete_elem(s->tfd.procs, &tgid) ? -errno : 0;
}

static int unwind_set_file(void *ctx, __u32 slot, __u64 dev, __u64 ino, const __u64 (*seg)[3],
			   unsigned int nseg, __u32 nrows)
{
	struct sampler *s = ctx;
	struct unwind_file f = {.slot = slot, .nrows = nrows};
	struct unwind_file_key k = {.dev = UNWIND_KDEV(dev), .ino = ino};
	unsigned int i;

	if (!s->tfd.vma || slot >= SAMPLER_UNWIND_FILES)
		return 0;
	for (i = 0; i < nseg && i < UNWIND_FILE_SEGS; i++)
		memcpy(f.seg[i], seg[i], sizeof(f.seg[i]));
	f.nseg = i;
	if (bpf_map_update_elem(s->tfd.file_idx, &k, &f, BPF_ANY))
		return -errno;
	fileidx__set(s->t.fidx, &k, &f); /* slot checked above */
	return 0;
}

static __u64 unwind_seen_ns(void *ctx, __u32 slot)
{
	struct sampler *s = ctx;

	return slot < SAMPLER_UNWIND_FILES ? __atomic_load_n(&s->t.slot_seen[slot], __ATOMIC_RELAXED)
					   : 0;
}

/* Kernel memory charged for BPF map @fd (memlock in its fdinfo), 0 if unknown. */
static __u64 fd_memlock(int fd)
{
	char path[64], text[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = fdio__read_proc(path, text, sizeof(text) - 1);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	for (p = text; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, "memlock:", 8))
			return strtoull(p + 8, NULL, 10);
	}
	return 0;
}

/* Kernel memory of all our maps: the skeleton's and the file tables. A map
 * allocated whole at its creation keeps its memlock: with @fixed (a cache
 * of their sum, 0 = not read yet) those are read once, and at every call
 * only the maps allocated as used (BPF_F_NO_PREALLOC: hashes, task
 * storage), so a drain reads few fdinfo files. */
__u64 tables__bpf_memory(const struct sampler *s, const struct cpu_sampler *skel, __u64 *fixed)
{
	const struct bpf_map *m;
	__u64 sum = __atomic_load_n(&s->t.rows_mem, __ATOMIC_RELAXED), whole = 0;
	bool cached = fixed && *fixed;

	bpf_object__for_each_map(m, skel->obj)
	{
		int fd = bpf_map__fd(m);

		if (fd < 0)
			continue;
		if (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC)
			sum += fd_memlock(fd);
		else if (!cached)
			whole += fd_memlock(fd);
	}
	if (cached)
		return sum + *fixed;
	if (fixed)
		*fixed = whole;
	return sum + whole;
}

/* A file table: an array map sized to its rows, mapped here only while it
 * is written, then put in its slot of unwind_files. */
static __u64 *unwind_rows_begin(void *ctx, __u32 slot, __u32 n)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct sampler *s = ctx;
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	(void)slot;
	s->t.rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32), sizeof(__u64),
				    n, &opts);
	if (s->t.rows_fd < 0)
		return NULL;
	s->t.rows_len = ((size_t)n * sizeof(__u64) + (size_t)page - 1) & ~((size_t)page - 1);
	mem = mmap(NULL, s->t.rows_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->t.rows_fd, 0);
	if (mem == MAP_FAILED) {
		close(s->t.rows_fd);
		s->t.rows_fd = -1;
		return NULL;
	}
	return mem;
}

static int unwind_rows_end(void *ctx, __u32 slot, __u64 *rows, __u32 n, bool ok)
{
	struct sampler *s = ctx;
	int err = 0;

	(void)n;
	munmap(rows, s->t.rows_len);
	if (ok && bpf_map_update_elem(s->tfd.files, &slot, &s->t.rows_fd, BPF_ANY))
		err = -errno;
	if (ok && !err && slot < SAMPLER_UNWIND_FILES) {
		struct bpf_map_info info = {0};
		__u32 len = sizeof(info);

		s->t.rows_mem -= s->t.slot_mem[slot];
		s->t.slot_mem[slot] = fd_memlock(s->t.rows_fd);
		s->t.rows_mem += s->t.slot_mem[slot];
		/* Late walks map the table by this id: 0 (unknown) makes
		 * them treat the slot as empty, as a failed lookup did. */
		fileidx__set_id(s->t.fidx, slot,
				bpf_obj_get_info_by_fd(s->t.rows_fd, &info, &len) ? 0 : info.id);
	}
	close(s->t.rows_fd); /* unwind_files holds the map now */
	s->t.rows_fd = -1;
	return err;
}

static int unwind_rows_del(void *ctx, __u32 slot)
{
	struct sampler *s = ctx;
	struct unwind_file_key k;

	if (slot < SAMPLER_UNWIND_FILES) {
		s->t.rows_mem -= s->t.slot_mem[slot];
		s->t.slot_mem[slot] = 0;
		/* the file its table was found by, in both indexes */
		if (!fileidx__drop(s->t.fidx, slot, &k))
			bpf_map_delete_elem(s->tfd.file_idx, &k);
	}
	return bpf_map_delete_elem(s->tfd.files, &slot) ? -errno : 0;
}

/* After load: the table maps the builder writes, by fd (with a quick start
 * the start-up object's, which the full object shares: the builder runs
 * while the full object loads). */
void tables__fds(struct sampler *s)
{
	s->tfd.seen = bpf_map__fd(s->skel->maps.seen);
	s->tfd.vma = s->quick_mode ? kver__at_least(5, 17) && !access(KBTF_VMLINUX, R_OK)
				   : s->skel->rodata->unwind_vma;
	if (s->quick_mode) { /* made once sampling runs: table_maps_create() */
		s->tfd.maps = s->tfd.procs = s->tfd.files = s->tfd.file_idx = -1;
		s->tfd.own = true;
		return;
	}
	s->tfd.maps = bpf_map__fd(s->skel->maps.unwind_maps);
	s->tfd.procs = bpf_map__fd(s->skel->maps.unwind_procs);
	s->tfd.files = bpf_map__fd(s->skel->maps.unwind_files);
	s->tfd.file_idx = bpf_map__fd(s->skel->maps.unwind_file_idx);
}

/* After load: create the table builder (file tables are added as found). */
int tables__open(struct sampler *s)
{
	struct unwind_table_sink sink = {
		.set_maps = unwind_set_maps,
		.set_proc = unwind_set_proc,
		.del_maps = unwind_del_maps,
		.del_proc = unwind_del_proc,
		.ctx = s,
	};

	if (!s->skel->rodata->want_unwind)
		return 0;
	sink.max_rows = s->t.max_rows;
	sink.max_files = SAMPLER_UNWIND_FILES;
	sink.max_maps = SAMPLER_UNWIND_MAPS;
	sink.rows_begin = unwind_rows_begin;
	sink.rows_end = unwind_rows_end;
	sink.rows_del = unwind_rows_del;
	sink.set_file = unwind_set_file;
	sink.seen_ns = unwind_seen_ns;
	s->t.slot_mem = calloc(SAMPLER_UNWIND_FILES, sizeof(*s->t.slot_mem));
	s->t.slot_seen = calloc(SAMPLER_UNWIND_FILES, sizeof(*s->t.slot_seen));
	s->t.fidx = fileidx__new(SAMPLER_UNWIND_FILES);
	s->t.unwind =
		s->t.slot_mem && s->t.slot_seen && s->t.fidx ? unwind_table__new(&sink, "/proc") : NULL;
	if (s->t.unwind && s->sb)
		unwind_table__set_maps_source(s->t.unwind, &s->maps_src);
	if (!s->t.unwind)
		return -ENOMEM;
	return 0;
}

void tables__late(struct sampler *s, struct late_tables *t)
{
	*t = (struct late_tables){.procs = s->tfd.procs,
				  .maps = s->tfd.maps,
				  .files = s->tfd.files,
				  .file_idx = s->tfd.file_idx,
				  .idx = s->t.fidx,
				  .want = builder__want_file,
				  .ctx = s};
}

void tables__free(struct sampler *s)
{
	unwind_table__free(s->t.unwind);
	s->t.unwind = NULL;
	if (s->tfd.own) {
		int *fds[] = {&s->tfd.maps, &s->tfd.procs, &s->tfd.files, &s->tfd.file_idx};

		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
	free(s->t.slot_mem);
	free(s->t.slot_seen);
	fileidx__free(s->t.fidx);
}
