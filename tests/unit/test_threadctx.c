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
	return TEST_DONE();
}
