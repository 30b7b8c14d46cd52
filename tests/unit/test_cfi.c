/* test_cfi.c - the .eh_frame/.debug_frame compiler: every row of real
 * binaries (the fixtures, a -fomit-frame-pointer workload and Debian's libc)
 * checked against `readelf --debug-dump=frames-interp`, hand-made CFA
 * programs (remember/restore_state, PLT and realigned-stack expressions,
 * outermost and signal frames), and truncated or corrupted images. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/cfi.h"
#include "unwind.h"
#include "fixtures.h"
#include "test.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static void *map_file(const char *path, size_t *size)
{
	struct stat stb;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &stb) || !stb.st_size) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)stb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*size = (size_t)stb.st_size;
	return p;
}

struct compare {
	unsigned long rows, fdes, mismatches, exprs;
};

/* Does our row agree with one row of readelf's table? */
static int row_matches(const struct cfi_row *r, const char *cfa, const char *rbp, const char *ra,
		       int signal)
{
	long off;

	if (signal)
		return r->cfa_type == UNWIND_CFA_SIGNAL;
	if (ra && !strcmp(ra, "u"))
		return r->cfa_type == UNWIND_CFA_END;
	if (!strcmp(cfa, "exp"))
		return r->cfa_type == UNWIND_CFA_PLT || r->cfa_type == UNWIND_CFA_DEREF_RBP ||
		       r->cfa_type == UNWIND_CFA_UNSUPPORTED;
	if (!ra || strcmp(ra, "c-8"))
		return r->cfa_type == UNWIND_CFA_UNSUPPORTED;
	if (sscanf(cfa, "rsp+%ld", &off) == 1) {
		if (r->cfa_type != UNWIND_CFA_RSP || r->cfa_off != off)
			return 0;
	} else if (sscanf(cfa, "rbp+%ld", &off) == 1) {
		if (r->cfa_type != UNWIND_CFA_RBP || r->cfa_off != off)
			return 0;
	} else {
		return r->cfa_type == UNWIND_CFA_UNSUPPORTED;
	}
	if (!rbp || !strcmp(rbp, "u"))
		return r->rbp_type == UNWIND_RBP_SAME;
	if (sscanf(rbp, "c%ld", &off) == 1)
		return r->rbp_type == UNWIND_RBP_AT_CFA && r->rbp_off == off;
	return r->rbp_type == UNWIND_RBP_UNKNOWN;
}

/* Walk readelf's interpreted frames of @path and compare every row. */
static int compare_readelf(const char *path, const struct cfi_table *t, struct compare *c)
{
	char cmd[4400], line[1024];
	int ncols = 0, rbp_col = -1, ra_col = -1, in_fde = 0, signal = 0, rows_in_fde = 0;
	unsigned long long begin = 0, end = 0, sig_cies[16];
	unsigned int nsig = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		char tok[16][32];
		int n;

		if (strstr(line, " FDE ")) {
			const char *pc = strstr(line, "pc=");

			if (in_fde && !rows_in_fde) {
				const struct cfi_row *r = cfi__find(t, begin);

				/* An FDE with no instructions: the CIE's rule, rsp+8
				 * or (_start) an undefined return address. */
				if (!r || r->pc > begin ||
				    (!signal && r->cfa_type != UNWIND_CFA_END &&
				     (r->cfa_type != UNWIND_CFA_RSP || r->cfa_off != 8)))
					c->mismatches++;
			}
			const char *cie = strstr(line, "cie=");
			unsigned long long cie_off = ~0ull;

			if (cie)
				sscanf(cie, "cie=%llx", &cie_off);
			signal = 0;
			for (unsigned int i = 0; i < nsig; i++)
				signal |= sig_cies[i] == cie_off;
			in_fde = pc && sscanf(pc, "pc=%llx..%llx", &begin, &end) == 2;
			rows_in_fde = 0;
			c->fdes += in_fde;
			continue;
		}
		if (strstr(line, "ZERO terminator")) {
			in_fde = 0;
			continue;
		}
		if (strstr(line, " CIE ")) {
			if (in_fde && !rows_in_fde) {
				const struct cfi_row *r = cfi__find(t, begin);

				if (!r || (!signal && r->cfa_type != UNWIND_CFA_END &&
					   (r->cfa_type != UNWIND_CFA_RSP || r->cfa_off != 8)))
					c->mismatches++;
			}
			in_fde = 0;
			if (strstr(line, "S\"") && nsig < 16)
				sig_cies[nsig++] = strtoull(line, NULL, 16);
			continue;
		}
		/* "r10 (r10)": one column */
		for (char *o = strstr(line, " ("); o; o = strstr(o, " (")) {
			char *cl = strchr(o, ')');

			if (!cl)
				break;
			memmove(o, cl + 1, strlen(cl + 1) + 1);
		}
		n = sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s",
			   tok[0], tok[1], tok[2], tok[3], tok[4], tok[5], tok[6], tok[7], tok[8],
			   tok[9], tok[10], tok[11]);
		if (n >= 2 && !strcmp(tok[0], "LOC")) {
			ncols = n;
			rbp_col = ra_col = -1;
			for (int i = 0; i < n; i++) {
				if (!strcmp(tok[i], "rbp"))
					rbp_col = i;
				if (!strcmp(tok[i], "ra"))
					ra_col = i;
			}
			continue;
		}
		if (!in_fde || n < 2 || n != ncols)
			continue;
		{
			unsigned long long loc = strtoull(tok[0], NULL, 16);
			const struct cfi_row *r = cfi__find(t, loc);

			rows_in_fde++;
			c->rows++;
			if (!strcmp(tok[1], "exp"))
				c->exprs++;
			if (!r || !row_matches(r, tok[1], rbp_col > 0 ? tok[rbp_col] : NULL,
					       ra_col > 0 ? tok[ra_col] : NULL, signal)) {
				if (c->mismatches < 5)
					printf("  mismatch in %s at %llx: readelf %s rbp %s ra %s, "
					       "ours type %d off %d rbp %d/%d\n",
					       path, loc, tok[1], rbp_col > 0 ? tok[rbp_col] : "-",
					       ra_col > 0 ? tok[ra_col] : "-", r ? r->cfa_type : -1,
					       r ? r->cfa_off : 0, r ? r->rbp_type : -1,
					       r ? r->rbp_off : 0);
				c->mismatches++;
			}
		}
	}
	pclose(f);
	return 0;
}

static void check_file(const char *path, unsigned long min_rows, int *failed)
{
	struct cfi_table *t = NULL;
	struct cfi_stats st;
	struct compare c;
	size_t size = 0, n;
	void *img = map_file(path, &size);
	int err;

	*failed = 1;
	if (!img) {
		printf("  cannot map %s\n", path);
		return;
	}
	err = cfi__parse(img, size, &t);
	if (err) {
		printf("  cfi__parse(%s) = %d\n", path, err);
		munmap(img, size);
		return;
	}
	cfi__rows(t, &n);
	cfi__stats(t, &st);
	/* linked with --eh-frame-hdr (gcc's default): read in its order */
	if (!compare_readelf(path, t, &c) && c.rows >= min_rows && !c.mismatches && n > 0 &&
	    st.hdr_order)
		*failed = 0;
	printf("  %s: %lu FDEs, %lu readelf rows (%lu expressions), %zu compact rows, %lu "
	       "mismatches%s\n",
	       path, c.fdes, c.rows, c.exprs, n, c.mismatches,
	       st.hdr_order ? "" : ", not in .eh_frame_hdr order");
	cfi__free(t);
	munmap(img, size);
}

TEST(fixture_library_matches_readelf)
{
	char path[4200];
	int failed;

	snprintf(path, sizeof(path), "%s/libfx.so", fixture_dir);
	check_file(path, 5, &failed);
	CHECK(!failed);
}

TEST(no_fp_workload_matches_readelf)
{
	char path[4200];
	int failed;

	snprintf(path, sizeof(path), "%s/../workloads/nofp_main", fixture_dir);
	check_file(path, 10, &failed);
	CHECK(!failed);
}

TEST(debian_libc_matches_readelf)
{
	int failed;

	if (access(LIBC, R_OK)) {
		SKIP("%s not found", LIBC);
	}
	check_file(LIBC, 1000, &failed);
	CHECK(!failed);
}

TEST(libc_signal_trampoline_and_thread_start)
{
	struct cfi_table *t = NULL;
	const struct cfi_row *rows;
	struct cfi_stats st;
	size_t size = 0, n, i, ends = 0;
	void *img = map_file(LIBC, &size);

	if (!img) {
		SKIP("%s not found", LIBC);
	}
	CHECK_EQ_U64(cfi__parse(img, size, &t), 0);
	cfi__stats(t, &st);
	rows = cfi__rows(t, &n);
	for (i = 0; i < n; i++)
		ends += rows[i].cfa_type == UNWIND_CFA_END;
	for (i = 1; i < n; i++)
		if (rows[i].pc <= rows[i - 1].pc)
			break;
	munmap(img, size);
	cfi__free(t);
	CHECK(st.signal_fdes >= 1); /* __restore_rt */
	CHECK(ends >= 1);	    /* clone3's child: cfi_undefined rip */
	CHECK_EQ_U64(i, n);	    /* strictly ascending */
}

/* ---- hand-made ELF images ----------------------------------------------------- */

struct img {
	__u8 b[4096];
	size_t n;
};

static void put(struct img *m, size_t at, __u64 v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		m->b[at + i] = (__u8)(v >> (8 * i));
}

/* An ELF file holding @sec (named @name, at address 0x1000) and .shstrtab. */
static void make_elf(struct img *m, const char *name, const __u8 *sec, size_t len)
{
	size_t secoff = 64, stroff, shoff;
	char strtab[64];
	size_t strlen1;

	memset(m, 0, sizeof(*m));
	memcpy(m->b, "\177ELF\2\1\1", 7);
	put(m, 16, 3, 2);  /* ET_DYN */
	put(m, 18, 62, 2); /* x86_64 */
	memcpy(m->b + secoff, sec, len);
	stroff = secoff + len;
	memset(strtab, 0, sizeof(strtab));
	strlen1 = strlen(name);
	memcpy(strtab + 1, name, strlen1);
	memcpy(strtab + 2 + strlen1, ".shstrtab", 10);
	memcpy(m->b + stroff, strtab, 2 + strlen1 + 10);
	shoff = (stroff + 2 + strlen1 + 10 + 7) & ~7ul;
	put(m, 40, shoff, 8);
	put(m, 58, 64, 2);
	put(m, 60, 3, 2);
	put(m, 62, 2, 2);
	/* [1] the CFI section */
	put(m, shoff + 64, 1, 4);
	put(m, shoff + 64 + 4, 1, 4); /* PROGBITS */
	put(m, shoff + 64 + 16, 0x1000, 8);
	put(m, shoff + 64 + 24, secoff, 8);
	put(m, shoff + 64 + 32, len, 8);
	/* [2] .shstrtab */
	put(m, shoff + 128, 2 + strlen1, 4);
	put(m, shoff + 128 + 4, 3, 4);
	put(m, shoff + 128 + 24, stroff, 8);
	put(m, shoff + 128 + 32, 2 + strlen1 + 10, 8);
	m->n = shoff + 3 * 64;
}

/* .eh_frame: a "zR" CIE (pcrel|sdata4, cf 1, df -8, ra 16, rsp+8, ra at c-8)
 * then one FDE at 0x2000, length 0x40, with program @prog. */
static size_t make_eh_frame(__u8 *out, const __u8 *prog, size_t plen, int signal)
{
	static const __u8 cie_z[] = {0x14, 0,	 0,  0, 0,    0,    0, 0, 1,	'z', 'R', 0,
				     1,	   0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1,   0,	  0};
	static const __u8 cie_s[] = {0x14, 0, 0,    0,	0, 0,	 0,    0, 1, 'z',  'R', 'S',
				     0,	   1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1,	0};
	size_t n = sizeof(cie_z), fde = n, len;
	__s32 rel;

	memcpy(out, signal ? cie_s : cie_z, n);
	len = 4 + 4 + 4 + 1 + plen;
	len = (len + 3) & ~3ul;
	memset(out + fde, 0, 4 + len + 4);
	out[fde] = (__u8)len;
	out[fde + 4] = (__u8)(fde + 4); /* back to the CIE at 0 */
	rel = (__s32)(0x2000 - (0x1000 + fde + 8));
	memcpy(out + fde + 8, &rel, 4);
	out[fde + 12] = 0x40;
	out[fde + 16] = 0; /* augmentation data length */
	memcpy(out + fde + 17, prog, plen);
	return fde + 4 + len + 4; /* and a zero terminator */
}

static int parse_prog(const __u8 *prog, size_t plen, int signal, struct cfi_table **t)
{
	static struct img m;
	__u8 sec[512];
	size_t n = make_eh_frame(sec, prog, plen, signal);

	make_elf(&m, ".eh_frame", sec, n);
	return cfi__parse(m.b, m.n, t);
}

TEST(remember_restore_state)
{
	/* push rbp; mov rbp,rsp; ...; remember; leave path; restore */
	static const __u8 prog[] = {
		0x41,	     /* advance 1 */
		0x0e, 16,    /* cfa rsp+16 */
		0x86, 2,     /* rbp at c-16 */
		0x43,	     /* advance 3 */
		0x0d, 6,     /* cfa rbp */
		0x48,	     /* advance 8 */
		0x0a,	     /* remember */
		0x0c, 7,  8, /* cfa rsp+8 (after leave; ret) */
		0x41,	     /* advance 1 */
		0x0b,	     /* restore: rbp+16 again */
		0x41,	     /* advance 1 */
	};
	struct cfi_table *t = NULL;
	const struct cfi_row *r;

	CHECK_EQ_U64(parse_prog(prog, sizeof(prog), 0, &t), 0);
	r = cfi__find(t, 0x2000);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8 &&
	      r->rbp_type == UNWIND_RBP_SAME);
	r = cfi__find(t, 0x2001);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 16 &&
	      r->rbp_type == UNWIND_RBP_AT_CFA && r->rbp_off == -16);
	r = cfi__find(t, 0x2004);
	CHECK(r && r->cfa_type == UNWIND_CFA_RBP && r->cfa_off == 16);
	r = cfi__find(t, 0x200c);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8 &&
	      r->rbp_type == UNWIND_RBP_AT_CFA);
	r = cfi__find(t, 0x200d);
	CHECK(r && r->cfa_type == UNWIND_CFA_RBP && r->cfa_off == 16);
	r = cfi__find(t, 0x203f);
	CHECK(r && r->cfa_type == UNWIND_CFA_RBP);
	r = cfi__find(t, 0x2040); /* past the FDE */
	CHECK(r && r->cfa_type == UNWIND_CFA_NONE);
	CHECK(cfi__find(t, 0x1fff) == NULL);
	cfi__free(t);
}

TEST(expressions_plt_deref_and_unsupported)
{
	static const __u8 prog[] = {
		0x0f, 11,   0x77, 8,	0x80, 0,    0x3f,
		0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22, /* PLT */
		0x48,				    /* advance 8 */
		0x0f, 3,    0x76, 0x78, 0x06,	    /* *(rbp - 8) */
		0x48, 0x0f, 3,	  0x77, 0x10, 0x06, /* *(rsp + 16): not ours */
		0x48, 0x0c, 3,	  8,		    /* cfa rbx+8: not ours */
		0x48, 0x07, 16,			    /* ra undefined: outermost */
	};
	struct cfi_table *t = NULL;
	const struct cfi_row *r;
	struct cfi_stats st;

	CHECK_EQ_U64(parse_prog(prog, sizeof(prog), 0, &t), 0);
	r = cfi__find(t, 0x2005);
	CHECK(r && r->cfa_type == UNWIND_CFA_PLT && r->cfa_off == 11);
	r = cfi__find(t, 0x2008);
	CHECK(r && r->cfa_type == UNWIND_CFA_DEREF_RBP && r->cfa_off == -8);
	r = cfi__find(t, 0x2010);
	CHECK(r && r->cfa_type == UNWIND_CFA_UNSUPPORTED);
	r = cfi__find(t, 0x2018);
	CHECK(r && r->cfa_type == UNWIND_CFA_UNSUPPORTED);
	r = cfi__find(t, 0x2020);
	CHECK(r && r->cfa_type == UNWIND_CFA_END);
	cfi__stats(t, &st);
	CHECK(st.unsupported >= 1);
	cfi__free(t);
}

TEST(signal_frame)
{
	static const __u8 prog[] = {0x41, 0x0e, 16};
	struct cfi_table *t = NULL;
	const struct cfi_row *r;

	CHECK_EQ_U64(parse_prog(prog, sizeof(prog), 1, &t), 0);
	r = cfi__find(t, 0x2008);
	CHECK(r && r->cfa_type == UNWIND_CFA_SIGNAL);
	cfi__free(t);
}

TEST(malformed_fde_is_skipped)
{
	static const __u8 bad_state[] = {0x0b};		  /* restore without remember */
	static const __u8 bad_op[] = {0x41, 0x3f, 0x1};	  /* unknown opcode */
	static const __u8 too_far[] = {0x04, 0, 1, 0, 0}; /* advance past the end */
	struct cfi_table *t = NULL;
	struct cfi_stats st;
	size_t n;

	CHECK_EQ_U64(parse_prog(bad_state, sizeof(bad_state), 0, &t), 0);
	cfi__stats(t, &st);
	cfi__rows(t, &n);
	CHECK_EQ_U64(st.bad_entries, 1);
	CHECK_EQ_U64(n, 0);
	cfi__free(t);
	CHECK_EQ_U64(parse_prog(bad_op, sizeof(bad_op), 0, &t), 0);
	cfi__stats(t, &st);
	CHECK_EQ_U64(st.bad_entries, 1);
	cfi__free(t);
	CHECK_EQ_U64(parse_prog(too_far, sizeof(too_far), 0, &t), 0);
	cfi__stats(t, &st);
	CHECK_EQ_U64(st.bad_entries, 1);
	cfi__free(t);
}

TEST(debug_frame_absolute_addresses)
{
	static const __u8 sec[] = {
		/* CIE: id ~0, version 1, "", cf 1, df -8, ra 16, rsp+8, ra c-8 */
		0x10, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1, 0, 0,
		/* FDE: cie 0, begin 0x3000, range 0x10, advance 4, cfa rsp+32 */
		0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0,
		0x44, 0x0e, 32, 0};
	static struct img m;
	struct cfi_table *t = NULL;
	const struct cfi_row *r;
	struct cfi_stats st;
	__u8 high[sizeof(sec)];

	/* An FDE at 2^63 or above is no code's: skipped, counted (its rows
	 * would wrap the sort key). */
	memcpy(high, sec, sizeof(sec));
	high[20 + 15] = 0x80; /* begin 0x8000000000003000 */
	make_elf(&m, ".debug_frame", high, sizeof(high));
	CHECK_EQ_U64(cfi__parse(m.b, m.n, &t), 0);
	cfi__stats(t, &st);
	CHECK_EQ_U64(st.bad_entries, 1);
	cfi__free(t);
	t = NULL;
	make_elf(&m, ".debug_frame", sec, sizeof(sec));
	CHECK_EQ_U64(cfi__parse(m.b, m.n, &t), 0);
	cfi__stats(t, &st);
	CHECK(st.from_debug_frame);
	r = cfi__find(t, 0x3000);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
	r = cfi__find(t, 0x3004);
	CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 32);
	r = cfi__find(t, 0x3010);
	CHECK(r && r->cfa_type == UNWIND_CFA_NONE);
	cfi__free(t);
}

/* An ELF file with .eh_frame (@eh, at 0x1000) and .eh_frame_hdr (@hdr,
 * named @hdr_name, at 0x1800). */
static void make_elf_hdr(struct img *m, const __u8 *eh, size_t ehlen, const __u8 *hdr, size_t hlen,
			 const char *hdr_name)
{
	static const char names[] = "\0.eh_frame\0.shstrtab\0";
	size_t ehoff = 64, hoff = 64 + 0x800, stroff = hoff + hlen, shoff,
	       nl = strlen(hdr_name) + 1;

	memset(m, 0, sizeof(*m));
	memcpy(m->b, "\177ELF\2\1\1", 7);
	put(m, 16, 3, 2);
	put(m, 18, 62, 2);
	memcpy(m->b + ehoff, eh, ehlen);
	memcpy(m->b + hoff, hdr, hlen);
	memcpy(m->b + stroff, names, sizeof(names));
	memcpy(m->b + stroff + sizeof(names), hdr_name, nl);
	shoff = (stroff + sizeof(names) + nl + 7) & ~7ul;
	put(m, 40, shoff, 8);
	put(m, 58, 64, 2);
	put(m, 60, 4, 2);
	put(m, 62, 3, 2);
	/* [1] .eh_frame, [2] the table, [3] .shstrtab */
	put(m, shoff + 64, 1, 4);
	put(m, shoff + 64 + 4, 1, 4);
	put(m, shoff + 64 + 16, 0x1000, 8);
	put(m, shoff + 64 + 24, ehoff, 8);
	put(m, shoff + 64 + 32, ehlen, 8);
	put(m, shoff + 128, sizeof(names), 4);
	put(m, shoff + 128 + 4, 1, 4);
	put(m, shoff + 128 + 16, 0x1800, 8);
	put(m, shoff + 128 + 24, hoff, 8);
	put(m, shoff + 128 + 32, hlen, 8);
	put(m, shoff + 192, 11, 4);
	put(m, shoff + 192 + 4, 3, 4);
	put(m, shoff + 192 + 24, stroff, 8);
	put(m, shoff + 192 + 32, sizeof(names) + nl, 8);
	m->n = shoff + 4 * 64;
}

/* An FDE at @at of .eh_frame (CIE at 0): [begin, begin + range), @prog. */
static size_t put_fde(__u8 *out, size_t at, __u64 begin, __u32 range, const __u8 *prog, size_t plen)
{
	size_t len = (4 + 4 + 4 + 1 + plen + 3) & ~3ul;
	__s32 rel = (__s32)(begin - (0x1000 + at + 8));

	memset(out + at, 0, 4 + len);
	out[at] = (__u8)len;
	memcpy(out + at + 4, &(__u32){(__u32)(at + 4)}, 4);
	memcpy(out + at + 8, &rel, 4);
	memcpy(out + at + 12, &range, 4);
	memcpy(out + at + 17, prog, plen);
	return at + 4 + len;
}

/* Rows of FDEs listed out of address order, read in the order of
 * .eh_frame_hdr's table, equal those of the section's own order (sorted
 * afterwards), and a table that does not match the section is not used. */
TEST(eh_frame_hdr_order)
{
	static const __u8 cie[] = {0x14, 0,    0,  0, 0,    0,	  0, 0, 1,    'z', 'R', 0,
				   1,	 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1,   0,	0};
	static const __u8 p1[] = {0x44, 0x0e, 16};		   /* advance 4, rsp+16 */
	static const __u8 p2[] = {0x48, 0x0e, 24, 0x41, 0x0e, 24}; /* rsp+24; the same again */
	static const __u8 bad[] = {0x0b};			   /* restore without remember */
	static struct img m;
	__u8 eh[256] = {0}, hdr[64] = {0};
	size_t n, f1, f2, f3, end, k, nref = 0;
	struct cfi_row ref[16];
	const struct cfi_row *rows;
	struct cfi_table *t = NULL;
	const struct cfi_row *r;
	struct cfi_stats st;
	int v;

	memcpy(eh, cie, sizeof(cie));
	f1 = sizeof(cie);
	f2 = put_fde(eh, f1, 0x3000, 0x10, p1, sizeof(p1));    /* second by address */
	f3 = put_fde(eh, f2, 0x2000, 0x1000, p2, sizeof(p2));  /* first; ends where f1 starts */
	end = put_fde(eh, f3, 0x3010, 0x10, bad, sizeof(bad)); /* third: malformed */
	/* version 1, eh_frame_ptr pcrel|sdata4, count udata4, table datarel|sdata4 */
	hdr[0] = 1, hdr[1] = 0x1b, hdr[2] = 0x03, hdr[3] = 0x3b;
	memcpy(hdr + 4, &(__s32){(__s32)(0x1000 - 0x1804)}, 4);
	memcpy(hdr + 8, &(__u32){3}, 4);
	memcpy(hdr + 12, &(__s32){0x2000 - 0x1800}, 4);
	memcpy(hdr + 16, &(__s32){(__s32)(0x1000 + f2 - 0x1800)}, 4);
	memcpy(hdr + 20, &(__s32){0x3000 - 0x1800}, 4);
	memcpy(hdr + 24, &(__s32){(__s32)(0x1000 + f1 - 0x1800)}, 4);
	memcpy(hdr + 28, &(__s32){0x3010 - 0x1800}, 4);
	memcpy(hdr + 32, &(__s32){(__s32)(0x1000 + f3 - 0x1800)}, 4);
	for (v = 0; v < 4; v++) {
		/* 0: the table; 1: none; 2: its count wrong; 3: out of order */
		__u8 h[64];

		memcpy(h, hdr, sizeof(h));
		if (v == 2)
			h[8] = 2;
		if (v == 3)
			memcpy(h + 20, &(__s32){0x1000 - 0x1800}, 4);
		make_elf_hdr(&m, eh, end + 4, h, 36, v == 1 ? ".eh_frame_hdx" : ".eh_frame_hdr");
		CHECK_EQ_U64(cfi__parse(m.b, m.n, &t), 0);
		rows = cfi__rows(t, &n);
		cfi__stats(t, &st);
		CHECK_EQ_U64(st.fdes, 3);
		CHECK_EQ_U64(st.cies, 1);
		CHECK_EQ_U64(st.bad_entries, 1);
		CHECK_EQ_U64(st.hdr_order, v == 0);
		r = cfi__find(t, 0x2000);
		CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
		r = cfi__find(t, 0x2009);
		CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 24);
		r = cfi__find(t, 0x3000); /* f1's start, not f2's end */
		CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 8);
		r = cfi__find(t, 0x3004);
		CHECK(r && r->cfa_type == UNWIND_CFA_RSP && r->cfa_off == 16);
		r = cfi__find(t, 0x3010); /* f1's end: the malformed f3 left nothing */
		CHECK(r && r->cfa_type == UNWIND_CFA_NONE);
		if (!v) {
			CHECK(n <= sizeof(ref) / sizeof(ref[0]));
			nref = n;
			memcpy(ref, rows, n * sizeof(*rows));
		} else {
			CHECK_EQ_U64(n, nref);
			for (k = 0; k < n && k < nref; k++)
				CHECK(!memcmp(&rows[k], &ref[k], sizeof(ref[k])));
		}
		cfi__free(t);
		t = NULL;
	}
	CHECK_EQ_U64(nref, 5); /* 0x2000, 0x2008, 0x3000, 0x3004, 0x3010 */
}

TEST(not_elf_and_no_cfi)
{
	static const char text[] = "#!/bin/sh\necho hi\n";
	static struct img m;
	struct cfi_table *t = NULL;

	CHECK_EQ_U64(cfi__parse(text, sizeof(text), &t), -ENOEXEC);
	CHECK(t == NULL);
	make_elf(&m, ".text", (const __u8 *)"\xc3", 1);
	CHECK_EQ_U64(cfi__parse(m.b, m.n, &t), -ENOENT);
	m.b[18] = 183; /* aarch64 */
	CHECK_EQ_U64(cfi__parse(m.b, m.n, &t), -ENOEXEC);
}

/* Every prefix and a sweep of single-byte corruptions of a real library:
 * any result is fine as long as the parser returns and rows stay sorted. */
TEST(truncated_and_corrupted_images)
{
	char path[4200];
	size_t size = 0, len, i, n;
	__u8 *copy;
	void *img;
	int ok = 0, failed = 0;

	snprintf(path, sizeof(path), "%s/libfx.so", fixture_dir);
	img = map_file(path, &size);
	CHECK(img != NULL);
	copy = malloc(size);
	CHECK(copy != NULL);
	for (len = 0; len < size; len += 1 + len / 64) {
		struct cfi_table *t = NULL;

		if (cfi__parse(img, len, &t) == 0)
			ok++;
		else
			failed++;
		cfi__free(t);
	}
	for (i = 0; i < size; i += 3) {
		struct cfi_table *t = NULL;
		const struct cfi_row *rows;
		size_t k;

		memcpy(copy, img, size);
		copy[i] ^= (__u8)(0x5a + i);
		if (cfi__parse(copy, size, &t) == 0) {
			rows = cfi__rows(t, &n);
			for (k = 1; k < n; k++)
				if (rows[k].pc <= rows[k - 1].pc)
					break;
			cfi__free(t);
			if (k < n && n)
				break;
		}
	}
	free(copy);
	munmap(img, size);
	CHECK(failed > 0);
	CHECK(i >= size);
}

TEST(pack_roundtrip)
{
	struct cfi_row r = {.pc = 0x12345678,
			    .cfa_type = UNWIND_CFA_RBP,
			    .cfa_off = -200000,
			    .rbp_type = UNWIND_RBP_AT_CFA,
			    .rbp_off = -1024};
	__u64 p = cfi__pack(&r);

	CHECK_EQ_U64(UNWIND_ROW_PC(p), 0x12345678);
	CHECK_EQ_U64(UNWIND_ROW_CFA(p), UNWIND_CFA_RBP);
	CHECK(UNWIND_ROW_CFA_OFF(p) == -200000);
	CHECK_EQ_U64(UNWIND_ROW_RBP(p), UNWIND_RBP_AT_CFA);
	CHECK(UNWIND_ROW_RBP_OFF(p) == -1024);
	r.cfa_off = 300000; /* too big: unsupported, never wrapped */
	r.rbp_off = -12;    /* not a multiple of 8: rbp unknown */
	p = cfi__pack(&r);
	CHECK_EQ_U64(UNWIND_ROW_CFA(p), UNWIND_CFA_UNSUPPORTED);
	CHECK_EQ_U64(UNWIND_ROW_RBP(p), UNWIND_RBP_UNKNOWN);
	r.cfa_type = UNWIND_CFA_RSP;
	r.cfa_off = 8;
	r.rbp_off = 1016;
	p = cfi__pack(&r);
	CHECK(UNWIND_ROW_CFA_OFF(p) == 8 && UNWIND_ROW_RBP_OFF(p) == 1016);
}

int main(void)
{
	(void)fixtures__read_line;
	fixtures__init();
	RUN(fixture_library_matches_readelf);
	RUN(no_fp_workload_matches_readelf);
	RUN(debian_libc_matches_readelf);
	RUN(libc_signal_trampoline_and_thread_start);
	RUN(remember_restore_state);
	RUN(expressions_plt_deref_and_unsupported);
	RUN(signal_frame);
	RUN(malformed_fde_is_skipped);
	RUN(debug_frame_absolute_addresses);
	RUN(eh_frame_hdr_order);
	RUN(not_elf_and_no_cfi);
	RUN(truncated_and_corrupted_images);
	RUN(pack_roundtrip);
	return TEST_DONE();
}
