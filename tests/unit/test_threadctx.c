/* test_threadctx.c - the thread-context TLS offset reader (proc/threadctx)
 * against the writer workload, which prints where its variable really is,
 * and against files that must be refused. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	__s64 off = 0;

	/* This test program has no such variable. */
	CHECK(threadctx__process_offset(NULL, (int)getpid(), &off) == -ENOENT);
	CHECK(threadctx__process_offset(NULL, 0x7ffffff0, &off) == -ENOENT);
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

int main(void)
{
	char dir[4000];

	test_dir(dir, sizeof(dir));
	snprintf(bin, sizeof(bin), "%s/workloads/threadctx_writer", dir);
	if (access(bin, X_OK)) {
		printf("skip: %s missing (run make)\n", bin);
		printf("unit: 0 passed, 0 failed\n");
		return 0;
	}
	RUN(writer_offset);
	RUN(process_offset);
	RUN(malformed);
	RUN(attrs);
	return TEST_DONE();
}
