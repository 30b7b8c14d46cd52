/* test_elfsym.c - ELF symbol lookup, build-id and address conversion on the
 * fixture binaries of fixtures.mk, checked against nm/readelf output. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/elfsym.h"
#include "proc/procmaps.h"
#include "fixtures.h"
#include "test.h"

#define MAX_NM 4096

struct nm_sym {
	unsigned long long addr, size;
	char type;
	char name[128];
};

static struct nm_sym nm[MAX_NM];
static size_t nnm;

static void fixture_path(char *dst, size_t size, const char *name)
{
	snprintf(dst, size, "%s/%s", fixture_dir, name);
}

/* Load `nm -S` output of fixture @bin into nm[]. */
static int load_nm(const char *bin)
{
	char path[4200], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.nm", fixture_dir, bin);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	nnm = 0;
	while (fgets(line, sizeof(line), f) && nnm < MAX_NM) {
		struct nm_sym *s = &nm[nnm];

		if (sscanf(line, "%llx %llx %c %127s", &s->addr, &s->size, &s->type, s->name) ==
		    4) {
			nnm++;
		} else if (sscanf(line, "%llx %c %127s", &s->addr, &s->type, s->name) == 3) {
			s->size = 0;
			nnm++;
		}
	}
	fclose(f);
	return 0;
}

static const struct nm_sym *nm_find(const char *name)
{
	size_t i;

	for (i = 0; i < nnm; i++)
		if (!strcmp(nm[i].name, name))
			return &nm[i];
	return NULL;
}

/* True if some nm symbol called @name sits at @addr (aliases allowed). */
static int nm_has(const char *name, unsigned long long addr)
{
	size_t i;

	for (i = 0; name && i < nnm; i++)
		if (nm[i].addr == addr && !strcmp(nm[i].name, name))
			return 1;
	return 0;
}

/* File offset and vaddr of the executable PT_LOAD from readelf -lW output. */
static int exec_segment(const char *bin, unsigned long long *off, unsigned long long *vaddr)
{
	char path[4200], line[512], flags[16];
	unsigned long long o, v, p, fs, ms;
	FILE *f;
	int found = -ENOENT;

	snprintf(path, sizeof(path), "%s/%s.load", fixture_dir, bin);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *e = strstr(line, " E ");

		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx %15s", &o, &v, &p, &fs, &ms,
			   flags) == 6 &&
		    e) {
			*off = o;
			*vaddr = v;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static struct elfsym *open_fixture(const char *bin)
{
	struct elfsym *e = NULL;
	char path[4200];
	int fd;

	fixture_path(path, sizeof(path), bin);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (elfsym__open_fd(fd, &e))
		e = NULL;
	close(fd);
	return e;
}

static void check_named(const struct elfsym *e, const char *name, int *failed)
{
	const struct nm_sym *s = nm_find(name);
	__u64 start = 0;

	if (!s) {
		printf("  %s missing from nm output\n", name);
		*failed = 1;
		return;
	}
	if (!elfsym__lookup(e, s->addr, &start) || strcmp(elfsym__lookup(e, s->addr, NULL), name) ||
	    start != s->addr) {
		printf("  lookup(%llx) != %s\n", s->addr, name);
		*failed = 1;
	}
	if (s->size && (!elfsym__lookup(e, s->addr + s->size - 1, NULL) ||
			strcmp(elfsym__lookup(e, s->addr + s->size - 1, NULL), name))) {
		printf("  lookup(%llx + size - 1) != %s\n", s->addr, name);
		*failed = 1;
	}
}

TEST(pie_symbols_match_nm)
{
	struct elfsym *e = open_fixture("fx_pie");
	const struct nm_sym *a;
	int failed = 0;
	size_t i, nfunc = 0;

	CHECK(e);
	CHECK(!load_nm("fx_pie"));
	check_named(e, "fx_alpha", &failed);
	check_named(e, "fx_beta", &failed);
	check_named(e, "fx_gamma", &failed);
	check_named(e, "main", &failed);
	CHECK(!failed);
	/* Every text symbol nm lists resolves to itself or an alias. */
	for (i = 0; i < nnm; i++) {
		if (nm[i].type != 'T' && nm[i].type != 't')
			continue;
		if (!strcmp(nm[i].name, "fx_gamma_label"))
			continue; /* a label inside fx_gamma: below */
		nfunc++;
		if (!nm_has(elfsym__lookup(e, nm[i].addr, NULL), nm[i].addr)) {
			printf("  %s at %llx -> %s\n", nm[i].name, nm[i].addr,
			       elfsym__lookup(e, nm[i].addr, NULL));
			failed = 1;
		}
	}
	CHECK(!failed);
	CHECK(nfunc >= 5);
	CHECK(elfsym__symbol_count(e) >= 5);
	/* A size-0 symbol extends to the next one. */
	a = nm_find("fx_asm_nosize");
	if (a) {
		CHECK_STR(elfsym__lookup(e, a->addr, NULL), "fx_asm_nosize");
		CHECK_STR(elfsym__lookup(e, a->addr + 2, NULL), "fx_asm_nosize");
	}
	/* An untyped label outside functions names its code (ld.so's
	 * _start); one inside a function does not cut it. */
	a = nm_find("fx_asm_label");
	if (a) {
		CHECK_STR(elfsym__lookup(e, a->addr, NULL), "fx_asm_label");
		CHECK_STR(elfsym__lookup(e, a->addr + 1, NULL), "fx_asm_label");
	}
	a = nm_find("fx_gamma_label");
	if (a)
		CHECK_STR(elfsym__lookup(e, a->addr, NULL), "fx_gamma");
	CHECK(nm_find("fx_asm_label") != NULL);
	/* Below every function: nothing. */
	CHECK(!elfsym__lookup(e, 0x10, NULL));
	CHECK(!elfsym__truncated(e));
	elfsym__free(e);
}

TEST(build_ids_match_readelf)
{
	static const char *const bins[] = {"fx_pie", "fx_nopie", "libfx.so", "fx_stripped"};
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		struct elfsym *e = open_fixture(bins[i]);
		char hex[ELFSYM_BUILD_ID_HEX];
		char path[4200];
		int fd;

		CHECK(e);
		CHECK(!fixtures__read_line(bins[i], "buildid", want, sizeof(want)));
		CHECK(strlen(want) == 40);
		CHECK_STR(elfsym__build_id(e), want);
		elfsym__free(e);
		fixture_path(path, sizeof(path), bins[i]);
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0);
		CHECK(!elfsym__read_build_id_fd(fd, hex, sizeof(hex)));
		close(fd);
		CHECK_STR(hex, want);
	}
}

/* Symbolize @bin's function @name as if mapped at @bias, through a synthetic
 * maps line for its executable segment. */
static const char *resolve_with_bias(struct elfsym *e, const char *bin, const char *name,
				     __u64 bias, unsigned long long *runtime)
{
	unsigned long long off, vaddr;
	const struct procmaps_entry *me;
	struct procmaps *m = NULL;
	const struct nm_sym *s;
	const char *res = NULL;
	char maps[256];
	__u64 start, va;
	int n;

	if (load_nm(bin) || exec_segment(bin, &off, &vaddr))
		return NULL;
	s = nm_find(name);
	if (!s)
		return NULL;
	start = bias + (vaddr & ~0xfffull);
	n = snprintf(maps, sizeof(maps), "%llx-%llx r-xp %08llx fd:01 1234 /x/%s\n",
		     (unsigned long long)start, (unsigned long long)start + 0x10000,
		     off & ~0xfffull, bin);
	if (procmaps__parse(maps, (size_t)n, &m))
		return NULL;
	*runtime = bias + s->addr;
	me = procmaps__find(m, *runtime);
	if (me && !elfsym__offset_to_vaddr(e, *runtime - me->start + me->offset, &va))
		res = elfsym__lookup(e, va, NULL);
	procmaps__free(m);
	return res;
}

TEST(pie_with_load_bias)
{
	struct elfsym *e = open_fixture("fx_pie");
	unsigned long long rt;

	CHECK(e);
	CHECK_STR(resolve_with_bias(e, "fx_pie", "fx_alpha", 0x555555554000ull, &rt), "fx_alpha");
	CHECK_STR(resolve_with_bias(e, "fx_pie", "fx_gamma", 0x555555554000ull, &rt), "fx_gamma");
	CHECK_STR(resolve_with_bias(e, "fx_pie", "main", 0x7ff000000000ull, &rt), "main");
	elfsym__free(e);
}

TEST(nopie_fixed_addresses)
{
	struct elfsym *e = open_fixture("fx_nopie");
	const struct nm_sym *s;
	unsigned long long rt;
	__u64 va;

	CHECK(e);
	CHECK_STR(resolve_with_bias(e, "fx_nopie", "fx_beta", 0, &rt), "fx_beta");
	s = nm_find("fx_beta");
	CHECK(s);
	CHECK(s->addr >= 0x400000); /* really a fixed-address executable */
	CHECK_EQ_U64(rt, s->addr);
	/* A file offset outside every PT_LOAD does not convert. */
	CHECK(elfsym__offset_to_vaddr(e, 1ull << 40, &va) == -ENOENT);
	elfsym__free(e);
}

TEST(shared_library)
{
	struct elfsym *e = open_fixture("libfx.so");
	unsigned long long rt;

	CHECK(e);
	CHECK_STR(resolve_with_bias(e, "libfx.so", "fx_lib_func", 0x7f1234560000ull, &rt),
		  "fx_lib_func");
	CHECK_STR(resolve_with_bias(e, "libfx.so", "fx_lib_local", 0x7f1234560000ull, &rt),
		  "fx_lib_local");
	elfsym__free(e);
}

TEST(stripped_uses_dynsym)
{
	struct elfsym *e = open_fixture("fx_stripped");
	const char *name;
	unsigned long long rt;

	CHECK(e);
	CHECK(elfsym__symbol_count(e) > 0);
	CHECK_STR(resolve_with_bias(e, "fx_stripped", "fx_alpha", 0x560000000000ull, &rt),
		  "fx_alpha");
	CHECK_STR(resolve_with_bias(e, "fx_stripped", "fx_beta", 0x560000000000ull, &rt),
		  "fx_beta");
	/* Static functions are not in .dynsym; they never get their own name. */
	CHECK(!load_nm("fx_pie"));
	name = elfsym__lookup(e, nm_find("fx_gamma")->addr, NULL);
	CHECK(!name || strcmp(name, "fx_gamma"));
	/* The binary really has no .symtab: the nm truth came from .dynsym. */
	CHECK(!load_nm("fx_stripped"));
	CHECK(!nm_find("fx_gamma"));
	elfsym__free(e);
}

static char *read_whole(const char *path, size_t *len)
{
	struct stat st;
	char *data;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(data = malloc((size_t)st.st_size))) {
		close(fd);
		return NULL;
	}
	*len = (size_t)read(fd, data, (size_t)st.st_size);
	close(fd);
	return data;
}

TEST(garbage_and_truncated_files)
{
	static const char junk[] = "this is not an ELF file at all, just text\n";
	struct elfsym *e = NULL;
	char path[4200], tmpl[] = "/tmp/profcap-elfsym-XXXXXX";
	size_t len = 0, cut;
	char *img;
	int fd;

	CHECK(elfsym__open_mem(junk, sizeof(junk), &e) == -ENOEXEC);
	CHECK(!e);
	CHECK(elfsym__open_mem(junk, 0, &e) == -ENOEXEC);
	fd = mkstemp(tmpl);
	CHECK(fd >= 0);
	unlink(tmpl);
	CHECK(elfsym__open_fd(fd, &e) < 0); /* empty file */
	CHECK(write(fd, junk, sizeof(junk)) == sizeof(junk));
	CHECK(elfsym__open_fd(fd, &e) < 0);
	close(fd);
	CHECK(elfsym__open_fd(-1, &e) < 0);
	/* Prefixes of a real ELF: errors or partial results, never a crash. */
	fixture_path(path, sizeof(path), "fx_pie");
	img = read_whole(path, &len);
	CHECK(img && len > 4096);
	for (cut = 0; cut < len; cut += cut < 256 ? 7 : 997) {
		if (!elfsym__open_mem(img, cut, &e)) {
			elfsym__lookup(e, 0x1100, NULL);
			elfsym__free(e);
		}
		e = NULL;
	}
	free(img);
}

TEST(mutated_elf_never_crashes)
{
	unsigned int seed = 12345;
	char path[4200];
	size_t len = 0, i, j;
	char *img, *copy;
	int ok = 0;

	fixture_path(path, sizeof(path), "libfx.so");
	img = read_whole(path, &len);
	CHECK(img && len > 1024);
	copy = malloc(len);
	CHECK(copy);
	for (i = 0; i < 400; i++) {
		struct elfsym *e = NULL;

		memcpy(copy, img, len);
		for (j = 0; j < 1 + i % 8; j++) {
			size_t pos;

			seed = seed * 1103515245u + 12345u;
			/* Hit the headers often, anywhere sometimes. */
			pos = (seed >> 8) % (j & 1 ? len : 64 + (len > 4096 ? 4096 : len) / 2);
			seed = seed * 1103515245u + 12345u;
			copy[pos] = (char)(seed >> 16);
		}
		if (!elfsym__open_mem(copy, len, &e)) {
			ok++;
			elfsym__lookup(e, 0x1109, NULL);
			elfsym__free(e);
		}
	}
	free(copy);
	free(img);
	CHECK(ok > 0);
}

TEST(raw_notes)
{
	unsigned char notes[64] = {0};
	__u32 hdr[3] = {4, 4, 3};
	__u32 other[3] = {6, 2, 1};
	char hex[ELFSYM_BUILD_ID_HEX];

	/* An unrelated note first, then the build-id. */
	memcpy(notes, other, 12);
	memcpy(notes + 12, "Linux\0\0\0", 8);
	memcpy(notes + 20, "\x01\x02\0\0", 4);
	memcpy(notes + 24, hdr, 12);
	memcpy(notes + 36, "GNU\0", 4);
	memcpy(notes + 40, "\xde\xad\xbe\xef", 4);
	CHECK(!elfsym__note_build_id(notes, 44, hex, sizeof(hex)));
	CHECK_STR(hex, "deadbeef");
	CHECK(elfsym__note_build_id(notes, 43, hex, sizeof(hex)) == -ENOENT);
	CHECK(elfsym__note_build_id(notes, 24, hex, sizeof(hex)) == -ENOENT);
	CHECK(elfsym__note_build_id(notes, 5, hex, sizeof(hex)) == -ENOENT);
	hdr[0] = 0xfffffff0u; /* absurd name size */
	memcpy(notes + 24, hdr, 12);
	CHECK(elfsym__note_build_id(notes, 44, hex, sizeof(hex)) == -ENOENT);
}

TEST(self_vdso)
{
	struct elfsym *e = NULL;
	int err = elfsym__open_self_vdso(&e);

	if (err == -ENOENT) {
		SKIP("no vdso on this system");
	}
	CHECK(!err);
	CHECK(elfsym__symbol_count(e) > 0);
#if defined(__x86_64__)
	CHECK(elfsym__build_id(e) != NULL);
#endif
	elfsym__free(e);
}

int main(void)
{
	fixtures__init();
	RUN(pie_symbols_match_nm);
	RUN(build_ids_match_readelf);
	RUN(pie_with_load_bias);
	RUN(nopie_fixed_addresses);
	RUN(shared_library);
	RUN(stripped_uses_dynsym);
	RUN(garbage_and_truncated_files);
	RUN(mutated_elf_never_crashes);
	RUN(raw_notes);
	RUN(self_vdso);
	elfsym__free(NULL);
	return TEST_DONE();
}
