/* test_perf_data.c - perf.data reader: three small files made with perf
 * (tests/unit/fixtures/perf_fp.data: `perf record -g`; perf_dwarf.data:
 * `--call-graph dwarf`, both of a frame-pointer build; perf_kernel.data:
 * `perf record -g -- dd ...`, mostly kernel frames; trimmed by
 * perf_data_trim.py), kernel names from kallsyms, and files built here record by record: exec
 * generations, mappings matched by time whatever the record order, a
 * forked child using its parent's mappings, kernel context markers, lost
 * samples, several events, an unreadable sample; every prefix and many bit
 * flips of a real file are read without a crash. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/perf_data.h"
#include "formats/perf_data_kernel.h"
#include "model/profile.h"
#include "util/buf.h"
#include "util/hex.h"
#include "test.h"

/* ---- files made with perf ------------------------------------------------ */

static int load_fixture(const char *name, struct buf *b)
{
	char path[512];

	buf__init(b, 1u << 20);
	snprintf(path, sizeof(path), "tests/unit/fixtures/%s", name);
	if (!buf__read_file(b, path))
		return 0;
	buf__release(b);
	return -ENOENT;
}

/* Deepest stack of @p, and whether a frame has a mapping named *@suffix. */
static size_t max_depth(const struct profile *p, const char *suffix, bool *found)
{
	size_t i, j, k, n, best = 0;

	*found = false;
	for (i = 0; i < profile__process_count(p); i++)
		for (j = 0; j < profile__sample_count(p, i); j++) {
			const __u32 *locs = profile__stack(p, profile__sample(p, i, j)->stack, &n);

			best = n > best ? n : best;
			for (k = 0; k < n; k++) {
				const struct profile_location_entry *l =
					profile__location(p, locs[k]);
				const char *path = profile__string(
					p, profile__mapping(p, l->mapping)->filename, NULL);
				size_t pl = strlen(path), sl = strlen(suffix);

				*found |= l->mapping && pl >= sl && !strcmp(path + pl - sl, suffix);
			}
		}
	return best;
}

TEST(fp_file)
{
	struct perf_data_stats st;
	struct profile *p = NULL;
	char why[256];
	struct buf b;
	bool found;
	size_t i;

	if (load_fixture("perf_fp.data", &b))
		SKIP("tests/unit/fixtures/perf_fp.data missing (run from the tree)");
	CHECK(perf_data__looks_like(b.data, b.len));
	CHECK_EQ_U64(perf_data__parse(b.data, b.len, NULL, &p, &st, why, sizeof(why)), 0);
	CHECK_EQ_U64(st.samples, 8);
	CHECK(st.cpu_clock);
	CHECK_STR(st.event, "cpu-clock");
	CHECK_EQ_U64(st.period, 1000000000ull / 199);
	CHECK_STR(st.arch, "x86_64");
	CHECK(st.hostname[0]);
	CHECK(strstr(st.cmdline, "perf record"));
	CHECK_EQ_U64(st.nr_cpus, 2);
	CHECK(st.duration_ns > st.period);
	CHECK_EQ_U64(profile__total(p), 8);
	CHECK(max_depth(p, "/pdfx", &found) >= 3); /* hot_a, main, libc */
	CHECK(found);
	for (i = 1; i < profile__mapping_count(p); i++) {
		const struct profile_mapping_entry *m = profile__mapping(p, (__u32)i);
		const char *path = profile__string(p, m->filename, NULL);

		if (strstr(path, "/pdfx")) {
			CHECK(m->attr); /* the build-id from HEADER_BUILD_ID */
			CHECK_EQ_U64(strlen(profile__attr(p, m->attr)->str_value), 40);
		}
	}
	CHECK_STR(profile__process(p, 0)->exe_name, "pdfx");
	CHECK_EQ_U64(profile__process(p, 0)->generation, 1); /* perf's child exec()ed */
	profile__free(p);
	buf__release(&b);
}

/* No rows for any file: the walk follows frame pointers. */
static int no_rows(void *ctx, const char *path, const char *build_id, __u64 pgoff,
		   const __u64 **rows, __u32 *nrows, __u64 *vaddr)
{
	(void)path, (void)build_id, (void)pgoff, (void)rows, (void)nrows, (void)vaddr;
	(*(int *)ctx)++;
	return -ENOENT;
}

TEST(dwarf_file)
{
	int asked = 0;
	struct perf_data_unwind_ops ops = {.rows = no_rows, .ctx = &asked};
	struct perf_data_stats st;
	struct profile *p = NULL;
	char why[256];
	struct buf b;
	bool found;

	if (load_fixture("perf_dwarf.data", &b))
		SKIP("tests/unit/fixtures/perf_dwarf.data missing (run from the tree)");
	CHECK_EQ_U64(perf_data__parse(b.data, b.len, &ops, &p, &st, why, sizeof(why)), 0);
	CHECK_EQ_U64(st.samples, 8);
	CHECK_EQ_U64(st.unwound, 8);
	CHECK(asked > 0);
	CHECK(max_depth(p, "/pdfx", &found) >= 3); /* walked from the registers */
	CHECK(found);
	profile__free(p);
	/* Without an unwinder only the kernel part is left. */
	CHECK_EQ_U64(perf_data__parse(b.data, b.len, NULL, &p, &st, why, sizeof(why)), 0);
	CHECK_EQ_U64(st.unwound, 0);
	CHECK(max_depth(p, "/pdfx", &found) < 3);
	profile__free(p);
	buf__release(&b);
}

/* Every prefix and single-bit flips of a real file: an error or a profile,
 * never a crash (run under ASan by tests/sanitize_unit.sh). */
TEST(damaged_files)
{
	struct perf_data_stats st;
	struct profile *p;
	char why[256];
	struct buf b;
	size_t n, bit;
	__u8 *copy;

	if (load_fixture("perf_fp.data", &b))
		SKIP("tests/unit/fixtures/perf_fp.data missing (run from the tree)");
	copy = malloc(b.len);
	CHECK(copy);
	for (n = 0; n < b.len; n++) {
		memcpy(copy, b.data, n);
		p = NULL;
		if (n < b.len && perf_data__parse(copy, n, NULL, &p, &st, why, sizeof(why)) == 0)
			profile__free(p);
	}
	CHECK_EQ_U64(perf_data__parse(b.data, b.len / 2, NULL, &p, &st, why, sizeof(why)),
		     (__u64)-EBADMSG);
	CHECK(strstr(why, "truncated") && strstr(why, "offset"));
	for (bit = 0; bit < b.len * 8; bit += 7) {
		memcpy(copy, b.data, b.len);
		copy[bit / 8] ^= (__u8)(1u << (bit % 8));
		p = NULL;
		if (!perf_data__parse(copy, b.len, NULL, &p, &st, why, sizeof(why)))
			profile__free(p);
	}
	free(copy);
	buf__release(&b);
}

/* Kernel frames named "@want" (NULL: none named). */
static size_t kernel_named(const struct profile *p, const char *want)
{
	size_t i, n = 0;

	for (i = 1; i < profile__location_count(p); i++) {
		const struct profile_location_entry *l = profile__location(p, (__u32)i);
		__u32 fn = profile__location_function(p, l);

		if (!l->attr || strcmp(profile__attr(p, l->attr)->str_value, "kernel"))
			continue;
		if (fn && !strcmp(profile__string(p, profile__function(p, fn)->name, NULL), want))
			n++;
	}
	return n;
}

/* Write the kernel's notes (GNU build-id @hex) and a kallsyms text whose
 * _stext is @stext under @dir. */
static void kernel_files(const char *dir, const char *hex, __u64 stext)
{
	__u8 note[12 + 4 + 20] = {4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0};
	char path[256];
	FILE *f;

	hex__decode(hex, note + 16, 20);
	snprintf(path, sizeof(path), "%s/notes", dir);
	f = fopen(path, "wb");
	fwrite(note, 1, sizeof(note), f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	fprintf(f, "%llx T _stext\n%llx T kfunc_test\n%llx T _etext\n",
		(unsigned long long)stext, (unsigned long long)stext + 0x10,
		(unsigned long long)stext + 0x4000000);
	fclose(f);
}

/* Kernel frames are named from kallsyms only for the recording's kernel
 * and boot. */
TEST(kernel_names)
{
	static const char bid[] = "48dc540c8b76393804ca8088dbfa7d42911a9444";
	char dir[] = "/tmp/test_perf_data.XXXXXX", notes[64], ksyms[64];
	struct perf_data_kernel_src src = {notes, ksyms};
	struct perf_data_stats st;
	struct profile *p = NULL;
	char why[256];
	struct buf b;
	bool named;

	if (load_fixture("perf_kernel.data", &b))
		SKIP("tests/unit/fixtures/perf_kernel.data missing (run from the tree)");
	CHECK(mkdtemp(dir));
	snprintf(notes, sizeof(notes), "%s/notes", dir);
	snprintf(ksyms, sizeof(ksyms), "%s/kallsyms", dir);
	CHECK_EQ_U64(perf_data__parse(b.data, b.len, NULL, &p, &st, why, sizeof(why)), 0);
	/* another boot: the text 2 MiB away */
	kernel_files(dir, bid, 0xffffffff81200000ull);
	CHECK_EQ_U64(perf_data_kernel__name(&p, &src, &named), 0);
	CHECK(!named);
	/* another kernel */
	kernel_files(dir, "1111111111111111111111111111111111111111", 0xffffffff81000000ull);
	CHECK_EQ_U64(perf_data_kernel__name(&p, &src, &named), 0);
	CHECK(!named);
	CHECK_EQ_U64(kernel_named(p, "kfunc_test"), 0);
	kernel_files(dir, bid, 0xffffffff81000000ull);
	CHECK_EQ_U64(perf_data_kernel__name(&p, &src, &named), 0);
	CHECK(named);
	CHECK(kernel_named(p, "kfunc_test") > 0);
	profile__free(p);
	unlink(notes);
	unlink(ksyms);
	rmdir(dir);
	buf__release(&b);
}

/* ---- files built here ------------------------------------------------------ */

#define SID_ALL (1ull << 18)
#define ST_IP 1ull
#define ST_TID 2ull
#define ST_TIME 4ull
#define ST_CALLCHAIN 32ull
#define ST_ID 64ull
#define ST_PERIOD 256ull

struct mk {
	__u8 *d;
	size_t len, cap;
};

static void put(struct mk *m, const void *v, size_t n)
{
	if (m->len + n > m->cap) {
		m->cap = (m->len + n) * 2;
		m->d = realloc(m->d, m->cap);
	}
	memcpy(m->d + m->len, v, n);
	m->len += n;
}

static void put64(struct mk *m, __u64 v)
{
	put(m, &v, 8);
}

static void put32(struct mk *m, __u32 v)
{
	put(m, &v, 4);
}

/* A record header for @size bytes of @type. */
static void hdr(struct mk *m, __u32 type, __u16 misc, __u16 size)
{
	put32(m, type);
	put32(m, (__u32)misc | (__u32)size << 16);
}

/* The sample_id trailer of side-band records: pid/tid, time, id. */
static void sid(struct mk *m, __u32 pid, __u64 t, __u64 id)
{
	put32(m, pid);
	put32(m, pid);
	put64(m, t);
	put64(m, id);
}

static void comm(struct mk *m, __u32 pid, const char *name, bool exec, __u64 t)
{
	char c[16] = {0};

	strncpy(c, name, 15);
	hdr(m, 3, exec ? 1u << 13 : 0, 8 + 8 + 16 + 24);
	put32(m, pid);
	put32(m, pid);
	put(m, c, 16);
	sid(m, pid, t, 1);
}

static void mmap2(struct mk *m, __s32 pid, __u64 start, __u64 len, const char *path, __u64 t)
{
	char f[32] = {0};

	strncpy(f, path, 31);
	hdr(m, 10, 0, 8 + 64 + 32 + 24);
	put32(m, (__u32)pid);
	put32(m, (__u32)pid);
	put64(m, start);
	put64(m, len);
	put64(m, 0);			       /* pgoff */
	put64(m, 0), put64(m, 0), put64(m, 0); /* maj/min, ino, generation */
	put32(m, 5);			       /* PROT_READ | PROT_EXEC */
	put32(m, 2);
	put(m, f, 32);
	sid(m, (__u32)pid, t, 1);
}

static void fork_rec(struct mk *m, __u32 pid, __u32 ppid, __u64 t)
{
	hdr(m, 7, 0, 8 + 24 + 24);
	put32(m, pid), put32(m, ppid), put32(m, pid), put32(m, ppid);
	put64(m, t);
	sid(m, pid, t, 1);
}

/* A sample of event @id: IP, TID, TIME, ID, PERIOD, CALLCHAIN. */
static void sample(struct mk *m, __u64 id, __u32 pid, __u64 t, const __u64 *chain, size_t n)
{
	size_t i;

	hdr(m, 9, 2, (__u16)(8 + 8 * 6 + 8 * n));
	put64(m, chain[n - 1]);
	put32(m, pid), put32(m, pid);
	put64(m, t);
	put64(m, id);
	put64(m, 1000000);
	put64(m, n);
	for (i = 0; i < n; i++)
		put64(m, chain[i]);
}

/* A file of @nattr events (cpu-clock, then page-faults), ids 1.., whose
 * data section @data gets appended by the caller through @m. */
static void file_begin(struct mk *m, unsigned int nattr)
{
	__u8 attr[128];
	unsigned int i;

	m->len = 0;
	put(m, "PERFILE2", 8);
	put64(m, 104);
	put64(m, 128 + 16);
	put64(m, 104), put64(m, nattr * (128 + 16)); /* attrs */
	put64(m, 0), put64(m, 0);		       /* data: set in file_end */
	put64(m, 0), put64(m, 0);
	put64(m, 0), put64(m, 0), put64(m, 0), put64(m, 0); /* no features */
	for (i = 0; i < nattr; i++) {
		__u64 flags = SID_ALL, type = ST_IP | ST_TID | ST_TIME | ST_ID | ST_PERIOD |
					      ST_CALLCHAIN;

		memset(attr, 0, sizeof(attr));
		memcpy(attr, &(__u32){1}, 4);
		memcpy(attr + 4, &(__u32){128}, 4);
		memcpy(attr + 8, &(__u64){i ? 2 : 0}, 8);  /* cpu-clock, page-faults */
		memcpy(attr + 16, &(__u64){1000000}, 8); /* period */
		memcpy(attr + 24, &type, 8);
		memcpy(attr + 40, &flags, 8);
		put(m, attr, sizeof(attr));
		put64(m, 104 + nattr * (128 + 16) + 8 * i), put64(m, 8); /* ids */
	}
	for (i = 0; i < nattr; i++)
		put64(m, i + 1);
	memcpy(m->d + 40, &(__u64){m->len}, 8);
}

static void file_end(struct mk *m)
{
	__u64 off;

	memcpy(&off, m->d + 40, 8);
	memcpy(m->d + 48, &(__u64){m->len - off}, 8);
}

/* The mapping path of frame @k of the only sample of process entry @proc. */
static const char *frame_map(const struct profile *p, size_t proc, size_t k, int *type)
{
	size_t n;
	const __u32 *locs = profile__stack(p, profile__sample(p, proc, 0)->stack, &n);
	const struct profile_location_entry *l;

	if (k >= n)
		return "(none)";
	l = profile__location(p, locs[k]);
	*type = l->attr ? 1 : 0;
	if (l->attr)
		*type = !strcmp(profile__attr(p, l->attr)->str_value, "kernel") ? 2 : 1;
	return profile__string(p, profile__mapping(p, l->mapping)->filename, NULL);
}

TEST(built_file)
{
	const __u64 KCTX = (__u64)-128, UCTX = (__u64)-512;
	struct perf_data_stats st;
	struct profile *p = NULL;
	struct mk m = {0};
	char why[256];
	size_t i, fr;
	int type;

	file_begin(&m, 2);
	mmap2(&m, -1, 0xffffffff81000000ull, 0x1000000, "[kernel.kallsyms]_text", 0);
	comm(&m, 100, "old", false, 0);
	mmap2(&m, 100, 0x400000, 0x1000, "/bin/old", 1);
	/* A sample written before the mapping it needs (another CPU's
	 * buffer), later in time. */
	sample(&m, 1, 100, 50, (const __u64[]){KCTX, 0xffffffff81000010ull, UCTX, 0x500010}, 4);
	mmap2(&m, 100, 0x500000, 0x1000, "/bin/late", 40);
	comm(&m, 100, "new", true, 60);
	mmap2(&m, 100, 0x400000, 0x1000, "/bin/new", 61);
	sample(&m, 1, 100, 70, (const __u64[]){UCTX, 0x400010}, 2);
	fork_rec(&m, 200, 100, 80);
	sample(&m, 2, 200, 90, (const __u64[]){UCTX, 0x400020}, 2);
	hdr(&m, 2, 0, 8 + 16 + 24); /* LOST: id, count */
	put64(&m, 1), put64(&m, 7);
	sid(&m, 100, 95, 1);
	fr = m.len;
	hdr(&m, 68, 0, 8); /* FINISHED_ROUND */
	hdr(&m, 9, 2, 8 + 8 * 6); /* a sample whose callchain runs past it */
	put64(&m, 0x400000), put32(&m, 100), put32(&m, 100), put64(&m, 96), put64(&m, 1);
	put64(&m, 1), put64(&m, 9);
	file_end(&m);

	CHECK_EQ_U64(perf_data__parse(m.d, m.len, NULL, &p, &st, why, sizeof(why)), 0);
	CHECK_EQ_U64(st.samples, 3);
	CHECK_EQ_U64(st.lost, 7);
	CHECK_EQ_U64(st.unreadable, 1);
	CHECK_EQ_U64(st.events, 2);
	CHECK_EQ_U64(profile__value_type_count(p), 2);
	CHECK_EQ_U64(profile__process_count(p), 3); /* old, new (exec), child */
	for (i = 0; i < profile__process_count(p); i++) {
		const struct profile_process_desc *d = profile__process(p, i);

		if (d->pid == 100 && d->generation == 0) {
			CHECK_STR(d->exe_name, "old");
			CHECK_STR(frame_map(p, i, 0, &type), "[kernel.kallsyms]");
			CHECK_EQ_U64(type, 2);
			CHECK_STR(frame_map(p, i, 1, &type), "/bin/late");
			CHECK_EQ_U64(type, 1);
		} else if (d->pid == 100) {
			CHECK_EQ_U64(d->generation, 1);
			CHECK_STR(d->exe_name, "new");
			CHECK_STR(frame_map(p, i, 0, &type), "/bin/new");
		} else {
			CHECK_EQ_U64(d->pid, 200); /* forked: the parent's mapping, name */
			CHECK_STR(d->exe_name, "new");
			CHECK_EQ_U64(profile__process_type(p, i), 1);
			CHECK_STR(frame_map(p, i, 0, &type), "/bin/new");
		}
	}
	profile__free(p);
	/* Framing errors name their offset. */
	m.d[fr + 6] = 0x48; /* FINISHED_ROUND: size 72, past the end */
	CHECK_EQ_U64(perf_data__parse(m.d, m.len, NULL, &p, &st, why, sizeof(why)),
		     (__u64)-EBADMSG);
	CHECK(strstr(why, "at offset"));
	CHECK(!p);
	CHECK(!perf_data__looks_like("PERFILE", 7));
	CHECK_EQ_U64(perf_data__parse("PERFILE3xxxxxxxxxxxx", 20, NULL, &p, &st, why, sizeof(why)),
		     (__u64)-EBADMSG);
	free(m.d);
}

int main(void)
{
	RUN(fp_file);
	RUN(dwarf_file);
	RUN(damaged_files);
	RUN(kernel_names);
	RUN(built_file);
	return TEST_DONE();
}
