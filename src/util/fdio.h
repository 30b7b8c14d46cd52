/* fdio.h - whole reads and writes on file descriptors: the loops that
 * restart on EINTR and short counts, written once.
 */
#ifndef PROFCAP_UTIL_FDIO_H
#define PROFCAP_UTIL_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* openat(2) of @path (relative to @dirfd, or AT_FDCWD) with @flags and
 * O_CLOEXEC, as one system call: musl's open() and fopen("e") follow an
 * O_CLOEXEC open with fcntl(F_SETFD) for kernels before 2.6.23, a second
 * system call per file, dear on a VM whose system calls trap to its host
 * (profcap needs Linux >= 5.8). No O_CREAT (no mode). The descriptor, or
 * -1 with errno set. */
int fdio__openat(int dirfd, const char *path, int flags);

/* fdio__openat(AT_FDCWD, @path, @flags). */
int fdio__open(const char *path, int flags);

/* Write all @len bytes of @p to @fd. 0, or -errno of the failing write. */
int fdio__write_all(int fd, const void *p, size_t len);

/* Read @fd into @dst until end of file or @cap bytes. The length read, or
 * -errno of the failing read. */
ssize_t fdio__read_full(int fd, void *dst, size_t cap);

/* fdio__read_full() of file @path (opened read-only, close-on-exec): the
 * length read, or -errno when it cannot be opened or read. */
ssize_t fdio__read_file(const char *path, void *dst, size_t cap);

/* fdio__read_file() for a /proc file the kernel answers in one read when
 * the buffer holds it all (PID/comm, stat, cgroup, cmdline, fdinfo/FD: not
 * maps, which come a page per read): a read shorter than @cap is the end of the file,
 * without the second read that would return 0 (a system call per file,
 * several per new process). The length read, or -errno. */
ssize_t fdio__read_proc(const char *path, void *dst, size_t cap);

#endif
