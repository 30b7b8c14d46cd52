#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "util/fdio.h"
#include "util/log.h"
#include "export/sink.h"

struct file_sink {
	struct sink base;
	char *path;
	char *tmp;
	const char *ext; /* NOCLOBBER: "-N" goes before this suffix of @path */
	unsigned int flags;
	int fd;
	/* Written through in place (standard output, a character device, a
	 * FIFO): no temporary file, no rename, no fsync. A FIFO is opened at
	 * delivery (fd -1 until then), as its reader may come later. */
	bool direct;
};

#define TMP_TAG ".tmp."
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

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

/* @path with "-@n" inserted before @ext (when @path ends with it) into @out. */
static int numbered(const char *path, const char *ext, int n, char *out, size_t len)
{
	size_t plen = strlen(path), elen = ext ? strlen(ext) : 0;
	int w;

	if (elen > plen || (elen && strcmp(path + plen - elen, ext)))
		elen = 0;
	w = snprintf(out, len, "%.*s-%d%s", (int)(plen - elen), path, n, path + plen - elen);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/* Move the temporary file to a name no other file has: @s->path, or
 * "-1", "-2", ... before the extension. renameat2(RENAME_NOREPLACE), or
 * link() + unlink() where the file system lacks it. 0 or -errno; the final
 * name replaces @s->path. */
static int rename_noclobber(struct file_sink *s)
{
	char alt[4096];
	const char *to = s->path;
	int err = 0;

	for (int n = 1; n <= 1000; n++) {
		if (!syscall(SYS_renameat2, AT_FDCWD, s->tmp, AT_FDCWD, to, RENAME_NOREPLACE))
			err = 0;
		else if (errno == EINVAL || errno == ENOSYS)
			err = link(s->tmp, to) ? -errno : (unlink(s->tmp), 0);
		else
			err = -errno;
		if (err != -EEXIST)
			break;
		if (numbered(s->path, s->ext, n, alt, sizeof(alt)))
			return -ENAMETOOLONG;
		to = alt;
	}
	if (err)
		return err;
	if (to != s->path) {
		char *p = strdup(to), *d = strdup(to);

		if (!p || !d) {
			free(p);
			free(d);
			return 0; /* written; only the name in messages is stale */
		}
		free(s->path);
		free(s->base.describe);
		s->path = p;
		s->base.describe = d;
	}
	return 0;
}

/* Write @data through to a descriptor that is not a regular file. */
static int direct_deliver(struct file_sink *s, const void *data, size_t len)
{
	bool quiet = s->flags & (FILE_SINK_QUIET | FILE_SINK_QUIET_WRITE);
	int err = 0;

	if (s->fd < 0 && (s->fd = fdio__open(s->path, O_WRONLY)) < 0)
		err = -errno;
	if (!err)
		err = fdio__write_all(s->fd, data, len);
	if (s->fd >= 0 && close(s->fd) && !err && errno != EINTR)
		err = -errno;
	s->fd = -1;
	if (err && !quiet)
		pr_err("writing %s failed: %s; choose another -o path", s->base.describe,
		       strerror(-err));
	return err;
}

static int file_deliver(struct sink *base, const void *data, size_t len)
{
	struct file_sink *s = (struct file_sink *)base;
	bool quiet = s->flags & (FILE_SINK_QUIET | FILE_SINK_QUIET_WRITE);
	char *dir = NULL;
	int err, dfd;

	if (s->direct)
		return direct_deliver(s, data, len);
	if (s->fd < 0)
		return -EBADF;
	err = fdio__write_all(s->fd, data, len);
	if (!err && fsync(s->fd))
		err = -errno;
	if (!err && close(s->fd))
		err = -errno;
	s->fd = -1;
	if (err) {
		if (!quiet)
			pr_err("writing %s failed: %s; free space or choose another -o path (the "
			       "capture is lost only if no other output succeeds)",
			       s->tmp, strerror(-err));
		unlink(s->tmp);
		return err;
	}
	if (s->flags & FILE_SINK_NOCLOBBER)
		err = rename_noclobber(s);
	else if (rename(s->tmp, s->path))
		err = -errno;
	if (err && !quiet && !(s->flags & FILE_SINK_NOCLOBBER)) {
		pr_err("cannot move %s to %s: %s; the capture is kept at %s", s->tmp, s->path,
		       strerror(-err), s->tmp);
		free(s->tmp);
		s->tmp = NULL; /* keep it: it holds the data */
		return err;
	}
	if (err) {
		if (!quiet)
			pr_err("cannot move %s to %s: %s", s->tmp, s->path, strerror(-err));
		unlink(s->tmp); /* the caller still holds the data */
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

/* How file_sink__open() writes to @path. */
enum target {
	TARGET_FILE,   /* a new or regular file: temporary file and rename */
	TARGET_DIRECT, /* a character device or a FIFO: written through in place */
};

/* What kind of file @st is, when a capture must not go there; or NULL. */
static const char *refused_kind(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISBLK(st->st_mode))
		return "a block device";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	return NULL;
}

/* Classify @path for output. A symbolic link is followed: *@resolved
 * (malloc'd, else NULL) is then the file it names, which a regular-file
 * delivery replaces while the link stays. 0, or -errno after logging
 * (unless @quiet) why @path cannot take a capture. */
static int classify(const char *path, bool quiet, enum target *t, char **resolved)
{
	const char *kind;
	struct stat st;
	int err = 0;

	*t = TARGET_FILE;
	*resolved = NULL;
	if (lstat(path, &st))
		return 0; /* a new file: creating the temporary file says what fails */
	if (S_ISLNK(st.st_mode)) {
		if (stat(path, &st) || !(*resolved = realpath(path, NULL))) {
			err = -errno;
			if (!quiet)
				pr_err("output %s is a symbolic link to a missing file (%s): "
				       "remove "
				       "the link or give another -o path",
				       path, strerror(-err));
			return err;
		}
	}
	kind = refused_kind(&st);
	if (kind) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		if (!quiet)
			pr_err("output %s is %s: give a file name with -o", path, kind);
	} else if (!S_ISREG(st.st_mode)) {
		*t = TARGET_DIRECT;
	}
	if (err) {
		free(*resolved);
		*resolved = NULL;
	}
	return err;
}

/* Make @s write through to s->path in place, or to standard output for
 * "-". A FIFO is only checked for write access here: opening it waits for
 * a reader, which may start after the capture. 0 or -errno (logged unless
 * @quiet). */
static int direct_open(struct file_sink *s, bool quiet)
{
	struct stat st;
	int err = 0;

	s->direct = true;
	if (!strcmp(s->path, "-")) {
		s->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (s->fd < 0)
			err = -errno;
	} else if (stat(s->path, &st) || !S_ISFIFO(st.st_mode)) {
		s->fd = fdio__open(s->path, O_WRONLY);
		if (s->fd < 0)
			err = -errno;
	} else if (access(s->path, W_OK)) {
		err = -errno;
	}
	if (err && !quiet)
		pr_err("cannot write to %s: %s; choose another -o path", s->base.describe,
		       strerror(-err));
	return err;
}

struct sink *file_sink__new(const char *path)
{
	int err;

	return file_sink__open(path, NULL, 0, &err);
}

struct sink *file_sink__open(const char *path, const char *ext, unsigned int flags, int *errp)
{
	struct file_sink *s = NULL;
	char *dcopy = NULL, *bcopy = NULL;
	const char *dir, *base;
	int err;
	bool quiet = flags & FILE_SINK_QUIET;
	enum target t = TARGET_FILE;
	char *resolved = NULL;

	*errp = -EINVAL;
	if (!path || !*path) {
		if (!quiet)
			pr_err("empty output path: give a file name with -o");
		return NULL;
	}
	/* Generated names (NOCLOBBER) are never anything but new files. */
	if (strcmp(path, "-") && !(flags & FILE_SINK_NOCLOBBER)) {
		*errp = classify(path, quiet, &t, &resolved);
		if (*errp)
			return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(resolved);
		goto err_nomem;
	}
	s->fd = -1;
	s->flags = flags;
	s->ext = ext;
	s->base.ops = &file_ops;
	s->path = resolved ? resolved : strdup(path);
	s->base.describe = strdup(strcmp(path, "-") ? path : "standard output");
	if (!s->path || !s->base.describe)
		goto err_nomem;
	if (t == TARGET_DIRECT || !strcmp(path, "-")) {
		*errp = direct_open(s, quiet);
		if (*errp)
			goto err_out;
		return &s->base;
	}
	dcopy = strdup(s->path);
	bcopy = strdup(s->path);
	if (!dcopy || !bcopy)
		goto err_nomem;
	dir = dirname(dcopy);
	base = basename(bcopy);
	if (asprintf(&s->tmp, "%s/.%s" TMP_TAG "%d.XXXXXX", dir, base, (int)getpid()) < 0) {
		s->tmp = NULL;
		goto err_nomem;
	}
	s->fd = mkostemp(s->tmp, O_CLOEXEC);
	if (s->fd < 0) {
		err = errno;
		*errp = -err;
		if (!quiet)
			pr_err("cannot write to directory %s: %s; choose a writable -o path", dir,
			       strerror(err));
		free(s->tmp);
		s->tmp = NULL;
		goto err_out;
	}
	/* mkostemp() made it 0600: captures hold every process's command
	 * line, so they stay private like the spool. */
	*errp = 0;
	free(dcopy);
	free(bcopy);
	return &s->base;

err_nomem:
	*errp = -ENOMEM;
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

/* The pid in a temporary name ".<name>.tmp.<pid>.XXXXXX", or 0. */
static pid_t tmp_owner(const char *name)
{
	const char *t = name[0] == '.' ? strstr(name, TMP_TAG) : NULL, *p;
	char *end;
	long pid;

	if (!t)
		return 0;
	for (p = strstr(t + 1, TMP_TAG); p; p = strstr(p + 1, TMP_TAG))
		t = p; /* the last tag: a capture may be named "x.tmp.pb" */
	errno = 0;
	pid = strtol(t + strlen(TMP_TAG), &end, 10);
	if (errno || pid <= 0 || *end != '.' || strlen(end + 1) != 6)
		return 0;
	return (pid_t)pid;
}

int file_sink__clean_stale(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d;
	pid_t pid;

	d = opendir(dir && *dir ? dir : ".");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid = tmp_owner(de->d_name);
		if (!pid || pid == getpid() || !kill(pid, 0) || errno != ESRCH)
			continue;
		if (!unlinkat(dirfd(d), de->d_name, 0)) {
			pr_debug("removed %s/%s, left by profcap process %d that no longer runs",
				 dir && *dir ? dir : ".", de->d_name, (int)pid);
			n++;
		}
	}
	closedir(d);
	return n;
}
