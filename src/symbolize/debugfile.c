#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "proc/pfile.h"
#include "symbolize/debugfile.h"
#include "symbolize/elfsym.h"
#include "util/hex.h"
#include "util/log.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"
#define HTL_PAGE 4096

int debugfile__open_in_root(const char *root, const char *path)
{
	int fd, err;

	/* proc/pfile.h: regular files only, never blocking, inside @root. */
	err = pfile__open_in_root_follow(root && *root ? root : "/", path, &fd, NULL);
	return err ? err : fd;
}

int debugfile__crc32(int fd, __u32 *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	for (;;) {
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	*crc = (__u32)c;
	return 0;
}

int debugfile__htlhash(int fd, char *hex)
{
	unsigned char in[2 * HTL_PAGE + 8], md[SHA256_DIGEST_LENGTH];
	size_t head, tail, len, i;
	struct stat st;
	__u64 size;
	int err;

	if (fstat(fd, &st))
		return -errno;
	size = (__u64)st.st_size;
	head = size < HTL_PAGE ? (size_t)size : HTL_PAGE;
	tail = head;
	err = pfile__pread(fd, in, head, 0);
	if (!err)
		err = pfile__pread(fd, in + head, tail, (off_t)(size - tail));
	if (err)
		return err;
	len = head + tail;
	for (i = 0; i < 8; i++)
		in[len + i] = (unsigned char)(size >> (56 - 8 * i));
	len += 8;
	SHA256(in, len, md);
	hex__encode(hex, md, 16);
	return 0;
}

/* Does the candidate on @fd belong to the binary of @q? @by_crc: a
 * debuglink candidate (CRC when a build-id is missing on either side). */
static bool matches(const struct debugfile_query *q, int fd, const char *shown, bool by_crc)
{
	char hex[ELFSYM_BUILD_ID_HEX];
	struct stat st;
	__u32 crc;
	int err;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		pr_warn("debug file %s is not a regular file: skipped", shown);
		return false;
	}
	if (q->ino && (__u64)st.st_dev == q->dev && (__u64)st.st_ino == q->ino)
		return false; /* the binary itself (debuglink to its own name) */
	err = elfsym__read_build_id_fd(fd, hex, sizeof(hex));
	if (err == -ENOEXEC) {
		pr_warn("debug file %s is not an ELF file: skipped", shown);
		return false;
	}
	if (!err && q->build_id) {
		if (!strcmp(hex, q->build_id))
			return true;
		pr_warn("debug file %s has build-id %s, not %s: skipped (install the debug "
			"file of this exact build)",
			shown, hex, q->build_id);
		return false;
	}
	if (!by_crc) {
		pr_warn("debug file %s has no build-id: skipped", shown);
		return false;
	}
	if (debugfile__crc32(fd, &crc) || crc != q->debuglink_crc) {
		pr_warn("debug file %s does not match the CRC of %s's .gnu_debuglink: skipped",
			shown, q->path);
		return false;
	}
	return true;
}

/* Try @path (inside @root; NULL = host). fd or -ENOENT. */
static int try_candidate(const struct debugfile_query *q, const char *root, const char *path,
			 bool by_crc)
{
	char shown[PATH_MAX];
	int fd = debugfile__open_in_root(root, path);

	if (fd < 0)
		return -ENOENT;
	snprintf(shown, sizeof(shown), "%s%s", root ? root : "", path);
	if (matches(q, fd, shown, by_crc))
		return fd;
	close(fd);
	return -ENOENT;
}

static int by_build_id(const struct debugfile_query *q)
{
	char path[PATH_MAX];
	size_t i;
	int fd;

	if (!q->build_id || strlen(q->build_id) < 4)
		return -ENOENT;
	for (i = 0; i <= q->ndirs; i++) {
		const char *dir = i < q->ndirs ? q->dirs[i] : SYSTEM_DEBUG_DIR;
		const char *root = i < q->ndirs ? NULL : q->root;

		if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir,
				     q->build_id, q->build_id + 2) >= sizeof(path))
			continue;
		fd = try_candidate(q, root, path, false);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

static int by_debuglink(const struct debugfile_query *q)
{
	char dir[PATH_MAX], path[PATH_MAX];
	const char *slash;
	size_t i;
	int fd;

	if (!q->debuglink || !q->path || q->path[0] != '/')
		return -ENOENT;
	slash = strrchr(q->path, '/');
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - q->path), q->path);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, q->debuglink) < sizeof(path)) {
		fd = try_candidate(q, q->root, path, true);
		if (fd >= 0)
			return fd;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/.debug/%s", dir, q->debuglink) <
	    sizeof(path)) {
		fd = try_candidate(q, q->root, path, true);
		if (fd >= 0)
			return fd;
	}
	for (i = 0; i <= q->ndirs; i++) {
		const char *ddir = i < q->ndirs ? q->dirs[i] : SYSTEM_DEBUG_DIR;
		const char *root = i < q->ndirs ? NULL : q->root;

		if ((size_t)snprintf(path, sizeof(path), "%s%s/%s", ddir, dir, q->debuglink) >=
		    sizeof(path))
			continue;
		fd = try_candidate(q, root, path, true);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int debugfile__open(const struct debugfile_query *q, const char **how)
{
	int fd = by_build_id(q);

	if (fd >= 0) {
		if (how)
			*how = "build-id";
		return fd;
	}
	fd = by_debuglink(q);
	if (fd >= 0 && how)
		*how = "debuglink";
	return fd;
}
