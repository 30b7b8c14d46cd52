/* test_gopcln.c - unwind rows for Go code from the pclntab (collect/gopcln,
 * cfi_go.c): the rows of a real Go program (tests/unit/fixtures/goleaf,
 * built here with the installed go, cached) against the .debug_frame the Go
 * linker writes from the same tables (readelf), the same rows without
 * symbols (-s -w), a cgo build's Go and C rows together, a walk over a
 * stack laid out as the program's own (a leaf's caller is found; frame
 * pointers alone skip it), and crafted pclntabs: flags, malformed tables,
 * every truncation. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/cfi.h"
#include "collect/gopcln.h"
#include "collect/stackwalk.h"
#include "symbolize/gopclntab.h"
#include "unwind.h"
#include "gofixture.h"
#include "test.h"

/* build/tests/fixtures (next to this binary), where fixtures.mk builds. */
static char fixture_dir[1024] = "build/tests/fixtures";

static void fixture_dir_init(void)
{
	char exe[1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash && (size_t)(slash - exe) + sizeof("/fixtures") < sizeof(fixture_dir)) {
		memcpy(fixture_dir, exe, (size_t)(slash - exe));
		strcpy(fixture_dir + (slash - exe), "/fixtures");
	}
}

/* ---- the Go fixture ------------------------------------------------------------------ */

struct image {
	void *p;
	size_t size;
};

static int map_file(const char *path, struct image *im)
{
	struct stat stb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	im->p = NULL;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &stb) || !stb.st_size) {
		close(fd);
		return -EINVAL;
	}
	im->p = mmap(NULL, (size_t)stb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (im->p == MAP_FAILED) {
		im->p = NULL;
		return -ENOMEM;
	}
	im->size = (size_t)stb.st_size;
	return 0;
}

static void unmap_file(struct image *im)
{
	if (im->p)
		munmap(im->p, im->size);
	im->p = NULL;
}

/* Section @name of ELF image @im: data, size, address. */
static int find_section(const struct image *im, const char *name, const __u8 **data, size_t *size,
			__u64 *addr)
{
	const __u8 *p = im->p;
	__u64 shoff, shnum, shstr, stroff;

	if (im->size < 64)
		return -ENOEXEC;
	memcpy(&shoff, p + 40, 8);
	shnum = p[60] | p[61] << 8;
	shstr = p[62] | p[63] << 8;
	memcpy(&stroff, p + shoff + shstr * 64 + 24, 8);
	for (__u64 i = 0; i < shnum; i++) {
		const __u8 *sh = p + shoff + i * 64;
		__u32 nm;
		__u64 off;

		memcpy(&nm, sh, 4);
		if (strcmp((const char *)p + stroff + nm, name))
			continue;
		memcpy(addr, sh + 16, 8);
		memcpy(&off, sh + 24, 8);
		memcpy(size, sh + 32, 8);
		*data = p + off;
		return 0;
	}
	return -ENOENT;
}

/* Entry and end of Go function @name in @im. */
static int go_func(const struct image *im, const char *name, __u64 *entry, __u64 *end)
{
	const __u8 *d;
	size_t n;
	__u64 text, i;
	struct gopcln g;
	struct gopcln_func f;

	if (find_section(im, ".text", &d, &n, &text) ||
	    find_section(im, ".gopclntab", &d, &n, &i) || gopcln__init(&g, d, n, text))
		return -ENOENT;
	for (i = 0; i < g.nfunc; i++) {
		const char *s;

		if (gopcln__func(&g, i, &f))
			return -EBADMSG;
		s = gopcln__name(&g, &f);
		if (s && !strcmp(s, name)) {
			*entry = f.entry;
			*end = f.end;
			return 0;
		}
	}
	return -ENOENT;
}

/* Build and map a fixture, or SKIP the calling test. */
#define FIXTURE(im, cgo, strip) FIXTURE_AT(im, cgo, strip, false)
#define FIXTURE_AT(im, cgo, strip, pie)                          \
	do {                                                     \
		char path__[1300];                               \
		GOFIXTURE(fixture_dir, path__, cgo, strip, pie); \
		CHECK_EQ_U64(map_file(path__, &(im)), 0);        \
	} while (0)

/* ---- rows of a real Go program ----------------------------------------------------------- */

/* The CFA of every row of Go's .debug_frame (readelf) in the fixture is
 * ours: rsp + N. */
static void compare_debug_frame(bool cgo, bool pie)
{
	char path[1300], cmd[1500], line[512];
	struct image im = {0};
	struct cfi_table *t = NULL;
	struct cfi_stats st;
	unsigned long checked = 0, skipped = 0, bad = 0;
	bool in_debug_frame = false;
	FILE *f;

	FIXTURE_AT(im, cgo, false, pie);
	CHECK_EQ_U64(cfi__parse(im.p, im.size, &t), 0);
	cfi__stats(t, &st);
	CHECK(st.go_funcs > 1000);
	gofixture__build(fixture_dir, cgo, false, pie, path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long pc;
		long off;
		const struct cfi_row *r;

		if (!strncmp(line, "Contents of the ", 16))
			in_debug_frame = !strncmp(line + 16, ".debug_frame", 12);
		if (!in_debug_frame) /* C code's .eh_frame: test_cfi's */
			continue;
		if (sscanf(line, "%llx rsp+%ld c-8", &pc, &off) != 2 || !pc)
			continue; /* not a row, or the CIE's */
		r = cfi__find(t, pc);
		if (r && (r->cfa_type == UNWIND_CFA_END || r->cfa_type == UNWIND_CFA_NONE ||
			  r->cfa_type == UNWIND_CFA_RBP || r->cfa_type == UNWIND_CFA_UNSUPPORTED)) {
			skipped++; /* flagged functions, frames beyond the row format */
			continue;
		}
		checked++;
		if (!r || r->cfa_off != off ||
		    r->rbp_type != (off == 8 ? UNWIND_RBP_SAME : UNWIND_RBP_AT_CFA) ||
		    (off != 8 && r->rbp_off != -16)) {
			if (bad++ < 5)
				printf("  mismatch at %llx: readelf rsp+%ld, ours type %d off %d\n",
				       pc, off, r ? r->cfa_type : -1, r ? r->cfa_off : 0);
		}
	}
	pclose(f);
	printf("  %lu rows of Go's .debug_frame checked, %lu in flagged functions\n", checked,
	       skipped);
	cfi__free(t);
	unmap_file(&im);
	CHECK(checked > 3000);
	CHECK(skipped < checked / 20);
	CHECK_EQ_U64(bad, 0);
}

TEST(pcsp_rows_match_go_debug_frame)
{
	compare_debug_frame(false, false);
}

/* A cgo PIE by the system linker: no pclntab section, the table found in
 * .data.rel.ro, its text address in .rela.dyn. */
TEST(cgo_pie_pcsp_rows_match_go_debug_frame)
{
	compare_debug_frame(true, true);
}

/* The names of a stripped cgo PIE, from its .data.rel.ro: those the same
 * program's .gopclntab gives when not a PIE. */
TEST(cgo_pie_names_from_data)
{
	struct image pie = {0}, exe = {0};
	struct gopclntab_func *f = NULL;
	const __u8 *ro, *rela, *d;
	size_t ro_size, rela_size, n = 0, i;
	__u64 ro_addr, rela_addr, a, entry, end;
	bool hot = false;

	FIXTURE_AT(pie, true, true, true);
	FIXTURE(exe, true, true);
	CHECK_EQ_U64(find_section(&pie, ".gopclntab", &d, &n, &a), (__u64)-ENOENT);
	CHECK_EQ_U64(find_section(&pie, ".data.rel.ro", &ro, &ro_size, &ro_addr), 0);
	CHECK_EQ_U64(find_section(&pie, ".rela.dyn", &rela, &rela_size, &rela_addr), 0);
	CHECK_EQ_U64(gopclntab__parse_data(ro, ro_size, ro_addr, rela, rela_size, 1u << 20, &f, &n),
		     0);
	CHECK(n > 1000);
	CHECK_EQ_U64(go_func(&exe, "main.hotGoWork", &entry, &end), 0);
	for (i = 0; i < n; i++) {
		if (strcmp(f[i].name, "main.hotGoWork"))
			continue;
		hot = true;
		CHECK_EQ_U64(f[i].end - f[i].entry, end - entry);
	}
	CHECK(hot);
	free(f);
	f = NULL;
	unmap_file(&pie);
	unmap_file(&exe);
}

/* -s -w drops .debug_frame and .symtab, not the pclntab: the same rows. */
TEST(stripped_go_has_the_same_rows)
{
	struct image a = {0}, b = {0};
	struct cfi_table *ta = NULL, *tb = NULL;
	const struct cfi_row *ra, *rb;
	size_t na, nb;

	FIXTURE(a, false, false);
	FIXTURE(b, false, true);
	CHECK_EQ_U64(cfi__parse(a.p, a.size, &ta), 0);
	CHECK_EQ_U64(cfi__parse(b.p, b.size, &tb), 0);
	ra = cfi__rows(ta, &na);
	rb = cfi__rows(tb, &nb);
	CHECK_EQ_U64(na, nb);
	CHECK(na > 1000);
	CHECK(!memcmp(ra, rb, na * sizeof(*ra)));
	cfi__free(ta);
	cfi__free(tb);
	unmap_file(&a);
	unmap_file(&b);
}

/* Rows strictly ascending, no two neighbours with one rule. */
static void check_sorted(const struct cfi_table *t)
{
	size_t n;
	const struct cfi_row *r = cfi__rows(t, &n);

	for (size_t i = 1; i < n; i++) {
		CHECK(r[i - 1].pc < r[i].pc);
		CHECK(r[i - 1].cfa_type != r[i].cfa_type || r[i - 1].cfa_off != r[i].cfa_off ||
		      r[i - 1].rbp_type != r[i].rbp_type || r[i - 1].rbp_off != r[i].rbp_off);
	}
}

/* A cgo build: .eh_frame rows for its C code, pclntab rows for Go's. */
TEST(cgo_rows_hold_c_and_go)
{
	struct image im = {0};
	struct cfi_table *t = NULL;
	struct cfi_stats st;
	const struct cfi_row *r;
	__u64 entry, end, cstart;
	const __u8 *d;
	size_t n, ends;

	FIXTURE(im, true, true);
	CHECK_EQ_U64(cfi__parse(im.p, im.size, &t), 0);
	cfi__stats(t, &st);
	CHECK(st.go_funcs > 1000);
	CHECK(st.fdes > 5);
	check_sorted(t);
	if (test__cur_failed)
		return;
	CHECK_EQ_U64(go_func(&im, "main.hotGoWork", &entry, &end), 0);
	r = cfi__find(t, entry + 4);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
	/* The C start files come before the Go code: their .eh_frame rows
	 * are kept (_start's is the outermost frame). */
	CHECK_EQ_U64(find_section(&im, ".text", &d, &n, &cstart), 0);
	CHECK_EQ_U64(go_func(&im, "internal/cpu.Initialize", &entry, &end), 0);
	ends = 0;
	for (r = cfi__rows(t, &n); n && r->pc < entry; r++, n--)
		ends += r->cfa_type == UNWIND_CFA_END && r->pc >= cstart;
	CHECK(ends >= 1);
	cfi__free(t);
	unmap_file(&im);
}

/* ---- a walk over a Go stack -------------------------------------------------------------- */

struct walk_ctx {
	__u64 *rows;
	__u32 nrows;
};

static int whole_map(void *ctx, __u64 addr, struct stackwalk_map *out)
{
	struct walk_ctx *w = ctx;

	(void)addr;
	*out = (struct stackwalk_map){.m = {.start = 0, .end = ~0ull, .nrows = w->nrows},
				      .rows = w->rows};
	return 0;
}

/* A PC in @name's widest frame, and that frame's CFA offset. */
static int frame_pc(const struct image *im, const struct cfi_table *t, const char *name, __u64 *pc,
		    long *cfa_off)
{
	__u64 entry, end, a;
	const struct cfi_row *r;

	if (go_func(im, name, &entry, &end))
		return -ENOENT;
	*cfa_off = 0;
	for (a = entry; a < end; a++) {
		r = cfi__find(t, a);
		if (r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off > *cfa_off) {
			*cfa_off = r->cfa_off;
			*pc = a;
		}
	}
	return *cfa_off ? 0 : -ENOENT;
}

/* runtime.goexit -> runtime.main -> main.main -> main.hotGoWork, the leaf
 * making no frame, laid out in memory as the stripped program does: the
 * rows find main.main; frame pointers alone (no rows) skip it. */
TEST(leaf_caller_found_by_rows_not_by_frame_pointers)
{
	const __u64 base = 0xc000100000ull;
	struct image im = {0};
	struct cfi_table *t = NULL;
	struct walk_ctx w = {0};
	struct stackwalk_ops ops = {.find_map = whole_map, .ctx = &w};
	__u64 words[256] = {0}, ips[16], hot, hot_end, main_pc, rtmain_pc, goexit, gx_end;
	__u64 cfa_main, cfa_rtmain;
	struct stackwalk_mem mem = {.base = base, .data = words, .len = sizeof(words)};
	struct stackwalk_regs regs = {.exact = true, .bp_ok = true};
	long off_main, off_rtmain;
	const struct cfi_row *rows;
	size_t n;
	__u32 nips = 0;

	FIXTURE(im, false, true);
	CHECK_EQ_U64(cfi__parse(im.p, im.size, &t), 0);
	rows = cfi__rows(t, &n);
	w.rows = calloc(n, sizeof(*w.rows));
	CHECK(w.rows);
	for (size_t i = 0; i < n; i++)
		w.rows[i] = cfi__pack(&rows[i]);
	w.nrows = (__u32)n;
	CHECK_EQ_U64(go_func(&im, "main.hotGoWork", &hot, &hot_end), 0);
	CHECK_EQ_U64(go_func(&im, "runtime.goexit", &goexit, &gx_end), 0);
	CHECK_EQ_U64(frame_pc(&im, t, "main.main", &main_pc, &off_main), 0);
	CHECK_EQ_U64(frame_pc(&im, t, "runtime.main", &rtmain_pc, &off_rtmain), 0);
	CHECK(cfi__find(t, hot + 8)->cfa_off == 8); /* a leaf: no frame */
	/* The leaf's return address at sp; main.main's frame above it, its
	 * rbp saved at CFA - 16; then runtime.main's, returning to goexit. */
	cfa_main = base + 8 + (__u64)off_main;
	cfa_rtmain = cfa_main + (__u64)off_rtmain;
	CHECK(cfa_rtmain - base < sizeof(words));
	words[0] = main_pc + 1;
	words[(cfa_main - 8 - base) / 8] = rtmain_pc + 1;
	words[(cfa_main - 16 - base) / 8] = cfa_rtmain - 16; /* runtime.main's rbp */
	words[(cfa_rtmain - 8 - base) / 8] = goexit + 1;
	words[(cfa_rtmain - 16 - base) / 8] = 0;
	regs.pc = hot + 8;
	regs.sp = base;
	regs.bp = cfa_main - 16; /* the leaf keeps main.main's rbp */
	CHECK_EQ_U64(stackwalk__run(&ops, &regs, &mem, ips, &nips, 16), STACKWALK_COMPLETE);
	CHECK_EQ_U64(nips, 4);
	CHECK_EQ_U64(ips[0], hot + 8);
	CHECK_EQ_U64(ips[1], main_pc + 1);
	CHECK_EQ_U64(ips[2], rtmain_pc + 1);
	CHECK_EQ_U64(ips[3], goexit + 1);
	/* Without rows (frame pointers): main.main is skipped. */
	w.nrows = 0;
	nips = 0;
	stackwalk__run(&ops, &regs, &mem, ips, &nips, 16);
	CHECK(nips >= 2);
	CHECK_EQ_U64(ips[1], rtmain_pc + 1);
	free(w.rows);
	cfi__free(t);
	unmap_file(&im);
}

/* ---- crafted pclntabs -------------------------------------------------------------------- */

static void put32(__u8 *b, size_t at, __u32 v)
{
	memcpy(b + at, &v, 4);
}

static void put64(__u8 *b, size_t at, __u64 v)
{
	memcpy(b + at, &v, 8);
}

#define TEXT 0x401000ull
#define NFUNC 5
#define NAMES 72  /* after the 72-byte header, in the order Go writes: */
#define PCTAB 144 /* pc-value tables */
#define PCLN 208  /* function table */
#define FUNCS 256 /* _func records, 48 bytes apart */
#define PCLNTAB_SIZE 576

/* A Go 1.18 pclntab of NFUNC functions 0x40 bytes apart from TEXT:
 *   0 main.f    pcsp: sp 0 for 4 bytes, 24 for 0x30, 0 for 0xc
 *   1 runtime.goexit       TOPFRAME
 *   2 runtime.systemstack  SPWRITE, no frame
 *   3 time.now             SPWRITE, a frame of 16 (rbp-based rows)
 *   4 main.bad             a pcsp table cut short */
static size_t craft(__u8 *b)
{
	static const char names[] =
		"main.f\0runtime.goexit\0runtime.systemstack\0time.now\0main.bad";
	static const __u32 name_at[NFUNC] = {0, 7, 22, 42, 51};
	static const __u8 flags[NFUNC] = {0, 1, 2, 2, 0};
	/* zig-zag value change, range length; first value from -1 */
	static const __u8 f0[] = {2, 4, 48, 0x30, 47, 0xc, 0};
	static const __u8 f3[] = {2, 4, 32, 0x38, 31, 4, 0};
	static const __u8 f4[] = {2, 4, 48};
	static const __u8 f1[] = {2, 0x40, 0};

	memset(b, 0, PCLNTAB_SIZE);
	put32(b, 0, 0xfffffff0u); /* Go 1.18 */
	b[6] = 1;
	b[7] = 8;
	put64(b, 8, NFUNC);
	put64(b, 24, TEXT);  /* textStart */
	put64(b, 32, NAMES); /* funcnameOffset */
	put64(b, 56, PCTAB); /* pctabOffset */
	put64(b, 64, PCLN);  /* pclnOffset */
	memcpy(b + NAMES, names, sizeof(names));
	memcpy(b + PCTAB + 1, f0, sizeof(f0));
	memcpy(b + PCTAB + 16, f1, sizeof(f1));
	memcpy(b + PCTAB + 32, f3, sizeof(f3));
	memcpy(b + PCTAB + 48, f4, sizeof(f4));
	for (__u32 i = 0; i < NFUNC; i++) {
		__u32 rec = FUNCS + 48 * i - PCLN;
		static const __u32 pcsp[NFUNC] = {1, 16, 16, 32, 48};

		put32(b, PCLN + 8 * i, 0x40 * i);
		put32(b, PCLN + 8 * i + 4, rec);
		put32(b, FUNCS + 48 * i + 4, name_at[i]);
		put32(b, FUNCS + 48 * i + 16, pcsp[i]);
		b[FUNCS + 48 * i + 37] = flags[i];
	}
	put32(b, PCLN + 8 * NFUNC, 0x40 * NFUNC); /* end of the last */
	return PCLNTAB_SIZE;
}

#define ELF_SIZE 4096
#define SHOFF 3072

/* A minimal x86_64 ELF file holding .text (its header only) and the
 * pclntab @tab of @n bytes, at file offset 1024. */
static size_t wrap_elf(__u8 *img, const __u8 *tab, size_t n)
{
	static const char shstr[] = "\0.text\0.gopclntab\0.shstrtab";
	__u8 *sh;

	memset(img, 0, ELF_SIZE);
	memcpy(img, "\177ELF", 4);
	img[4] = 2;
	img[5] = 1;
	img[6] = 1;
	img[18] = 62; /* EM_X86_64 */
	put64(img, 40, SHOFF);
	img[58] = 64; /* shentsize */
	img[60] = 4;  /* shnum */
	img[62] = 3;  /* shstrndx */
	memcpy(img + 1024, tab, n);
	memcpy(img + 2048, shstr, sizeof(shstr));
	sh = img + SHOFF + 64; /* .text */
	put32(sh, 0, 1);
	put32(sh, 4, 1);
	put64(sh, 16, TEXT);
	put64(sh, 24, 512);
	put64(sh, 32, 0x40 * NFUNC);
	sh += 64; /* .gopclntab */
	put32(sh, 0, 7);
	put32(sh, 4, 1);
	put64(sh, 16, 0x500000);
	put64(sh, 24, 1024);
	put64(sh, 32, n);
	sh += 64; /* .shstrtab */
	put32(sh, 0, 18);
	put32(sh, 4, 3);
	put64(sh, 24, 2048);
	put64(sh, 32, sizeof(shstr));
	return ELF_SIZE;
}

static const struct cfi_row *at(const struct cfi_table *t, __u64 off)
{
	return cfi__find(t, TEXT + off);
}

TEST(crafted_rules_and_flags)
{
	__u8 tab[PCLNTAB_SIZE], img[ELF_SIZE];
	struct cfi_table *t = NULL;
	struct cfi_stats st;
	const struct cfi_row *r;

	wrap_elf(img, tab, craft(tab));
	CHECK_EQ_U64(cfi__parse(img, sizeof(img), &t), 0);
	check_sorted(t);
	r = at(t, 0);
	CHECK(r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8 && r->rbp_type == UNWIND_RBP_SAME);
	r = at(t, 4);
	CHECK(r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 32);
	CHECK(r->rbp_type == UNWIND_RBP_AT_CFA && r->rbp_off == -16);
	r = at(t, 0x33);
	CHECK(r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 32);
	r = at(t, 0x34);
	CHECK(r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8 && r->rbp_type == UNWIND_RBP_SAME);
	CHECK_EQ_U64(at(t, 0x40)->cfa_type, UNWIND_CFA_END); /* goexit */
	CHECK_EQ_U64(at(t, 0x7f)->cfa_type, UNWIND_CFA_END);
	CHECK_EQ_U64(at(t, 0x80)->cfa_type, UNWIND_CFA_NONE); /* systemstack */
	r = at(t, 0xc0);				      /* time.now, entry */
	CHECK(r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
	r = at(t, 0xc4); /* its frame: from rbp */
	CHECK(r->cfa_type == UNWIND_CFA_RBP && r->cfa_off == 16);
	CHECK(r->rbp_type == UNWIND_RBP_AT_CFA && r->rbp_off == -16);
	r = at(t, 0x100); /* main.bad: sp 0 first, then marked */
	CHECK(r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
	CHECK_EQ_U64(at(t, 0x104)->cfa_type, UNWIND_CFA_UNSUPPORTED);
	CHECK_EQ_U64(at(t, 0x140)->cfa_type, UNWIND_CFA_NONE); /* past the last */
	cfi__stats(t, &st);
	CHECK_EQ_U64(st.go_funcs, 4);
	CHECK_EQ_U64(st.bad_entries, 1);
	cfi__free(t);
}

/* Cut anywhere, or with its function count far beyond the data: the
 * file parses or fails cleanly, rows sorted, never read out of bounds
 * (the sanitizer run checks that). */
TEST(crafted_truncations_and_lies)
{
	__u8 tab[PCLNTAB_SIZE], img[ELF_SIZE];
	struct cfi_table *t = NULL;
	size_t len = craft(tab);

	for (size_t cut = 0; cut <= len; cut++) {
		__u8 *part = malloc(cut ? cut : 1);
		int err;

		CHECK(part);
		memcpy(part, tab, cut);
		wrap_elf(img, part, cut);
		free(part);
		err = cfi__parse(img, sizeof(img), &t);
		CHECK(err == 0 || err == -ENOENT);
		if (!err) {
			check_sorted(t);
			cfi__free(t);
			t = NULL;
		}
		if (test__cur_failed)
			return;
	}
	craft(tab);
	put64(tab, 8, 1ull << 40); /* nfunc */
	wrap_elf(img, tab, len);
	CHECK_EQ_U64(cfi__parse(img, sizeof(img), &t), (__u64)-ENOENT);
	craft(tab);
	put32(tab, FUNCS + 16, 400); /* main.f's pcsp: into other tables */
	wrap_elf(img, tab, len);
	CHECK_EQ_U64(cfi__parse(img, sizeof(img), &t), 0);
	check_sorted(t);
	cfi__free(t);
	t = NULL;
	/* No pcsp table: C code the Go linker lists, left to .eh_frame or
	 * frame pointers (no row), not marked unsupported. */
	craft(tab);
	put32(tab, FUNCS + 16, 0);
	wrap_elf(img, tab, len);
	CHECK_EQ_U64(cfi__parse(img, sizeof(img), &t), 0);
	CHECK_EQ_U64(at(t, 8)->cfa_type, UNWIND_CFA_NONE);
	CHECK_EQ_U64(at(t, 0x40)->cfa_type, UNWIND_CFA_END);
	cfi__free(t);
	t = NULL;
	craft(tab);
	put32(tab, 0, 0xfffffffbu); /* Go 1.2 - 1.15: not read */
	wrap_elf(img, tab, len);
	CHECK_EQ_U64(cfi__parse(img, sizeof(img), &t), (__u64)-ENOENT);
}

#define RO_ADDR 0x9000ull
#define RO_SIZE (64 + PCLNTAB_SIZE)
#define RELA_SIZE (3 * 24)

/* The crafted table inside other data at RO_ADDR, its text address 0 there
 * and given by the second relocation of @rela. */
static void craft_in_data(__u8 *ro, __u8 *rela)
{
	memset(ro, 0x5a, 64);
	craft(ro + 64);
	put64(ro, 64 + 24, 0); /* textStart, relocated */
	memset(rela, 0, RELA_SIZE);
	put64(rela, 0, RO_ADDR + 8); /* another word */
	put64(rela, 8, 8);
	put64(rela, 16, 0x1234);
	put64(rela, 24, RO_ADDR + 64 + 24); /* textStart's */
	put64(rela, 32, 8);		    /* R_X86_64_RELATIVE */
	put64(rela, 40, TEXT);
}

/* Inside other data, its text address 0 in the file and given by a
 * relocation (a linker that leaves relocated words 0). */
TEST(crafted_table_in_data_with_relocated_text)
{
	__u8 ro[RO_SIZE], rela[RELA_SIZE];
	const __u64 ro_addr = RO_ADDR;
	size_t off = 0;
	__u64 text = 0;
	struct gopcln g;
	struct gopcln_func f;

	craft_in_data(ro, rela);
	CHECK_EQ_U64(gopcln__find_in_data(ro, sizeof(ro), ro_addr, rela, sizeof(rela), &off, &text),
		     0);
	CHECK_EQ_U64(off, 64);
	CHECK_EQ_U64(text, TEXT);
	CHECK_EQ_U64(gopcln__init(&g, ro + off, sizeof(ro) - off, text), 0);
	CHECK_EQ_U64(gopcln__func(&g, 1, &f), 0);
	CHECK_EQ_U64(f.entry, TEXT + 0x40);
	CHECK_STR(gopcln__name(&g, &f), "runtime.goexit");
	/* Without the relocation there is no text address: not found. */
	CHECK_EQ_U64(gopcln__find_in_data(ro, sizeof(ro), ro_addr, rela, 24, &off, &text),
		     (__u64)-ENOENT);
}

/* Go 1.16's records have no flags: the runtime's names stand for them. */
TEST(go116_flags_by_name)
{
	__u8 b[256];
	struct gopcln g;
	struct gopcln_func f;

	memset(b, 0, sizeof(b));
	put32(b, 0, 0xfffffffau);
	b[6] = 1;
	b[7] = 8;
	put64(b, 8, 1);		      /* nfunc */
	put64(b, 24, 200);	      /* funcnameOffset */
	put64(b, 56, 64);	      /* pclnOffset */
	put64(b, 64 + 0, TEXT);	      /* entry */
	put64(b, 64 + 8, 32);	      /* funcoff */
	put64(b, 64 + 16, TEXT + 16); /* end */
	put32(b, 64 + 32 + 8, 0);     /* nameoff */
	memcpy(b + 200, "runtime.goexit", 15);
	CHECK_EQ_U64(gopcln__init(&g, b, sizeof(b), 0), 0);
	CHECK_EQ_U64(gopcln__func(&g, 0, &f), 0);
	CHECK_EQ_U64(f.entry, TEXT);
	CHECK_STR(gopcln__name(&g, &f), "runtime.goexit");
	CHECK_EQ_U64(gopcln__flags(&g, &f), GOPCLN_TOPFRAME);
	memcpy(b + 200, "runtime.mcall", 14);
	CHECK_EQ_U64(gopcln__flags(&g, &f), GOPCLN_SPWRITE);
	memcpy(b + 200, "main.main\0", 10);
	CHECK_EQ_U64(gopcln__flags(&g, &f), 0);
}

/* Write @n bytes at @p to @dir/@name. */
static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[1200];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = fwrite(p, 1, n, f) == n;
	return fclose(f) || !ok ? -EIO : 0;
}

/* The crafted tables as fuzzer seeds (scripts/fuzz/run.sh) into @dir: the
 * pclntab, its ELF file, and a table inside data with its relocations. */
static int write_seeds(const char *dir)
{
	__u8 tab[PCLNTAB_SIZE], img[ELF_SIZE], ro[RO_SIZE], rela[RELA_SIZE];

	wrap_elf(img, tab, craft(tab));
	craft_in_data(ro, rela);
	return write_file(dir, "pclntab.bin", tab, sizeof(tab)) ||
	       write_file(dir, "pclntab.elf", img, sizeof(img)) ||
	       write_file(dir, "data_ro.bin", ro, sizeof(ro)) ||
	       write_file(dir, "data_rela.bin", rela, sizeof(rela));
}

int main(void)
{
	const char *seeds = getenv("GOPCLN_SEED_DIR");

	/* GOPCLN_SEED_DIR=DIR: write the seeds only. */
	if (seeds)
		return write_seeds(seeds) ? 1 : 0;
	fixture_dir_init();
	RUN(crafted_rules_and_flags);
	RUN(crafted_truncations_and_lies);
	RUN(crafted_table_in_data_with_relocated_text);
	RUN(go116_flags_by_name);
	RUN(pcsp_rows_match_go_debug_frame);
	RUN(cgo_pie_pcsp_rows_match_go_debug_frame);
	RUN(stripped_go_has_the_same_rows);
	RUN(cgo_rows_hold_c_and_go);
	RUN(cgo_pie_names_from_data);
	RUN(leaf_caller_found_by_rows_not_by_frame_pointers);
	return TEST_DONE();
}
