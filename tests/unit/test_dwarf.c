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

static char bin[4200], src[4200];

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
		return;
	CHECK(dwarf_lines__open_fd(fd, &d) == -ENOENT && !d);
	close(fd);
}

int main(void)
{
	char dir[4096];

	test_dir(dir, sizeof(dir));
	snprintf(bin, sizeof(bin), "%s/workloads/inlined", dir);
	snprintf(src, sizeof(src), "%s/../../tests/workloads/inlined.c", dir);
	if (access(bin, R_OK) || access(src, R_OK)) {
		printf("skip: %s or %s missing (run make)\n", bin, src);
		printf("unit: 0 passed, 0 failed\n");
		return 0;
	}
	RUN(inlined_helper);
	RUN(corrupted);
	RUN(no_dwarf);
	printf("unit: %d passed, %d failed\n", test__passed, test__failed);
	return test__failed ? 1 : 0;
}
