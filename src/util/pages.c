/* pages.c - give pages back in batches; fault in buffers in one call (see
 * pages.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/pages.h"

/* 0 untried, 1 batches work, -1 refused (a kernel before 6.13 has no
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
	/* This process's pidfd, opened now: one kept from before a fork
	 * would name the parent. */
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
