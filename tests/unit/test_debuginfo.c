/* test_debuginfo.c - demangling, .gopclntab, the names of stripped Go PIEs,
 * .gnu_debuglink, MiniDebugInfo decompression, htlhash, and finding a debug
 * file by build-id / debuglink (with a mismatched candidate skipped), on
 * crafted inputs and fixtures. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "fixtures.h"
#include "gofixture.h"
#include "symbolize/debugfile.h"
#include "symbolize/debuglink.h"
#include "symbolize/demangle.h"
#include "symbolize/elfsym.h"
#include "symbolize/gopclntab.h"
#include "symbolize/minidebug.h"

static const char *fixture_path(const char *name)
{
	static char path[2][4200];
	static int i;

	i ^= 1;
	snprintf(path[i], sizeof(path[i]), "%s/%s", fixture_dir, name);
	return path[i];
}

static int demangled_is(const char *mangled, const char *want)
{
	char *d = demangle__name(mangled);
	int ok = want ? d && !strcmp(d, want) : !d;

	if (!ok)
		printf("  demangle(%s) = %s, want %s\n", mangled, d ? d : "NULL",
		       want ? want : "NULL");
	free(d);
	return ok;
}

TEST(demangle_cxx)
{
	CHECK(demangled_is("_ZNK4shop6BasketIlE8checksumEv", "shop::Basket<long>::checksum() const"));
	CHECK(demangled_is("_ZN4node5StartEiPPc", "node::Start(int, char**)"));
	CHECK(demangled_is("main", NULL));
	CHECK(demangled_is("main.hotGoWork", NULL));
	CHECK(demangled_is("_Zgarbage", NULL));
	CHECK(demangled_is("", NULL));
}

TEST(demangle_rust)
{
	/* Legacy: the trailing hash component is dropped (as C++ it is kept). */
	CHECK(demangled_is("_ZN8rustwork4shop13hot_rust_work17h0123456789abcdefE",
			   "rustwork::shop::hot_rust_work"));
	/* v0. */
	CHECK(demangled_is("_RNvNtCs1234_8rustwork4shop13hot_rust_work",
			   "rustwork::shop::hot_rust_work"));
	CHECK(demangled_is("_RNvXXX", NULL));
}

TEST(demangle_caps_length)
{
	char *big = malloc(DEMANGLE_MAX_INPUT + 16);

	CHECK(big);
	memset(big, 'a', DEMANGLE_MAX_INPUT + 15);
	memcpy(big, "_ZN", 3);
	big[DEMANGLE_MAX_INPUT + 15] = '\0';
	CHECK(!demangle__name(big));
	free(big);
}

static void put32(unsigned char *b, size_t at, __u32 v)
{
	memcpy(b + at, &v, 4);
}

static void put64(unsigned char *b, size_t at, __u64 v)
{
	memcpy(b + at, &v, 8);
}

/* A Go 1.20 pclntab with two functions, main.a [0x1000, 0x1040) and main.b
 * [0x1040, 0x1080). */
static size_t craft_pclntab(unsigned char *b)
{
	const size_t names = 72, pcln = 96;

	memset(b, 0, 160);
	put32(b, 0, 0xfffffff1u);
	b[6] = 1;
	b[7] = 8;
	put64(b, 8, 2);		 /* nfunc */
	put64(b, 24, 0x1000);	 /* textStart */
	put64(b, 32, names);	 /* funcnameOffset */
	put64(b, 56, 88);	 /* pctabOffset (empty) */
	put64(b, 64, pcln);	 /* pclnOffset */
	memcpy(b + names, "main.a\0main.b\0", 14);
	put32(b, pcln + 0, 0);	  /* entryoff */
	put32(b, pcln + 4, 24);	  /* funcoff */
	put32(b, pcln + 8, 0x40); /* entryoff */
	put32(b, pcln + 12, 32);  /* funcoff */
	put32(b, pcln + 16, 0x80); /* end */
	put32(b, pcln + 24 + 4, 0); /* _func.nameOff */
	put32(b, pcln + 32 + 4, 7);
	return 160;
}

TEST(gopclntab_120)
{
	unsigned char b[160];
	size_t len = craft_pclntab(b), n = 0;
	struct gopclntab_func *f = NULL;

	CHECK_EQ_U64(gopclntab__parse(b, len, 0x9999, 100, &f, &n), 0);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(f[0].entry, 0x1000);
	CHECK_EQ_U64(f[0].end, 0x1040);
	CHECK_STR(f[0].name, "main.a");
	CHECK_EQ_U64(f[1].entry, 0x1040);
	CHECK_EQ_U64(f[1].end, 0x1080);
	CHECK_STR(f[1].name, "main.b");
	free(f);
}

TEST(gopclntab_bad)
{
	unsigned char b[160];
	size_t len = craft_pclntab(b), n = 7, cut;
	struct gopclntab_func *f = (void *)1;

	/* Every truncation fails cleanly or yields names inside the data. */
	for (cut = 0; cut < len; cut++) {
		int err = gopclntab__parse(b, cut, 0, 100, &f, &n);

		CHECK(err == -EBADMSG || err == 0);
		if (!err)
			free(f);
	}
	put32(b, 0, 0xfffffffbu); /* Go 1.2 - 1.15 */
	CHECK_EQ_U64(gopclntab__parse(b, len, 0, 100, &f, &n), (__u64)-ENOTSUP);
	craft_pclntab(b);
	put64(b, 8, 1ull << 40); /* nfunc far beyond the data */
	CHECK_EQ_U64(gopclntab__parse(b, len, 0, 100, &f, &n), (__u64)-EBADMSG);
	craft_pclntab(b);
	put32(b, 96 + 24 + 4, 1000); /* name offset outside */
	CHECK_EQ_U64(gopclntab__parse(b, len, 0, 100, &f, &n), 0);
	CHECK_EQ_U64(n, 1);
	CHECK_STR(f[0].name, "main.b");
	free(f);
}

/* What write_go_elf() puts in its file. */
#define GO_NOTE 0x1    /* a .note.go.buildid section */
#define GO_RELA 0x2    /* .rela.dyn, giving its text address, is SHT_RELA (else not read) */
#define GO_OWN_SEC 0x4 /* the table alone in .data.rel.ro.gopclntab, text address set */
#define GO_RO 0x9000u

/* A minimal x86-64 ELF file at @path: .text at 0x1000, craft_pclntab()'s
 * table 64 bytes into .data.rel.ro (its text address 0: relocated), and
 * what @how says. 0 or -errno. */
static int write_go_elf(const char *path, unsigned int how)
{
	static const char shstr[] = "\0.text\0.data.rel.ro\0.rela.dyn\0.note.go.buildid\0"
				    ".shstrtab\0.data.rel.ro.gopclntab";
	unsigned char img[2048], *sh;
	size_t i = 1;
	FILE *f;
	int ok;

	memset(img, 0, sizeof(img));
	memcpy(img, "\177ELF\2\1\1", 7);
	img[16] = 3;  /* ET_DYN */
	img[18] = 62; /* EM_X86_64 */
	img[20] = 1;
	put64(img, 40, 1024); /* e_shoff */
	img[52] = 64;
	img[58] = 64;
	img[60] = 7; /* null, .text, ro, rela, note, .shstrtab, spare */
	img[62] = 5;
	memset(img + 256, 0x5a, 64);
	craft_pclntab(img + 320);
	put64(img, 320 + 24, how & GO_OWN_SEC ? 0x1000 : 0);
	put64(img, 512, GO_RO + 64 + 24); /* r_offset: textStart */
	put64(img, 520, 8);		  /* R_X86_64_RELATIVE */
	put64(img, 528, 0x1000);
	memcpy(img + 640, shstr, sizeof(shstr));
#define SH(name, type, flags, addr, off, size) \
	do {                                   \
		sh = img + 1024 + 64 * i++;    \
		put32(sh, 0, name);            \
		put32(sh, 4, type);            \
		put64(sh, 8, flags);           \
		put64(sh, 16, addr);           \
		put64(sh, 24, off);            \
		put64(sh, 32, size);           \
	} while (0)
	SH(1, SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 256, 0x80);
	if (how & GO_OWN_SEC)
		SH(57, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, GO_RO + 64, 320, 160);
	else
		SH(7, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, GO_RO, 256, 224);
	SH(20, (how & GO_RELA) ? SHT_RELA : SHT_PROGBITS, SHF_ALLOC, 0x800, 512, 24);
	SH((how & GO_NOTE) ? 30 : 63, SHT_NOTE, SHF_ALLOC, 0x400, 600, 0);
	SH(47, SHT_STRTAB, 0, 0, 640, sizeof(shstr));
#undef SH
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = fwrite(img, 1, sizeof(img), f) == sizeof(img);
	return fclose(f) || !ok ? -EIO : 0;
}

/* The names of the crafted file @how describes: 0 and main.a / main.b in
 * place, or the error of elfsym__add_embedded_fd(). */
static int go_elf_names(unsigned int how)
{
	char path[] = "/tmp/profcap-goelfXXXXXX";
	struct elfsym *e = NULL;
	const char *a, *b;
	int fd = mkstemp(path), err;

	if (fd < 0)
		return -errno;
	close(fd);
	err = write_go_elf(path, how);
	fd = err ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	unlink(path);
	if (fd < 0)
		return err ? err : -errno;
	err = elfsym__open_fd(fd, &e);
	if (!err)
		err = elfsym__add_embedded_fd(e, fd);
	close(fd);
	if (!err) {
		a = elfsym__lookup(e, 0x1010, NULL);
		b = elfsym__lookup(e, 0x1050, NULL);
		if (!a || !b || strcmp(a, "main.a") || strcmp(b, "main.b"))
			err = -EBADMSG;
	}
	elfsym__free(e);
	return err;
}

/* A table in .data.rel.ro is read for Go programs only, with the
 * relocation of its text address; one of its own is read as it is. */
TEST(go_pie_names_crafted)
{
	CHECK_EQ_U64(go_elf_names(GO_NOTE | GO_RELA), 0);
	CHECK_EQ_U64(go_elf_names(GO_RELA), (__u64)-ENOENT);
	CHECK_EQ_U64(go_elf_names(GO_NOTE), (__u64)-ENOENT);
	CHECK_EQ_U64(go_elf_names(GO_OWN_SEC), 0);
}

/* @name (a symbol of a Go program's .symtab) as its pclntab writes it:
 * without the ".abi0" of assembly functions, and an array type's length in
 * an equality function's name as "[...]". */
static void go_symtab_name(char *name, size_t size)
{
	size_t len = strlen(name);
	char *close;

	if (len > 5 && !strcmp(name + len - 5, ".abi0"))
		name[len - 5] = '\0';
	if (strncmp(name, "type..eq.[", 10) || !(close = strchr(name + 10, ']')) ||
	    13 + strlen(close) + 1 > size)
		return;
	memmove(name + 13, close, strlen(close) + 1);
	memcpy(name + 10, "...", 3);
}

/* The names a stripped Go PIE (@cgo: made by the system linker) embeds,
 * against those of the same program's .symtab: each function nm lists in
 * the unstripped build is named alike in the stripped one (the symbol table
 * adds ".abi0" to assembly functions, the pclntab does not). */
static void go_pie_names(bool cgo)
{
	char full[1300], stripped[1300], cmd[1400], line[1024], name[512];
	unsigned long same = 0, other = 0, none = 0;
	bool hot = false, main_main = false;
	struct elfsym *e = NULL;
	FILE *f;
	int fd;

	GOFIXTURE(fixture_dir, full, cgo, false, true);
	GOFIXTURE(fixture_dir, stripped, cgo, true, true);
	fd = open(stripped, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ_U64(elfsym__open_fd(fd, &e), 0);
	CHECK(!elfsym__has_symtab(e));
	CHECK_EQ_U64(elfsym__add_embedded_fd(e, fd), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", full);
	f = popen(cmd, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		const char *got;
		char type;

		if (sscanf(line, "%llx %c %511[^\n]", &addr, &type, name) != 3 ||
		    (type != 'T' && type != 't') || !strcmp(name, "runtime.text"))
			continue;
		go_symtab_name(name, sizeof(name));
		got = elfsym__lookup(e, addr, NULL);
		if (!got) {
			none++; /* C code, Go's text markers: not in the pclntab */
			continue;
		}
		if (strcmp(got, name)) {
			if (other++ < 5)
				printf("  %#llx: %s in the symbol table, %s embedded\n", addr, name,
				       got);
			continue;
		}
		same++;
		hot |= !strcmp(name, "main.hotGoWork");
		main_main |= !strcmp(name, "main.main");
	}
	pclose(f);
	elfsym__free(e);
	printf("  %s: %lu names alike, %lu other, %lu not embedded\n", stripped, same, other, none);
	CHECK(hot && main_main);
	CHECK(same > 1000);
	CHECK_EQ_U64(other, 0);
}

/* Go's own linker: the table in .data.rel.ro.gopclntab. */
TEST(go_pie_names)
{
	go_pie_names(false);
}

/* The system linker (cgo): no section of its own, inside .data.rel.ro. */
TEST(go_cgo_pie_names)
{
	go_pie_names(true);
}

TEST(debuglink_parse)
{
	char name[DEBUGLINK_MAX_NAME];
	unsigned char sec[16] = "prog.debug";
	__u32 crc = 0;

	put32(sec, 12, 0x11223344);
	CHECK_EQ_U64(debuglink__parse(sec, sizeof(sec), false, name, sizeof(name), &crc), 0);
	CHECK_STR(name, "prog.debug");
	CHECK_EQ_U64(crc, 0x11223344);
	CHECK_EQ_U64(debuglink__parse(sec, sizeof(sec), true, name, sizeof(name), &crc), 0);
	CHECK_EQ_U64(crc, 0x44332211);
	CHECK(debuglink__parse(sec, 14, false, name, sizeof(name), &crc) == -EBADMSG);
	memcpy(sec, "../x\0\0\0\0", 8);
	CHECK(debuglink__parse(sec, sizeof(sec), false, name, sizeof(name), &crc) == -EBADMSG);
	memcpy(sec, "..\0\0\0\0\0\0", 8);
	CHECK(debuglink__parse(sec, sizeof(sec), false, name, sizeof(name), &crc) == -EBADMSG);
	memset(sec, 'a', sizeof(sec));
	CHECK(debuglink__parse(sec, sizeof(sec), false, name, sizeof(name), &crc) == -EBADMSG);
}

/* "hello world" compressed by xz (CRC64). */
static const unsigned char hello_xz[] = {
	0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46, 0x02, 0x00,
	0x21, 0x01, 0x16, 0x00, 0x00, 0x00, 0x74, 0x2f, 0xe5, 0xa3, 0x01, 0x00, 0x0a, 0x68,
	0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x77, 0x6f, 0x72, 0x6c, 0x64, 0x00, 0x00, 0xda, 0x52,
	0x23, 0xef, 0xcd, 0x7e, 0x03, 0x53, 0x00, 0x01, 0x23, 0x0b, 0xc2, 0x1b, 0xfd, 0x09,
	0x1f, 0xb6, 0xf3, 0x7d, 0x01, 0x00, 0x00, 0x00, 0x00, 0x04, 0x59, 0x5a,
};

TEST(minidebug_xz)
{
	unsigned char bad[sizeof(hello_xz)];
	void *out = NULL;
	size_t len = 0;

	CHECK_EQ_U64(minidebug__decompress(hello_xz, sizeof(hello_xz), 1024, &out, &len), 0);
	CHECK_EQ_U64(len, 11);
	CHECK(!memcmp(out, "hello world", 11));
	free(out);
	CHECK(minidebug__decompress(hello_xz, sizeof(hello_xz), 4, &out, &len) == -E2BIG);
	CHECK(!out);
	CHECK(minidebug__decompress(hello_xz, sizeof(hello_xz) - 5, 1024, &out, &len) ==
	      -EBADMSG);
	memcpy(bad, hello_xz, sizeof(bad));
	bad[30] ^= 0x55; /* corrupt data: the CRC64 check fails */
	CHECK(minidebug__decompress(bad, sizeof(bad), 1024, &out, &len) == -EBADMSG);
	CHECK(minidebug__decompress("nope", 4, 1024, &out, &len) == -EBADMSG);
}

TEST(htlhash_small_file)
{
	char path[] = "/tmp/profcap-htlXXXXXX", hex[DEBUGFILE_HTLHASH_HEX];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, "abc", 3) == 3);
	CHECK_EQ_U64(debugfile__htlhash(fd, hex), 0);
	close(fd);
	unlink(path);
	/* python3: sha256(b"abc" + b"abc" + (3).to_bytes(8, "big")).hexdigest()[:32] */
	CHECK_STR(hex, "a7e79e8a85da69bad5c3fea209342ac9");
}

/* A debug directory holding, at fx_pie's build-id, @src's contents. */
static int make_build_id_dir(const char *dir, const char *bid, const char *src)
{
	char path[4096], cmd[16384];

	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, bid);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/%s.debug", path, src, path, bid + 2);
	return system(cmd);
}

TEST(debugfile_by_build_id)
{
	char dir[] = "/tmp/profcap-dbgXXXXXX", bid[ELFSYM_BUILD_ID_HEX], truth[256], cmd[8192];
	const char *dirs[1] = {dir}, *how = NULL;
	struct debugfile_query q = {0};
	int fd, bfd;

	CHECK(mkdtemp(dir));
	bfd = open(fixture_path("fx_pie"), O_RDONLY);
	CHECK(bfd >= 0);
	CHECK_EQ_U64(elfsym__read_build_id_fd(bfd, bid, sizeof(bid)), 0);
	close(bfd);
	CHECK_EQ_U64(fixtures__read_line("fx_pie", "buildid", truth, sizeof(truth)), 0);
	CHECK_STR(bid, truth);
	q.path = "/nonexistent/fx_pie";
	q.build_id = bid;
	q.dirs = dirs;
	q.ndirs = 1;
	/* Nothing there. */
	CHECK(debugfile__open(&q, &how) == -ENOENT);
	/* Another build's file at this build-id: skipped. */
	CHECK_EQ_U64(make_build_id_dir(dir, bid, fixture_path("fx_nopie")), 0);
	CHECK(debugfile__open(&q, &how) == -ENOENT);
	/* The right one. */
	CHECK_EQ_U64(make_build_id_dir(dir, bid, fixture_path("fx_pie")), 0);
	fd = debugfile__open(&q, &how);
	CHECK(fd >= 0);
	CHECK_STR(how, "build-id");
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ_U64(system(cmd), 0);
}

int main(void)
{
	fixtures__init();
	RUN(demangle_cxx);
	RUN(demangle_rust);
	RUN(demangle_caps_length);
	RUN(gopclntab_120);
	RUN(gopclntab_bad);
	RUN(go_pie_names_crafted);
	RUN(go_pie_names);
	RUN(go_cgo_pie_names);
	RUN(debuglink_parse);
	RUN(minidebug_xz);
	RUN(htlhash_small_file);
	RUN(debugfile_by_build_id);
	return TEST_DONE();
}
