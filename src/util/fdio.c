/* fdio.c - whole reads and writes (see fdio.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fdio.h"

int fdio__openat(int dirfd, const char *path, int flags)
{
	if (flags & O_CREAT) {
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(SYS_openat, dirfd, path, flags | O_CLOEXEC, 0);
}

int fdio__open(const char *path, int flags)
{
	return fdio__openat(AT_FDCWD, path, flags);
}

int fdio__write_all(int fd, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t fdio__read_full(int fd, void *dst, size_t cap)
{
	unsigned char *d = dst;
	size_t len = 0;

	while (len < cap) {
		ssize_t n = read(fd, d + len, cap - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

/* Open @path, read it (all of it, or @once one read), close. */
static ssize_t read_path(const char *path, void *dst, size_t cap, bool once)
{
	ssize_t n;
	int fd;

	fd = fdio__open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (once) {
		do
			n = read(fd, dst, cap);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			n = -errno;
	} else {
		n = fdio__read_full(fd, dst, cap);
	}
	close(fd);
	return n;
}

ssize_t fdio__read_proc(const char *path, void *dst, size_t cap)
{
	return read_path(path, dst, cap, true);
}

ssize_t fdio__read_file(const char *path, void *dst, size_t cap)
{
	return read_path(path, dst, cap, false);
}
