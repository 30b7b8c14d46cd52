/* test_elfsym.c - ELF symbol lookup, build-id and address conversion on the
 * fixture binaries of fixtures.mk, checked against nm/readelf output. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

/* The PLT stubs objdump names in @path ("puts@plt" at 0x1040) into @out
 * (at most @cap); returns how many, or -1 when objdump cannot run. */
static int objdump_plt(const char *path, struct nm_sym *out, size_t cap)
{
	char cmd[4300], line[512], name[128];
	unsigned long long addr;
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < cap) {
		size_t len;

		if (sscanf(line, "%llx <%127[^>]>:", &addr, name) != 2)
			continue;
		len = strlen(name);
		if (len < 5 || strcmp(name + len - 4, "@plt"))
			continue; /* the lazy-binding header: "x@plt-0x10" */
		out[n].addr = addr;
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		n++;
	}
	return pclose(f) == 0 ? (int)n : -1;
}

/* PLT stubs read as perf and objdump name them: "puts@plt", not the
 * file's offset; in the executables (.plt, .plt.got) and the library. */
TEST(plt_stubs_named_as_objdump)
{
	static const char *const bins[] = {"fx_pie", "fx_nopie", "libfx.so", "fx_stripped"};
	static struct nm_sym want[512];
	size_t b, total = 0;
	int i, n;

	for (b = 0; b < sizeof(bins) / sizeof(bins[0]); b++) {
		struct elfsym *e = open_fixture(bins[b]);
		char path[4200];

		CHECK(e);
		if (!e)
			continue;
		fixture_path(path, sizeof(path), bins[b]);
		n = objdump_plt(path, want, 512);
		if (n < 0) {
			elfsym__free(e);
			SKIP("objdump (binutils) cannot run");
		}
		for (i = 0; i < n; i++) {
			__u64 start = 0;
			const char *got = elfsym__lookup(e, want[i].addr + 4, &start);

			if (!got || strcmp(got, want[i].name) || start != want[i].addr) {
				printf("  %s: %s at %llx -> %s\n", bins[b], want[i].name,
				       want[i].addr, got ? got : "(none)");
				CHECK(0);
			}
		}
		total += (size_t)n;
		elfsym__free(e);
	}
	/* puts, printf, the fixture library's functions, __cxa_finalize in .plt.got */
	CHECK(total >= 8);
}

/* A C++ function's stub: demangled, "@plt" kept. */
TEST(plt_stub_demangled)
{
	static const char lib[] = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	static struct nm_sym want[4096];
	struct elfsym *e = NULL;
	const char *sys = NULL, *got;
	int i, n, fd;

	fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP("%s is not installed", lib);
	CHECK(!elfsym__open_fd(fd, &e));
	close(fd);
	n = objdump_plt(lib, want, 4096);
	if (!e || n < 0) {
		elfsym__free(e);
		SKIP("objdump (binutils) cannot run");
	}
	for (i = 0; i < n && strncmp(want[i].name, "_Z", 2); i++)
		;
	CHECK(i < n);
	if (i < n) {
		got = elfsym__lookup_demangled(e, want[i].addr, &sys);
		CHECK(got && strncmp(got, "_Z", 2) && strstr(got, "::"));
		CHECK(got && strlen(got) > 4 && !strcmp(got + strlen(got) - 4, "@plt"));
		CHECK(sys && !strcmp(sys, want[i].name));
	}
	elfsym__free(e);
}

/* libc calls its own ifuncs (memcpy, strlen, ...) through PLT stubs whose
 * slots an IRELATIVE relocation fills: objdump says "*ABS*+0xRESOLVER@plt";
 * they read as the ifunc's name, as perf names them. */
TEST(plt_ifunc_stubs_named_after_resolver)
{
	static const char lib[] = "/lib/x86_64-linux-gnu/libc.so.6";
	static struct nm_sym want[4096];
	struct elfsym *e = NULL;
	int i, n, fd, seen = 0;

	fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP("%s is not here", lib);
	CHECK(!elfsym__open_fd(fd, &e));
	close(fd);
	n = objdump_plt(lib, want, 4096);
	if (!e || n < 0) {
		elfsym__free(e);
		SKIP("objdump (binutils) cannot run");
	}
	for (i = 0; i < n; i++) {
		unsigned long long resolver;
		char expect[160];
		const char *fn;

		if (sscanf(want[i].name, "*ABS*+0x%llx@plt", &resolver) != 1)
			continue;
		fn = elfsym__lookup(e, resolver, NULL);
		CHECK(fn);
		if (!fn)
			continue;
		snprintf(expect, sizeof(expect), "%s@plt", fn);
		CHECK_STR(elfsym__lookup(e, want[i].addr + 4, NULL), expect);
		seen++;
	}
	if (!seen) {
		elfsym__free(e);
		SKIP("this libc has no ifunc stubs");
	}
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

/* e_entry of the fixture @bin, 0 when unreadable. */
static __u64 fixture_entry(const char *bin)
{
	Elf64_Ehdr eh;
	char path[4200];
	int fd;
	ssize_t n;

	fixture_path(path, sizeof(path), bin);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, &eh, sizeof(eh), 0);
	close(fd);
	return n == (ssize_t)sizeof(eh) ? eh.e_entry : 0;
}

/* A stripped executable's entry code (no _start in .dynsym) is named
 * _start, for the bytes of glibc's _start only; a shared library's entry
 * (none, or code run only when it runs as a program) is not. */
TEST(stripped_entry_named_start)
{
	struct elfsym *e = open_fixture("fx_bare"), *lib = open_fixture("libfx.so");
	__u64 entry = fixture_entry("fx_bare"), at = 0;
	const char *name;

	CHECK(e && lib && entry);
	CHECK_STR(elfsym__lookup(e, entry, &at), "_start");
	CHECK(at == entry);
	/* the return address of the call to __libc_start_main (+0x21, or
	 * +0x25 after an endbr64) */
	CHECK_STR(elfsym__lookup(e, entry + 0x21, NULL), "_start");
	name = elfsym__lookup(e, entry + 64, NULL);
	CHECK(!name || strcmp(name, "_start"));
	name = elfsym__lookup(e, entry - 1, NULL);
	CHECK(!name || strcmp(name, "_start"));
	/* the real symbol where there is one: the unstripped build's */
	elfsym__free(e);
	e = open_fixture("fx_pie");
	CHECK(e);
	CHECK_STR(elfsym__lookup(e, fixture_entry("fx_pie"), NULL), "_start");
	name = elfsym__lookup(lib, fixture_entry("libfx.so"), NULL);
	CHECK(!name || strcmp(name, "_start"));
	elfsym__free(lib);
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
	char *img, *copy, tmpl[] = "/tmp/profcap-elfsym-XXXXXX";
	int ok = 0, okfd = 0, fd;

	fixture_path(path, sizeof(path), "libfx.so");
	img = read_whole(path, &len);
	CHECK(img && len > 1024);
	copy = malloc(len);
	CHECK(copy);
	fd = mkstemp(tmpl);
	CHECK(fd >= 0);
	unlink(tmpl);
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
		e = NULL;
		/* the same bytes as a file: the direct read of its tables */
		if (!ftruncate(fd, 0) && pwrite(fd, copy, len, 0) == (ssize_t)len &&
		    !elfsym__open_fd(fd, &e)) {
			okfd++;
			elfsym__lookup(e, 0x1109, NULL);
			elfsym__free(e);
		}
	}
	close(fd);
	CHECK(okfd > 0);
	free(copy);
	free(img);
	CHECK(ok > 0);
}

/* Every lookup over the loaded range of @path (step @step bytes of file
 * offset) agrees between the file read directly (elfsym__open_fd: string
 * table whole, entries by pread) and libelf's reading of the same image in
 * memory (elfsym__open_mem). 0 when the file is absent. */
static int compare_paths(const char *path, size_t step, int *failed)
{
	struct elfsym *a = NULL, *b = NULL;
	size_t len = 0, off, checked = 0;
	int bad = 0;
	char *img = read_whole(path, &len);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!img || fd < 0) {
		free(img);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (elfsym__open_fd(fd, &a) || elfsym__open_mem(img, len, &b)) {
		printf("  %s: not parsed both ways\n", path);
		*failed = 1;
		goto out;
	}
	if (elfsym__symbol_count(a) != elfsym__symbol_count(b) ||
	    elfsym__truncated(a) != elfsym__truncated(b)) {
		printf("  %s: %zu symbols read directly, %zu through libelf\n", path,
		       elfsym__symbol_count(a), elfsym__symbol_count(b));
		*failed = 1;
	}
	for (off = 0; off < len && !bad; off += step) {
		__u64 va, sa = 0, sb = 0;
		const char *na, *nb;

		if (elfsym__offset_to_vaddr(a, off, &va))
			continue;
		na = elfsym__lookup(a, va, &sa);
		nb = elfsym__lookup(b, va, &sb);
		checked += !!na;
		if (!na != !nb || (na && (strcmp(na, nb) || sa != sb))) {
			printf("  %s: at %llx %s@%llx against %s@%llx\n", path,
			       (unsigned long long)va, na ? na : "-", (unsigned long long)sa,
			       nb ? nb : "-", (unsigned long long)sb);
			bad = 1;
		}
	}
	*failed |= bad;
	if (!checked) {
		printf("  %s: no address named\n", path);
		*failed = 1;
	}
out:
	elfsym__free(a);
	elfsym__free(b);
	free(img);
	close(fd);
	return 1;
}

TEST(direct_read_matches_libelf)
{
	static const char *const sys[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
	};
	char path[4200];
	const char *fx[] = {"fx_pie", "fx_nopie", "fx_stripped", "libfx.so"};
	size_t i;
	int failed = 0, n = 0;

	for (i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		fixture_path(path, sizeof(path), fx[i]);
		n += compare_paths(path, 1, &failed);
	}
	CHECK(n == 4);
	for (i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		compare_paths(sys[i], 61, &failed); /* where installed */
	CHECK(!failed);
}

/* A hand-made ELF64 file: .text, .symtab, .strtab, .shstrtab; two
 * functions whose names share a string-table tail, the first longer than
 * ELFSYM_MAX_NAME. Returns its size. */
static size_t make_long_name_elf(unsigned char *img, size_t cap, size_t longlen)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	const size_t text_off = 0x1000, text_size = 0x100;
	size_t str_off = text_off + text_size, str_size = 1 + longlen + 1;
	size_t sym_off, shstr_off, sh_off, total;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	Elf64_Sym *sym;
	Elf64_Shdr *sh;

	sym_off = (str_off + str_size + 7) & ~(size_t)7;
	shstr_off = sym_off + 3 * sizeof(Elf64_Sym);
	sh_off = (shstr_off + sizeof(shstr) + 7) & ~(size_t)7;
	total = sh_off + 5 * sizeof(Elf64_Shdr);
	if (total > cap)
		return 0;
	memset(img, 0, total);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_offset = 0;
	ph->p_vaddr = 0;
	ph->p_filesz = ph->p_memsz = text_off + text_size;
	ph->p_align = 0x1000;
	/* strtab: "\0" then 'a' x (longlen - 3) + "tail" minus one, NUL */
	memset(img + str_off + 1, 'a', longlen);
	memcpy(img + str_off + 1 + longlen - 4, "tail", 4);
	sym = (Elf64_Sym *)(img + sym_off);
	sym[1].st_name = 1; /* the long name */
	sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[1].st_shndx = 1;
	sym[1].st_value = text_off;
	sym[1].st_size = 0x40;
	sym[2].st_name = (Elf64_Word)(1 + longlen - 4); /* "tail": its last 4 bytes */
	sym[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[2].st_shndx = 1;
	sym[2].st_value = text_off + 0x40;
	sym[2].st_size = 0x40;
	memcpy(img + shstr_off, shstr, sizeof(shstr));
	sh = (Elf64_Shdr *)(img + sh_off);
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_addr = text_off,
			     .sh_offset = text_off,
			     .sh_size = text_size,
			     .sh_addralign = 16};
	sh[2] = (Elf64_Shdr){.sh_name = 7,
			     .sh_type = SHT_SYMTAB,
			     .sh_offset = sym_off,
			     .sh_size = 3 * sizeof(Elf64_Sym),
			     .sh_link = 3,
			     .sh_info = 1,
			     .sh_addralign = 8,
			     .sh_entsize = sizeof(Elf64_Sym)};
	sh[3] = (Elf64_Shdr){.sh_name = 15,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = str_off,
			     .sh_size = str_size,
			     .sh_addralign = 1};
	sh[4] = (Elf64_Shdr){.sh_name = 23,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = shstr_off,
			     .sh_size = sizeof(shstr),
			     .sh_addralign = 1};
	return total;
}

TEST(long_name_cut_shared_tail_kept)
{
	static unsigned char img[3 * ELFSYM_MAX_NAME + 0x2000];
	char tmpl[] = "/tmp/profcap-elfsym-XXXXXX";
	size_t len = make_long_name_elf(img, sizeof(img), 2 * ELFSYM_MAX_NAME);
	struct elfsym *e[2] = {NULL, NULL};
	int fd, i;

	CHECK(len > 0);
	fd = mkstemp(tmpl);
	CHECK(fd >= 0);
	unlink(tmpl);
	CHECK(write(fd, img, len) == (ssize_t)len);
	CHECK(elfsym__open_fd(fd, &e[0]) == 0);
	CHECK(elfsym__open_mem(img, len, &e[1]) == 0);
	close(fd);
	for (i = 0; i < 2; i++) {
		const char *name = elfsym__lookup(e[i], 0x1010, NULL);

		CHECK(name && strlen(name) == ELFSYM_MAX_NAME - 1 && name[0] == 'a' &&
		      name[ELFSYM_MAX_NAME - 2] == 'a');
		name = elfsym__lookup(e[i], 0x1050, NULL);
		CHECK(name && !strcmp(name, "tail"));
		CHECK(elfsym__symbol_count(e[i]) == 2);
		elfsym__free(e[i]);
	}
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
	RUN(plt_stubs_named_as_objdump);
	RUN(plt_stub_demangled);
	RUN(plt_ifunc_stubs_named_after_resolver);
	RUN(pie_with_load_bias);
	RUN(nopie_fixed_addresses);
	RUN(shared_library);
	RUN(stripped_uses_dynsym);
	RUN(stripped_entry_named_start);
	RUN(garbage_and_truncated_files);
	RUN(direct_read_matches_libelf);
	RUN(long_name_cut_shared_tail_kept);
	RUN(mutated_elf_never_crashes);
	RUN(raw_notes);
	RUN(self_vdso);
	elfsym__free(NULL);
	return TEST_DONE();
}
