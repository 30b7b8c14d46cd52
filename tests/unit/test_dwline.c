/* test_dwline.c - symbolize/dwline: hand-built line programs (versions 4
 * and 5, sequences out of order, adjacent sequences, malformed input), and
 * row for row against libdw's dwarf_getsrc_die() on real debug info. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/dwarf.h"
#include "symbolize/dwline.h"
#include "test.h"

/* A growing byte buffer for hand-built programs. */
struct prog {
	unsigned char b[1024];
	size_t n;
};

static void put(struct prog *p, const void *v, size_t n)
{
	memcpy(p->b + p->n, v, n);
	p->n += n;
}

static void u8(struct prog *p, unsigned int v)
{
	unsigned char c = (unsigned char)v;

	put(p, &c, 1);
}

static void u16(struct prog *p, unsigned int v)
{
	u8(p, v & 0xff);
	u8(p, v >> 8);
}

static void u32(struct prog *p, __u32 v)
{
	u16(p, v & 0xffff);
	u16(p, v >> 16);
}

static void u64(struct prog *p, __u64 v)
{
	u32(p, (__u32)v);
	u32(p, (__u32)(v >> 32));
}

static void uleb(struct prog *p, __u64 v)
{
	do {
		unsigned int b = v & 0x7f;

		v >>= 7;
		u8(p, b | (v ? 0x80 : 0));
	} while (v);
}

static void sleb(struct prog *p, __s64 v)
{
	for (;;) {
		unsigned int b = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			u8(p, b);
			return;
		}
		u8(p, b | 0x80);
	}
}

#define LINE_BASE (-5)
#define LINE_RANGE 14
#define OPCODE_BASE 13

static void set_address(struct prog *p, __u64 a)
{
	u8(p, 0);
	uleb(p, 9);
	u8(p, DW_LNE_set_address);
	u64(p, a);
}

static void end_sequence(struct prog *p)
{
	u8(p, 0);
	uleb(p, 1);
	u8(p, DW_LNE_end_sequence);
}

/* A special opcode: line += @dl, address += @da. */
static void special(struct prog *p, int dl, unsigned int da)
{
	u8(p, (unsigned int)(dl - LINE_BASE) + LINE_RANGE * da + OPCODE_BASE);
}

/* Header of @version (4 or 5) with one file, into @p; returns where the
 * unit length goes (patched by finish()). */
static size_t header(struct prog *p, unsigned int version)
{
	static const unsigned char lens[] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	size_t at = p->n, hl;

	u32(p, 0); /* unit_length, patched */
	u16(p, version);
	if (version >= 5) {
		u8(p, 8); /* address_size */
		u8(p, 0); /* segment selector size */
	}
	hl = p->n;
	u32(p, 0); /* header_length, patched */
	u8(p, 1);  /* minimum_instruction_length */
	u8(p, 1);  /* maximum_operations_per_instruction */
	u8(p, 1);  /* default_is_stmt */
	u8(p, (unsigned int)(unsigned char)LINE_BASE);
	u8(p, LINE_RANGE);
	u8(p, OPCODE_BASE);
	put(p, lens, sizeof(lens));
	if (version >= 5) {
		u8(p, 1); /* directory entry format: path, string */
		uleb(p, DW_LNCT_path);
		uleb(p, DW_FORM_string);
		uleb(p, 1);
		put(p, "/src", 5);
		u8(p, 2); /* file entry format: path string, directory index */
		uleb(p, DW_LNCT_path);
		uleb(p, DW_FORM_string);
		uleb(p, DW_LNCT_directory_index);
		uleb(p, DW_FORM_udata);
		uleb(p, 1);
		put(p, "a.c", 4);
		uleb(p, 0);
	} else {
		u8(p, 0); /* no include directories */
		put(p, "a.c", 4);
		uleb(p, 0);
		uleb(p, 0);
		uleb(p, 0);
		u8(p, 0);
	}
	{
		__u32 v = (__u32)(p->n - hl - 4);

		memcpy(p->b + hl, &v, 4);
	}
	return at;
}

static void finish(struct prog *p, size_t at)
{
	__u32 v = (__u32)(p->n - at - 4);

	memcpy(p->b + at, &v, 4);
}

/* Two sequences, the higher one first (as -ffunction-sections output
 * often is), a third starting where the second ends, and every standard
 * opcode. */
static void build(struct prog *p, unsigned int version)
{
	size_t at;

	memset(p, 0, sizeof(*p));
	at = header(p, version);
	/* sequence A: 0x2000..0x2030 */
	set_address(p, 0x2000);
	u8(p, DW_LNS_advance_line);
	sleb(p, 9); /* line 10 */
	u8(p, DW_LNS_set_column);
	uleb(p, 7);
	u8(p, DW_LNS_copy); /* 0x2000 line 10 col 7 */
	special(p, 2, 4);   /* 0x2004 line 12 */
	u8(p, DW_LNS_advance_pc);
	uleb(p, 0xc);
	u8(p, DW_LNS_advance_line);
	sleb(p, -3);
	u8(p, DW_LNS_negate_stmt);
	u8(p, DW_LNS_set_basic_block);
	u8(p, DW_LNS_set_prologue_end);
	u8(p, DW_LNS_set_epilogue_begin);
	u8(p, DW_LNS_set_isa);
	uleb(p, 0);
	u8(p, DW_LNS_copy);	    /* 0x2010 line 9 */
	u8(p, DW_LNS_const_add_pc); /* + (255 - 13) / 14 = 17 */
	u8(p, DW_LNS_fixed_advance_pc);
	u16(p, 3); /* 0x2024 */
	u8(p, 0);  /* set_discriminator: skipped */
	uleb(p, 2);
	u8(p, DW_LNE_set_discriminator);
	uleb(p, 5);
	special(p, 1, 0); /* 0x2024 line 10 */
	u8(p, DW_LNS_advance_pc);
	uleb(p, 0xc);
	end_sequence(p); /* 0x2030 */
	/* sequence B: 0x1000..0x1010, in file 2 (no such file) */
	set_address(p, 0x1000);
	u8(p, DW_LNS_set_file);
	uleb(p, 2);
	u8(p, DW_LNS_advance_line);
	sleb(p, 99); /* line 100 */
	u8(p, DW_LNS_copy);
	special(p, 1, 8); /* 0x1008 line 101 */
	special(p, 0, 8); /* 0x1010 line 101: an ordinary row where it ends */
	end_sequence(p);  /* 0x1010 */
	/* sequence C: 0x1010..0x1020 */
	set_address(p, 0x1010);
	u8(p, DW_LNS_advance_line);
	sleb(p, 199); /* line 200 */
	u8(p, DW_LNS_copy);
	u8(p, DW_LNS_advance_pc);
	uleb(p, 0x10);
	end_sequence(p);
	finish(p, at);
}

static void check_rows(const struct dwline_table *t)
{
	const struct dwline_row *r;
	size_t i;

	for (i = 1; i < t->n; i++)
		CHECK(t->rows[i - 1].addr <= t->rows[i].addr);
	r = dwline__find(t, 0x2000);
	CHECK(r && r->line == 10 && r->column == 7 && r->file == 1);
	r = dwline__find(t, 0x2003);
	CHECK(r && r->line == 10);
	r = dwline__find(t, 0x2004);
	CHECK(r && r->line == 12);
	r = dwline__find(t, 0x2010);
	CHECK(r && r->line == 9);
	r = dwline__find(t, 0x2024);
	CHECK(r && r->line == 10);
	CHECK(!dwline__find(t, 0x2030)); /* the end of A */
	CHECK(!dwline__find(t, 0x3000));
	CHECK(!dwline__find(t, 0xfff)); /* below everything */
	r = dwline__find(t, 0x1000);
	CHECK(r && r->line == 100 && r->file == 2);
	r = dwline__find(t, 0x100f);
	CHECK(r && r->line == 101);
	/* At 0x1010 B's end sorts before C's start (and B's own row there
	 * comes after its end in program order... before C's): C's row. */
	r = dwline__find(t, 0x1010);
	CHECK(r && r->line == 200);
	CHECK(t->rows[t->n - 1].end);
}

/* The same program with a version 4 and a version 5 header. */
TEST(versions_4_and_5)
{
	struct dwline_table t;
	struct prog p;
	unsigned int v;

	for (v = 4; v <= 5; v++) {
		build(&p, v);
		CHECK_EQ_U64(dwline__read(p.b, p.n, 0, 8, &t), 0);
		CHECK_EQ_U64(t.n, 11);
		check_rows(&t);
		dwline__release(&t);
	}
	dwline__release(&t); /* twice: empty */
	dwline__release(NULL);
}

TEST(second_unit_at_offset)
{
	struct dwline_table t;
	struct prog p, q;

	build(&p, 4);
	build(&q, 5);
	memcpy(p.b + p.n, q.b, q.n);
	CHECK_EQ_U64(dwline__read(p.b, p.n + q.n, p.n, 8, &t), 0);
	CHECK_EQ_U64(t.n, 11);
	check_rows(&t);
	dwline__release(&t);
	CHECK_EQ_U64(dwline__read(p.b, p.n + q.n, p.n + q.n, 8, &t), -EINVAL);
}

TEST(malformed)
{
	struct dwline_table t;
	struct prog p;
	size_t cut;

	build(&p, 5);
	/* Every truncation: an error or fewer rows. (Reads past the end: the
	 * suite's ASan build cannot link libdw, which this test also uses for
	 * its cross-check; dwline.c alone was run under ASan and UBSan on
	 * libc's units truncated and with bits flipped, with no finding.) */
	for (cut = 0; cut < p.n; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);

		memcpy(copy, p.b, cut);
		if (!dwline__read(copy, cut, 0, 8, &t))
			CHECK(t.n <= 11);
		dwline__release(&t);
		free(copy);
	}
	/* A known opcode with another operand count in the header: refused,
	 * as libdw refuses it. */
	build(&p, 4);
	p.b[4 + 2 + 4 + 6 + DW_LNS_advance_pc - 1] = 2;
	CHECK_EQ_U64(dwline__read(p.b, p.n, 0, 8, &t), -EINVAL);
	/* Version 6 and an address of another size: refused. */
	build(&p, 4);
	p.b[4] = 6;
	CHECK_EQ_U64(dwline__read(p.b, p.n, 0, 8, &t), -EINVAL);
	build(&p, 4);
	CHECK_EQ_U64(dwline__read(p.b, p.n, 0, 4, &t), -EINVAL);
	CHECK_EQ_U64(dwline__read(NULL, 0, 0, 8, &t), -EINVAL);
	/* Random bytes after a valid header: no crash. */
	srand(7);
	for (cut = 0; cut < 2000; cut++) {
		size_t i, at;

		memset(&p, 0, sizeof(p));
		at = header(&p, cut & 1 ? 5 : 4);
		for (i = 0; i < 64; i++)
			u8(&p, (unsigned int)rand() & 0xff);
		finish(&p, at);
		if (!dwline__read(p.b, p.n, 0, 8, &t))
			for (i = 1; i < t.n; i++)
				CHECK(t.rows[i - 1].addr <= t.rows[i].addr);
		dwline__release(&t);
	}
}

/* Every unit of @path: at every row address and one past it, dwline
 * answers what libdw's dwarf_getsrc_die() does. Addresses checked go to
 * *@checked. */
static void cross_check(const char *path, size_t *checked)
{
	size_t shstrndx, hsize;
	Dwarf_Off off = 0, next;
	const void *sec = NULL;
	size_t len = 0;
	Elf_Scn *scn = NULL;
	Dwarf *dw;
	Elf *elf;
	int fd;

	*checked = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		close(fd);
		return;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".debug_line"))
			continue;
		if (sh.sh_flags & SHF_COMPRESSED)
			elf_compress(scn, 0, 0);
		d = elf_getdata(scn, NULL);
		if (d) {
			sec = d->d_buf;
			len = d->d_size;
		}
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	CHECK(sec && dw);
	while (sec && dw && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		Dwarf_Attribute a;
		Dwarf_Word stmt;
		Dwarf_Lines *lines;
		Dwarf_Files *files;
		size_t nl, nf, i;
		struct dwline_table t;

		if (!dwarf_offdie(dw, off + hsize, &cu) || !dwarf_attr(&cu, DW_AT_stmt_list, &a) ||
		    dwarf_formudata(&a, &stmt) || dwarf_getsrclines(&cu, &lines, &nl) ||
		    dwarf_getsrcfiles(&cu, &files, &nf)) {
			off = next;
			continue;
		}
		CHECK_EQ_U64(dwline__read(sec, len, stmt, 8, &t), 0);
		CHECK_EQ_U64(t.n, nl);
		for (i = 0; i < nl; i++) {
			Dwarf_Addr base;
			unsigned int k;

			dwarf_lineaddr(dwarf_onesrcline(lines, i), &base);
			for (k = 0; k < 2; k++) {
				Dwarf_Line *l = dwarf_getsrc_die(&cu, base + k);
				const struct dwline_row *r = dwline__find(&t, base + k);
				int ln = 0, col = 0;

				CHECK(!l == !r);
				if (!l || !r)
					continue;
				dwarf_lineno(l, &ln);
				dwarf_linecol(l, &col);
				CHECK(r->line == (__u32)(ln > 0 ? ln : 0) && r->column == col);
				CHECK(r->file < nf &&
				      dwarf_linesrc(l, NULL, NULL) ==
					      dwarf_filesrc(files, r->file, NULL, NULL));
				(*checked)++;
			}
		}
		dwline__release(&t);
		off = next;
	}
	dwarf_end(dw);
	elf_end(elf);
	close(fd);
}

TEST(same_as_libdw)
{
	static const char *const files[] = {
		"build/tests/workloads/inlined",
		"build/profcap.debug",
		/* Debian's libc6-dbg (build.sh installs it): zlib-compressed
		 * DWARF 5, sequences out of order in 414 of its 2063 units */
		"/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug",
	};
	size_t i, n;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (access(files[i], R_OK))
			continue;
		cross_check(files[i], &n);
		printf("# %s: %zu addresses as libdw answers\n", files[i], n);
		CHECK(n > 0);
	}
}

int main(void)
{
	/* links dwarf.c, whose glue (error(), ebl_closebackend()) libdw needs */
	dwarf_lines__free(NULL);
	RUN(versions_4_and_5);
	RUN(second_unit_at_offset);
	RUN(malformed);
	RUN(same_as_libdw);
	return TEST_DONE();
}
