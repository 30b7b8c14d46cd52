/* test_pages.c - pages__release(): the ranges given back read as zeros
 * (anonymous) or as the file again (file-backed, private), the pages
 * between them keep their contents, more ranges than one batch holds,
 * and nothing to do for none. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/pages.h"
#include "test.h"

#define PG 4096u

static bool all(const unsigned char *p, size_t len, unsigned char v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

TEST(anonymous_ranges_read_zero_others_kept)
{
	/* 3 pages per range, every other range released: PAGES_BATCH + 44 of them */
	const size_t nr = PAGES_BATCH + 44, len = 2 * nr * 3 * PG;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec *iov = calloc(nr, sizeof(*iov));

	CHECK(p != MAP_FAILED && iov);
	if (p == MAP_FAILED || !iov)
		goto out;
	memset(p, 0xab, len);
	for (size_t i = 0; i < nr; i++) {
		/* in reverse order: the order is the caller's */
		iov[i].iov_base = p + (2 * (nr - 1 - i)) * 3 * PG;
		iov[i].iov_len = 3 * PG;
	}
	CHECK_EQ_U64(pages__release(iov, nr), nr);
	for (size_t i = 0; i < 2 * nr; i++)
		CHECK(all(p + i * 3 * PG, 3 * PG, i % 2 ? 0xab : 0));
	CHECK_EQ_U64(pages__release(iov, 0), 0);
out:
	free(iov);
	if (p != MAP_FAILED)
		munmap(p, len);
}

TEST(file_ranges_read_the_file_again)
{
	char path[] = "/tmp/test_pages.XXXXXX";
	unsigned char buf[4 * PG], *p = MAP_FAILED;
	struct iovec iov[2];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	memset(buf, 0x11, sizeof(buf));
	CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	p = mmap(NULL, sizeof(buf), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		goto out;
	memset(p, 0x22, sizeof(buf)); /* private copies of every page */
	iov[0] = (struct iovec){p, PG};
	iov[1] = (struct iovec){p + 2 * PG, 2 * PG};
	CHECK_EQ_U64(pages__release(iov, 2), 2);
	CHECK(all(p, PG, 0x11));
	CHECK(all(p + PG, PG, 0x22));
	CHECK(all(p + 2 * PG, 2 * PG, 0x11));
out:
	if (p != MAP_FAILED)
		munmap(p, sizeof(buf));
	close(fd);
}

int main(void)
{
	RUN(anonymous_ranges_read_zero_others_kept);
	RUN(file_ranges_read_the_file_again);
	return TEST_DONE();
}
