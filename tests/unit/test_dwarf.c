/* test_dwarf.c - symbolize/dwarf.c against the `inlined` workload (gcc -O2
 * -g): every address of hot_caller() whose DWARF puts it in the inlined mix()
 * reads [mix at a line of its loop, hot_caller at the call site], the line
 * numbers taken from the markers in tests/workloads/inlined.c; the cache
 * answers the same; corrupted copies of the file never crash. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/dwarf.h"
#include "symbolize/elfsym.h"
#include "test.h"

static char bin[4200], src[4200], gt_bin[4200];

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

static int marker(const char *m)
{
	char line[512], pat[64];
	FILE *f = fopen(src, "r");
	int n = 0, found = 0;

	snprintf(pat, sizeof(pat), "/* %s */", m);
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, pat)) {
			found = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static int open_all(struct elfsym **e, struct dwarf_lines **d)
{
	int fd = open(bin, O_RDONLY), err;

	if (fd < 0)
		return -1;
	err = elfsym__open_fd(fd, e) ?: dwarf_lines__open_fd(fd, d);
	close(fd);
	return err;
}

TEST(inlined_helper)
{
	int first = marker("MIX_FIRST"), last = marker("MIX_LAST"), call = marker("CALL_SITE");
	struct dwarf_lines *d = NULL;
	struct dwarf_lines_stats st;
	struct elfsym *e = NULL;
	size_t in_caller = 0, right = 0, n, n2;
	const struct profile_line *l, *l2;
	__u64 a;

	CHECK(first && last && call);
	CHECK(!open_all(&e, &d));
	for (a = 0x1000; a < 0x3000; a++) {
		const char *sym = elfsym__lookup(e, a, NULL);

		if (!sym || strcmp(sym, "hot_caller"))
			continue;
		in_caller++;
		if (!dwarf_lines__lookup(d, a, sym, &l, &n))
			continue;
		CHECK_STR(l[n - 1].function, "hot_caller");
		if (n == 2 && !strcmp(l[0].function, "mix") && l[0].line >= first &&
		    l[0].line <= last && l[1].line == call && strstr(l[0].filename, "inlined.c") &&
		    l[0].start_line > 0 && l[0].start_line < first)
			right++;
		/* Cached: the same array. */
		CHECK(dwarf_lines__lookup(d, a, sym, &l2, &n2));
		CHECK(l2 == l && n2 == n);
	}
	printf("# hot_caller: %zu addresses, %zu read as mix inlined at line %d\n", in_caller,
	       right, call);
	CHECK(in_caller > 8);
	/* The loop body is most of the function. */
	CHECK(right * 2 > in_caller);
	dwarf_lines__stats(d, &st);
	CHECK(st.cache_hits >= right);
	CHECK(!dwarf_lines__lookup(d, 0x7fffffff, NULL, &l, &n) && !n);
	dwarf_lines__free(d);
	elfsym__free(e);
}

/* Lines of the hot_caller addresses of parity @odd as text, one line per
 * address: function, file and line of each inlined level. */
static size_t lines_text(struct dwarf_lines *d, struct elfsym *e, int odd, char *out, size_t cap)
{
	size_t len = 0, n, i;
	const struct profile_line *l;
	__u64 a;

	out[0] = '\0';
	for (a = 0x1000 + (unsigned)odd; a < 0x3000 && len + 512 < cap; a += 2) {
		const char *sym = elfsym__lookup(e, a, NULL);

		if (!sym || strcmp(sym, "hot_caller") || !dwarf_lines__lookup(d, a, sym, &l, &n))
			continue;
		len += (size_t)snprintf(out + len, cap - len, "%llx:", (unsigned long long)a);
		for (i = 0; i < n; i++)
			len += (size_t)snprintf(out + len, cap - len, " %s %s:%lld",
						l[i].function ? l[i].function : "?",
						l[i].filename ? l[i].filename : "?",
						(long long)l[i].line);
		out[len++] = '\n';
		out[len] = '\0';
	}
	return len;
}

/* Release frees libdw's data but keeps the cached lines (their strings are
 * copies: read after the file's mapping went); an address not cached
 * begins the DWARF again and reads as from a fresh object. */
static void check_release(const char *path)
{
	struct dwarf_lines *d = NULL, *fresh = NULL;
	struct dwarf_lines_stats st;
	struct elfsym *e = NULL;
	size_t cap = 1 << 20;
	char *before = malloc(cap), *after = malloc(cap), *rest = malloc(cap), *want = malloc(cap);
	int fd = open(path, O_RDONLY);

	CHECK(fd >= 0 && before && after && rest && want);
	CHECK(!elfsym__open_fd(fd, &e) && !dwarf_lines__open_fd(fd, &d) &&
	      !dwarf_lines__open_fd(fd, &fresh));
	close(fd);
	CHECK(!dwarf_lines__release(d)); /* not begun: nothing to free */
	CHECK(lines_text(d, e, 0, before, cap) > 0);
	CHECK(dwarf_lines__release(d));
	CHECK(!dwarf_lines__release(d));
	lines_text(d, e, 0, after, cap); /* cached */
	CHECK_STR(after, before);
	dwarf_lines__stats(d, &st);
	CHECK_EQ_U64(st.begins, 1);
	CHECK_EQ_U64(st.releases, 1);
	CHECK(lines_text(d, e, 1, rest, cap) > 0); /* begun again */
	lines_text(fresh, e, 1, want, cap);
	CHECK_STR(rest, want);
	dwarf_lines__stats(d, &st);
	CHECK_EQ_U64(st.begins, 2);
	printf("# %s: %zu + %zu bytes of lines across a release\n", path, strlen(before),
	       strlen(rest));
	dwarf_lines__free(d);
	dwarf_lines__free(fresh);
	elfsym__free(e);
	free(before);
	free(after);
	free(rest);
	free(want);
}

/* Addresses no symbol covers (alignment padding between functions) get no
 * lines: the line table runs the previous function's last row over them,
 * but a line without a function would make a frame named by nothing but a
 * file (found as an interrupted PC at a function's first byte taken for a
 * return address). `groundtruth` has such padding after now(), in a header. */
TEST(padding_unnamed)
{
	struct dwarf_lines *d = NULL;
	struct elfsym *e = NULL;
	size_t gaps = 0, bad = 0, n, i;
	const struct profile_line *l;
	int fd = open(gt_bin, O_RDONLY);
	__u64 a;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(!elfsym__open_fd(fd, &e) && !dwarf_lines__open_fd(fd, &d));
	close(fd);
	for (a = 0x1000; a < 0x3000; a++) {
		if (elfsym__lookup(e, a, NULL))
			continue;
		gaps++;
		if (!dwarf_lines__lookup(d, a, NULL, &l, &n))
			continue;
		for (i = 0; i < n; i++)
			bad += !l[i].function;
	}
	printf("# %zu addresses without a symbol, %zu lines without a function\n", gaps, bad);
	CHECK(gaps > 0);
	CHECK(bad == 0);
	dwarf_lines__free(d);
	elfsym__free(e);
}

TEST(release_keeps_lines)
{
	char tmp[] = "/tmp/test_dwarf_z_XXXXXX", cmd[8600];
	int fd;

	check_release(bin);
	/* A copy with zlib-compressed debug sections (decompressed section
	 * by section, see decompress_sections()). */
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib %s %s 2>/dev/null", bin,
		 tmp);
	if (system(cmd)) {
		unlink(tmp);
		SKIP("objcopy cannot compress debug sections here");
	}
	check_release(tmp);
	unlink(tmp);
}

/* Lines of @n addresses from @lo by @step in @path, one text line each. */
static size_t lines_of(const char *path, __u64 lo, __u64 step, size_t n, char *out, size_t cap,
		       struct dwarf_lines_stats *st)
{
	struct dwarf_lines *d = NULL;
	const struct profile_line *l;
	size_t len = 0, k, i;
	int fd = open(path, O_RDONLY);

	out[0] = '\0';
	if (fd < 0 || dwarf_lines__open_fd(fd, &d)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	for (i = 0; i < n && len + 1024 < cap; i++) {
		if (!dwarf_lines__lookup(d, lo + i * step, NULL, &l, &k))
			continue;
		len += (size_t)snprintf(out + len, cap - len, "%zu:", i);
		while (k--)
			len += (size_t)snprintf(out + len, cap - len, " %s %s:%lld",
						l[k].function ? l[k].function : "?",
						l[k].filename ? l[k].filename : "?",
						(long long)l[k].line);
		out[len++] = '\n';
		out[len] = '\0';
	}
	dwarf_lines__lookup(d, 1, NULL, &l, &k); /* in no unit */
	dwarf_lines__stats(d, st);
	dwarf_lines__free(d);
	return len;
}

/* Units indexed from .debug_aranges (units set up only as lookups land in
 * them) give the same lines as units walked from their DIEs (a copy
 * without .debug_aranges): the fixture, and libc's debug file when
 * installed. */
static void check_aranges(const char *path, __u64 lo, __u64 step, size_t n)
{
	char tmp[] = "/tmp/test_dwarf_na_XXXXXX", cmd[8600];
	size_t cap = 8u << 20;
	char *a = malloc(cap), *b = malloc(cap);
	struct dwarf_lines_stats sa, sb;
	int fd = mkstemp(tmp);

	CHECK(a && b && fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section=.debug_aranges %s %s 2>/dev/null",
		 path, tmp);
	if (system(cmd)) {
		unlink(tmp);
		free(a);
		free(b);
		SKIP("objcopy cannot remove sections here");
	}
	CHECK(lines_of(path, lo, step, n, a, cap, &sa) > 0);
	CHECK(lines_of(tmp, lo, step, n, b, cap, &sb) > 0);
	unlink(tmp);
	CHECK(!strcmp(a, b));
	printf("# %s: %zu bytes of lines; units %llu (aranges) vs %llu (walk)\n", path, strlen(a),
	       (unsigned long long)sa.units, (unsigned long long)sb.units);
	CHECK(sa.units > 0 && sb.units > 0);
	/* the index came from .debug_aranges where there is one, not a walk */
	CHECK(sa.units_aranges > 0);
	CHECK_EQ_U64(sb.units_aranges, 0);
	free(a);
	free(b);
}

TEST(aranges_same_as_walk)
{
	static const char libc_dbg[] =
		"/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug";

	check_aranges(bin, 0x1000, 1, 0x2000);
	if (access(libc_dbg, R_OK))
		SKIP("no libc debug file here");
	check_aranges(libc_dbg, 0x28000, 0x61, 0x4000);
}

/* Flip bytes all over a copy: open and lookups fail or succeed, never crash. */
TEST(corrupted)
{
	char tmp[] = "/tmp/test_dwarf_XXXXXX";
	struct dwarf_lines *d;
	const struct profile_line *l;
	unsigned char *img;
	size_t len, i, n;
	FILE *f = fopen(bin, "rb");
	int round, fd;

	CHECK(f);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	img = malloc(len);
	CHECK(img && fread(img, 1, len, f) == len);
	fclose(f);
	srand(7);
	for (round = 0; round < 40; round++) {
		unsigned char *c = malloc(len);
		size_t keep = round % 4 == 3 ? len / 2 : len; /* and truncated */

		CHECK(c);
		memcpy(c, img, len);
		for (i = 0; i < 64; i++)
			c[0x40 + (size_t)rand() % (len - 0x40)] = (unsigned char)rand();
		fd = mkstemp(tmp);
		CHECK(fd >= 0);
		CHECK(write(fd, c, keep) == (ssize_t)keep);
		d = NULL;
		if (!dwarf_lines__open_fd(fd, &d)) {
			__u64 a;

			for (a = 0x1000; a < 0x1400; a += 3)
				dwarf_lines__lookup(d, a, NULL, &l, &n);
		}
		dwarf_lines__free(d);
		close(fd);
		unlink(tmp);
		strcpy(tmp, "/tmp/test_dwarf_XXXXXX");
		free(c);
	}
	free(img);
}

TEST(no_dwarf)
{
	struct dwarf_lines *d = NULL;
	int fd = open("/proc/self/exe", O_RDONLY);

	CHECK(fd >= 0);
	/* This test binary is built with -g; /bin/true is not. */
	close(fd);
	fd = open("/bin/true", O_RDONLY);
	if (fd < 0)
		SKIP("cannot open /bin/true");
	CHECK(dwarf_lines__open_fd(fd, &d) == -ENOENT && !d);
	close(fd);
}

/* The workloads these tests read are built by make: without them, one
 * counted skip instead of the tests. */
TEST(fixtures)
{
	SKIP("%s or %s missing (run make)", bin, src);
}

int main(void)
{
	char dir[4096];

	test_dir(dir, sizeof(dir));
	snprintf(bin, sizeof(bin), "%s/workloads/inlined", dir);
	snprintf(src, sizeof(src), "%s/../../tests/workloads/inlined.c", dir);
	snprintf(gt_bin, sizeof(gt_bin), "%s/workloads/groundtruth", dir);
	if (access(bin, R_OK) || access(src, R_OK)) {
		RUN(fixtures);
		return TEST_DONE();
	}
	RUN(inlined_helper);
	RUN(padding_unnamed);
	RUN(release_keeps_lines);
	RUN(aranges_same_as_walk);
	RUN(corrupted);
	RUN(no_dwarf);
	return TEST_DONE();
}
