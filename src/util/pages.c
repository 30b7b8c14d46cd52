/* pages.c - give pages back in batches; map huge-page-ready buffers in
 * builds that want huge pages (see pages.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/pages.h"

/* 0 untried, 1 batches work, -1 refused (a kernel older than 6.13 has no
 * MADV_DONTNEED there; seccomp): one madvise() per range from then on. */
static atomic_int batch_state;

static size_t one_by_one(const struct iovec *iov, size_t n)
{
	size_t i, done = 0;

	for (i = 0; i < n; i++)
		if (!madvise(iov[i].iov_base, iov[i].iov_len, MADV_DONTNEED))
			done++;
	return done;
}

/* How many of the @n ranges of @iov, from the first, @bytes covers. */
static size_t ranges_covered(const struct iovec *iov, size_t n, size_t bytes)
{
	size_t i;

	for (i = 0; i < n && bytes >= iov[i].iov_len; i++)
		bytes -= iov[i].iov_len;
	return i;
}

size_t pages__release(const struct iovec *iov, size_t n)
{
	size_t done = 0, k, m, ok;
	long r;
	int pidfd;

	if (!n)
		return 0;
	if (atomic_load(&batch_state) < 0)
		return one_by_one(iov, n);
	/* This process's pidfd, opened now: one kept across a fork would
	 * name the parent. */
	pidfd = (int)syscall(SYS_pidfd_open, (long)getpid(), 0L);
	if (pidfd < 0) {
		atomic_store(&batch_state, -1);
		return one_by_one(iov, n);
	}
	for (k = 0; k < n; k += m) {
		m = n - k < PAGES_BATCH ? n - k : PAGES_BATCH;
		r = syscall(SYS_process_madvise, (long)pidfd, (const void *)(iov + k), (long)m,
			    (long)MADV_DONTNEED, 0L);
		if (r < 0) {
			if (atomic_load(&batch_state) == 0)
				atomic_store(&batch_state, -1);
			done += one_by_one(iov + k, n - k);
			break;
		}
		atomic_store(&batch_state, 1);
		ok = ranges_covered(iov + k, m, (size_t)r);
		done += ok;
		/* Stopped short (a range it would not take): the rest of the
		 * batch one by one, the range it stopped in again. */
		if (ok < m)
			done += one_by_one(iov + k + ok, m - ok);
	}
	close(pidfd);
	return done;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void pages__populate(void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a, b;

	if (!p || !len || !page)
		return;
	a = (uintptr_t)p & ~(page - 1);
	b = ((uintptr_t)p + len + page - 1) & ~(page - 1);
	madvise((void *)a, b - a, MADV_POPULATE_WRITE); /* a failure: faults */
}

/* `make HUGE_PAGES=on` sets it to 1. */
#ifndef PAGES_HUGE_DEFAULT
#define PAGES_HUGE_DEFAULT 0
#endif

static atomic_bool huge_on = PAGES_HUGE_DEFAULT;

bool pages__huge_pays(void)
{
	return atomic_load(&huge_on);
}

void pages__set_huge(bool on)
{
	atomic_store(&huge_on, on);
}

void pages__huge(void *p, size_t len)
{
	if (p && len >= PAGES_HUGE && pages__huge_pays())
		madvise(p, len, MADV_HUGEPAGE); /* a failure: 4 KiB pages */
}

void *pages__map_aligned(size_t len)
{
	size_t slack = PAGES_HUGE, head;
	char *p;

	if (!len || len > SIZE_MAX - slack) {
		errno = EINVAL;
		return NULL;
	}
	/* Map a block more and trim to the first boundary inside. */
	p = mmap(NULL, len + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (size_t)(-(uintptr_t)p & (PAGES_HUGE - 1));
	if (head)
		munmap(p, head);
	if (slack - head)
		munmap(p + head + len, slack - head);
	return p + head;
}

void *pages__map_huge(size_t len)
{
	void *p;

	if (!pages__huge_pays()) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	p = pages__map_aligned(len);

	pages__huge(p, len);
	return p;
}

void *pages__grow_huge(void *p, size_t len, size_t nlen)
{
	void *q = MAP_FAILED, *to;

	if (!pages__huge_pays()) {
		q = mremap(p, len, nlen, MREMAP_MAYMOVE);
		return q == MAP_FAILED ? NULL : q;
	}
	if (!((uintptr_t)p & (PAGES_HUGE - 1)))
		q = mremap(p, len, nlen, 0); /* in place, when the range after is free */
	if (q == MAP_FAILED) {
		/* Moves the pages and their page tables onto the reservation,
		 * which takes the old mapping's flags: advised below. */
		to = pages__map_aligned(nlen);
		if (!to)
			return NULL;
		q = mremap(p, len, nlen, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (q == MAP_FAILED) {
			munmap(to, nlen);
			return NULL;
		}
	}
	pages__huge(q, nlen);
	return q;
}
