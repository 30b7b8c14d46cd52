/* test_threadctx.c - the thread-context TLS offset reader (proc/threadctx)
 * against the writer workload, which prints where its variable really is,
 * and against files that must be refused. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/threadctx.h"
#include "test.h"

static char bin[4096];

/* build/tests/ from this test binary's own path. */
static void test_dir(char *dir, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", dir, size - 1);
	char *slash;

	if (n <= 0) {
		snprintf(dir, size, "build/tests");
		return;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
}

/* The writer's own view of its variable: &otel_thread_ctx_v1 - tp. */
static int real_offset(long *off)
{
	char cmd[4200];
	FILE *f;
	int ok;

	snprintf(cmd, sizeof(cmd), "%s -T", bin);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%ld", off) == 1;
	return pclose(f) == 0 && ok ? 0 : -1;
}

TEST(writer_offset)
{
	__s64 off = 0;
	long real = 1;
	int fd = open(bin, O_RDONLY);

	CHECK(fd >= 0);
	CHECK(threadctx__elf_offset(fd, &off) == 0);
	close(fd);
	CHECK(real_offset(&real) == 0);
	CHECK(off == real);
	CHECK(off < 0);
}

TEST(process_offset)
{
	struct threadctx_loc loc;

	/* This test program has no such variable. */
	CHECK(threadctx__process_locate(NULL, (int)getpid(), true, NULL, NULL, &loc) == -ENOENT);
	CHECK(threadctx__process_locate(NULL, 0x7ffffff0, true, NULL, NULL, &loc) == -ENOENT);
}

/* With a snapshot, an executable known not to hold the variable is not
 * opened again: a fake /proc whose PID/exe is first this test program (no
 * variable: remembered by the device and inode its mapping names), then a
 * file that is not ELF, which only an open would notice. */
TEST(process_snapshot_skips_known_exe)
{
	static const char maps[] = "00400000-00401000 r-xp 00000000 08:01 4242 /opt/app/bin/x\n";
	char root[] = "/tmp/profcap-tctx-XXXXXX", dir[4200], exe[4300], self[4096];
	struct threadctx_files *seen = threadctx_files__new();
	struct procsnap snap = {.pid = 77, .exe = "/opt/app/bin/x (deleted)"};
	struct threadctx_loc loc;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *f;

	CHECK(seen && n > 0 && mkdtemp(root));
	self[n] = '\0';
	CHECK(procmaps__parse(maps, sizeof(maps) - 1, &snap.maps) == 0);
	snprintf(dir, sizeof(dir), "%s/77", root);
	snprintf(exe, sizeof(exe), "%s/exe", dir);
	CHECK(mkdir(dir, 0700) == 0);
	CHECK(symlink(self, exe) == 0);
	CHECK(threadctx__process_locate(root, 77, false, &snap, seen, &loc) == -ENOENT);
	CHECK(unlink(exe) == 0);
	f = fopen(exe, "w");
	CHECK(f != NULL);
	fputs("not an ELF file, long enough to hold an ELF header's worth of bytes\n", f);
	fclose(f);
	/* opened (no snapshot, or a snapshot of another process): refused */
	CHECK(threadctx__process_locate(root, 77, false, NULL, seen, &loc) != -ENOENT);
	snap.pid = 78;
	CHECK(threadctx__process_locate(root, 77, false, &snap, seen, &loc) != -ENOENT);
	/* known by its mapping: not opened */
	snap.pid = 77;
	CHECK(threadctx__process_locate(root, 77, false, &snap, seen, &loc) == -ENOENT);
	unlink(exe);
	rmdir(dir);
	rmdir(root);
	procmaps__free(snap.maps);
	threadctx_files__free(seen);
}

/* The SDK-like library in both dialects: the symbol and the relocation
 * its own code uses (TLSDESC or DTPMOD64), none for the other kinds. */
static char libdir[4096];

static int lib_module(const char *name, struct threadctx_module *m)
{
	char path[4200];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", libdir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	err = threadctx__elf_module(fd, m);
	close(fd);
	return err;
}

TEST(library_relocations)
{
	struct threadctx_module m;

	CHECK(lib_module("libotelctx_desc.so", &m) == 0);
	CHECK(m.desc_got != 0 && m.mod_got == 0 && m.tpoff_got == 0);
	CHECK(m.desc_addend == 0 && m.load_base == 0);
	CHECK(lib_module("libotelctx_gd.so", &m) == 0);
	CHECK(m.mod_got != 0 && m.desc_got == 0);
	/* a library without it */
	CHECK(lib_module("libnofp.so", &m) == -ENOENT);
}

/* Fake process memory for threadctx__module_locate(): a few words at
 * fixed addresses; anything else fails to read, as unmapped memory does. */
struct fake_mem {
	__u64 addr[4];
	__u64 word[4][2];
	unsigned n;
};

static int fake_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct fake_mem *f = ctx;
	unsigned i;

	for (i = 0; i < f->n; i++)
		if (f->addr[i] == addr && len <= 16) {
			memcpy(buf, f->word[i], len);
			return 0;
		}
	return -EFAULT;
}

/* Every GOT shape a loader leaves, and what a reader must not believe. */
TEST(got_words)
{
	struct threadctx_module m = {.value = 0x10, .desc_got = 0x4000};
	struct fake_mem f = {.n = 2, .addr = {0x7000004000ull, 0x55000000}};
	struct threadctx_loc loc;

	/* TLSDESC, static TLS: the argument is the offset from tp */
	f.word[0][0] = 0x7000001234ull;
	f.word[0][1] = (__u64)-152;
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == 0);
	CHECK(loc.off == -152 && loc.modid == 0);
	/* TLSDESC, dynamic: the argument points at {module id, offset} */
	f.word[0][1] = 0x55000000;
	f.word[1][0] = 3;
	f.word[1][1] = 0x10;
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == 0);
	CHECK(loc.off == 0x10 && loc.modid == 3);
	/* ... whose offset is not the symbol's: not a resolved descriptor */
	f.word[1][1] = 0x18;
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == -EAGAIN);
	f.word[1][1] = 0x10;
	f.word[1][0] = THREADCTX_MAX_MODID + 1; /* an absurd module id */
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == -EAGAIN);
	f.word[0][1] = 0x66000000; /* points at unreadable memory */
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == -EAGAIN);
	f.word[0][1] = (__u64)-(2ll << 30); /* an offset too far to be TLS */
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == -EAGAIN);
	/* general dynamic: the module id, the symbol's own offset */
	m.desc_got = 0;
	m.mod_got = 0x3fc0;
	f.addr[0] = 0x7000003fc0ull;
	f.word[0][0] = 2;
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == 0);
	CHECK(loc.off == 0x10 && loc.modid == 2);
	f.word[0][0] = 0; /* not relocated (yet) */
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == -EAGAIN);
	/* initial-exec in a library: the GOT holds the offset from tp */
	m.mod_got = 0;
	m.tpoff_got = 0x3fc0;
	f.word[0][0] = (__u64)-64;
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == 0);
	CHECK(loc.off == -64 && loc.modid == 0);
	/* no relocation at all */
	m.tpoff_got = 0;
	CHECK(threadctx__module_locate(&m, 0x7000000000ull, fake_read, &f, &loc) == -ENOENT);
}

/* Truncated copies of the writer and garbage: refused, never read past. */
TEST(malformed)
{
	char path[] = "/tmp/test_threadctx.XXXXXX";
	static char buf[1 << 16];
	__s64 off;
	int in = open(bin, O_RDONLY), fd = mkstemp(path), rc;
	ssize_t n = in >= 0 ? read(in, buf, sizeof(buf)) : -1;
	size_t cut;

	CHECK(in >= 0 && fd >= 0 && n > 0x200);
	close(in);
	for (cut = 0; cut < 0x200; cut += 7) {
		CHECK(ftruncate(fd, 0) == 0);
		CHECK(pwrite(fd, buf, cut, 0) == (ssize_t)cut);
		rc = threadctx__elf_offset(fd, &off);
		CHECK(rc == -ENOEXEC || rc == -ENOENT);
	}
	/* Whole: found; one byte short, the section headers (last in the
	 * file) end past it. */
	CHECK(n < (ssize_t)sizeof(buf));
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, buf, (size_t)n, 0) == n);
	CHECK(threadctx__elf_offset(fd, &off) == 0);
	CHECK(ftruncate(fd, n - 1) == 0);
	CHECK(threadctx__elf_offset(fd, &off) == -ENOEXEC);
	memset(buf, 0xa5, 256);
	CHECK(pwrite(fd, buf, 256, 0) == 256);
	CHECK(threadctx__elf_offset(fd, &off) == -ENOEXEC);
	close(fd);
	unlink(path);
}

/* attrs-data decoding (OTEP 4947): entries, unknown key indexes, the last
 * occurrence winning, and every malformed shape stopping cleanly. */
TEST(attrs)
{
	static const unsigned char ok[] = {0, 3, '/', 'a', 'b', 1, 3, 'G', 'E', 'T',
					   9, 1, 'x', 0, 2, '/', 'c', 2, 0};
	static const unsigned char cut_head[] = {0, 1, 'a', 1};
	static const unsigned char cut_val[] = {0, 1, 'a', 1, 5, 'P', 'O'};
	static const unsigned char bad_utf8[] = {0, 1, 'a', 1, 2, 0xc3, 0x28, 0, 1, 'z'};
	static const unsigned char nul[] = {0, 2, 'a', 0};
	unsigned char many[64];
	struct threadctx_attrs a;
	size_t n = 0;

	threadctx__decode_attrs(ok, sizeof(ok), 3, &a);
	CHECK(!a.malformed);
	CHECK_EQ_U64(a.n, 3);
	CHECK_EQ_U64(a.unknown, 1); /* key 9 */
	CHECK(a.attr[0].key == 0 && a.attr[0].len == 2 && !memcmp(a.attr[0].value, "/c", 2));
	CHECK(a.attr[1].key == 1 && a.attr[1].len == 3 && !memcmp(a.attr[1].value, "GET", 3));
	CHECK(a.attr[2].key == 2 && a.attr[2].len == 0);
	/* No key map: every entry is unknown, none kept. */
	threadctx__decode_attrs(ok, sizeof(ok), 0, &a);
	CHECK(a.n == 0 && a.unknown == 5 && !a.malformed);
	threadctx__decode_attrs(cut_head, sizeof(cut_head), 3, &a);
	CHECK(a.n == 1 && a.malformed);
	threadctx__decode_attrs(cut_val, sizeof(cut_val), 3, &a);
	CHECK(a.n == 1 && a.malformed);
	threadctx__decode_attrs(bad_utf8, sizeof(bad_utf8), 3, &a);
	CHECK(a.n == 1 && a.malformed);
	threadctx__decode_attrs(nul, sizeof(nul), 3, &a);
	CHECK(a.n == 0 && a.malformed);
	threadctx__decode_attrs(NULL, 10, 3, &a);
	CHECK(a.n == 0 && !a.malformed);
	for (int k = 0; k < THREADCTX_MAX_ATTRS + 2; k++) {
		many[n++] = (unsigned char)k;
		many[n++] = 1;
		many[n++] = (unsigned char)('a' + k);
	}
	threadctx__decode_attrs(many, n, 255, &a);
	CHECK(a.n == THREADCTX_MAX_ATTRS && a.overflow == 2 && !a.malformed);
}

/* A dynamic symbol table of thousands of entries, read in chunks: the
 * variable past the first chunks is found; TLS decoys before it (another
 * name, the name as a prefix, a name cut by the end of the strings) are
 * not; a table without it is -ENOENT. */
static int write_many_syms(int fd, size_t nsyms, size_t at)
{
	static const char strs[] =
		"\0otel_thread_ctx_v0\0otel_thread_ctx_v1x\0" THREADCTX_SYMBOL "\0otel_thread_ctx";
	const size_t off_v0 = 1, off_v1x = 20, off_real = 40,
		     off_cut = 40 + sizeof(THREADCTX_SYMBOL);
	Elf64_Ehdr eh = {0};
	Elf64_Phdr tls = {0};
	Elf64_Shdr sh[3] = {{0}};
	Elf64_Sym y = {0};
	size_t i, symoff = 0x1000, stroff = symoff + nsyms * sizeof(Elf64_Sym);
	__u64 shoff = (stroff + sizeof(strs) + 7) & ~7ull;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 1;
	eh.e_shoff = shoff;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	tls.p_type = PT_TLS;
	tls.p_memsz = 0x100;
	tls.p_align = 16;
	sh[1].sh_type = SHT_DYNSYM;
	sh[1].sh_offset = symoff;
	sh[1].sh_size = nsyms * sizeof(Elf64_Sym);
	sh[1].sh_entsize = sizeof(Elf64_Sym);
	sh[1].sh_link = 2;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = stroff;
	sh[2].sh_size = sizeof(strs) - 1; /* "otel_thread_ctx" ends the section, no NUL */
	if (pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    pwrite(fd, &tls, sizeof(tls), sizeof(eh)) != sizeof(tls) ||
	    pwrite(fd, strs, sizeof(strs), (off_t)stroff) != sizeof(strs) ||
	    pwrite(fd, sh, sizeof(sh), (off_t)shoff) != sizeof(sh))
		return -1;
	for (i = 0; i < nsyms; i++) {
		y.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_TLS);
		y.st_shndx = 1;
		y.st_value = 0x10 + (i & 0x7f);
		y.st_name = (Elf64_Word)(i % 3 == 0 ? off_v0 : i % 3 == 1 ? off_v1x : off_cut);
		if (i == at) {
			y.st_name = (Elf64_Word)off_real;
			y.st_value = 0x48;
		} else if (i + 1 == at) {
			y.st_name = (Elf64_Word)off_real;
			y.st_shndx = SHN_UNDEF; /* an import of it: not the definition */
		} else if (i + 2 == at) {
			y.st_name = (Elf64_Word)off_real;
			y.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
		}
		if (pwrite(fd, &y, sizeof(y), (off_t)(symoff + i * sizeof(y))) != sizeof(y))
			return -1;
	}
	return 0;
}

TEST(symbol_past_first_chunks)
{
	char path[] = "/tmp/test_threadctx.XXXXXX";
	struct threadctx_module m;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write_many_syms(fd, 5000, 3333) == 0);
	CHECK(threadctx__elf_module(fd, &m) == 0);
	CHECK(m.value == 0x48);
	/* variant II: the 0x100-byte block ends at the thread pointer */
	CHECK(m.exe_off == 0x48 - 0x100);
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(write_many_syms(fd, 5000, 9999) == 0);
	CHECK(threadctx__elf_module(fd, &m) == -ENOENT);
	/* the last entry of a table that is not a whole number of chunks */
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(write_many_syms(fd, 2 * 1024 + 3, 2 * 1024 + 2) == 0);
	CHECK(threadctx__elf_module(fd, &m) == 0 && m.value == 0x48);
	close(fd);
	unlink(path);
}

int main(void)
{
	char dir[4000];

	test_dir(dir, sizeof(dir));
	snprintf(bin, sizeof(bin), "%s/workloads/threadctx_writer", dir);
	snprintf(libdir, sizeof(libdir), "%s/workloads", dir);
	if (access(bin, X_OK))
		return SKIP_ALL("%s missing (run make)", bin);
	RUN(writer_offset);
	RUN(process_offset);
	RUN(process_snapshot_skips_known_exe);
	RUN(library_relocations);
	RUN(got_words);
	RUN(malformed);
	RUN(attrs);
	RUN(symbol_past_first_chunks);
	return TEST_DONE();
}
