#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/fdio.h"
#include "util/log.h"
#include "export/sink.h"

struct file_sink {
	struct sink base;
	char *path;
	char *tmp;
	int fd;
};

int sink__deliver(struct sink *s, const void *data, size_t len)
{
	return s->ops->deliver(s, data, len);
}

const char *sink__describe(const struct sink *s)
{
	return s->describe;
}

void sink__free(struct sink *s)
{
	if (s)
		s->ops->free(s);
}

static int file_deliver(struct sink *base, const void *data, size_t len)
{
	struct file_sink *s = (struct file_sink *)base;
	char *dir = NULL;
	int err, dfd;

	if (s->fd < 0)
		return -EBADF;
	err = fdio__write_all(s->fd, data, len);
	if (!err && fsync(s->fd))
		err = -errno;
	if (!err && close(s->fd))
		err = -errno;
	s->fd = -1;
	if (err) {
		pr_err("writing %s failed: %s; free space or choose another -o path (the capture "
		       "is lost only if no other output succeeds)",
		       s->tmp, strerror(-err));
		unlink(s->tmp);
		return err;
	}
	if (rename(s->tmp, s->path)) {
		err = -errno;
		pr_err("cannot move %s to %s: %s; the capture is kept at %s", s->tmp, s->path,
		       strerror(-err), s->tmp);
		free(s->tmp);
		s->tmp = NULL; /* keep it: it holds the data */
		return err;
	}
	free(s->tmp);
	s->tmp = NULL;
	/* Make the rename itself durable. */
	dir = strdup(s->path);
	if (dir) {
		dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	return 0;
}

static void file_free(struct sink *base)
{
	struct file_sink *s = (struct file_sink *)base;

	if (s->fd >= 0)
		close(s->fd);
	if (s->tmp)
		unlink(s->tmp);
	free(s->tmp);
	free(s->path);
	free(s->base.describe);
	free(s);
}

static const struct sink_ops file_ops = {
	.deliver = file_deliver,
	.free = file_free,
};

struct sink *file_sink__new(const char *path)
{
	struct file_sink *s = NULL;
	char *dcopy = NULL, *bcopy = NULL;
	const char *dir, *base;
	struct stat st;
	int err;

	if (!path || !*path) {
		pr_err("empty output path: give a file name with -o");
		return NULL;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		pr_err("output %s is a directory: give a file name with -o", path);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	dcopy = strdup(path);
	bcopy = strdup(path);
	if (!s || !dcopy || !bcopy)
		goto err_nomem;
	s->fd = -1;
	s->base.ops = &file_ops;
	s->path = strdup(path);
	s->base.describe = strdup(path);
	dir = dirname(dcopy);
	base = basename(bcopy);
	if (!s->path || !s->base.describe ||
	    asprintf(&s->tmp, "%s/.%s.tmp.XXXXXX", dir, base) < 0) {
		s->tmp = NULL;
		goto err_nomem;
	}
	s->fd = mkostemp(s->tmp, O_CLOEXEC);
	if (s->fd < 0) {
		err = errno;
		pr_err("cannot write to directory %s: %s; choose a writable -o path", dir,
		       strerror(err));
		free(s->tmp);
		s->tmp = NULL;
		goto err_out;
	}
	fchmod(s->fd, 0644);
	free(dcopy);
	free(bcopy);
	return &s->base;

err_nomem:
	pr_err("out of memory");
err_out:
	free(dcopy);
	free(bcopy);
	if (s)
		file_free(&s->base);
	return NULL;
}

int file_sink__default_name(char *buf, size_t len, const char *dir, const char *host,
			    long long t_unix, const char *ext, int n)
{
	time_t t = (time_t)t_unix;
	char ts[32], suffix[16] = "";
	struct tm tm;
	int w;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	if (n > 0)
		snprintf(suffix, sizeof(suffix), "-%d", n);
	w = snprintf(buf, len, "%s%sprofcap-%s-%s%s%s", dir ? dir : "", dir ? "/" : "",
		     host && *host ? host : "host", ts, suffix, ext ? ext : "");
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}
