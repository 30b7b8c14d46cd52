/* test_pages.c - pages__release(): the ranges given back read as zeros
 * (anonymous) or as the file again (file-backed, private), the pages
 * between them keep their contents, more ranges than one batch holds,
 * and nothing to do for none. The huge-page switch: mappings from
 * pages__map_huge() and pages__grow_huge() keep their contents either way,
 * and are 2 MiB-aligned and advised (VmFlags "hg") only with it on. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

/* Whether the mapping holding @p is advised MADV_HUGEPAGE ("hg" among
 * its VmFlags in /proc/self/smaps); -1 when that cannot be read. */
static int advised_huge(const void *p)
{
	char line[512];
	unsigned long lo, hi;
	bool in = false;
	int found = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			found = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

TEST(huge_switch_maps_and_grows)
{
	const size_t len = 3 * PAGES_HUGE, nlen = 5 * PAGES_HUGE;
	bool was = pages__huge_pays();
	bool thp = !access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK);
	unsigned char *p, *q;

	for (int on = 0; on < 2; on++) {
		pages__set_huge(on);
		CHECK(pages__huge_pays() == on);
		p = pages__map_huge(len);
		CHECK(p);
		CHECK(!on || !((uintptr_t)p & (PAGES_HUGE - 1)));
		memset(p, 0x5c, len);
		q = pages__grow_huge(p, len, nlen);
		CHECK(q);
		CHECK(all(q, len, 0x5c));
		CHECK(all(q + len, nlen - len, 0));
		CHECK(!on || !((uintptr_t)q & (PAGES_HUGE - 1)));
		int hg = advised_huge(q);

		munmap(q, nlen);
		CHECK(hg == -1 || hg == (on && thp)); /* no THP: the advice is refused */
	}
	pages__set_huge(was);
}

int main(void)
{
	RUN(anonymous_ranges_read_zero_others_kept);
	RUN(file_ranges_read_the_file_again);
	RUN(huge_switch_maps_and_grows);
	return TEST_DONE();
}
