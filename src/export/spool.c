/* spool.c - undelivered captures on disk (see spool.h).
 *
 * A new file never replaces an existing one: the name is reserved with an
 * exclusive create, then the file sink writes the data beside it and renames
 * it over the reservation, so a reader sees either nothing, the empty
 * reservation, or the whole capture.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "export/sink.h"
#include "export/spool.h"

#define SPOOL_MAX_SUFFIX 1000

/* mkdir -p @dir, new directories with mode 0700. 0 or -errno. */
static int mkdirs(const char *dir)
{
	size_t n = strlen(dir);
	char path[4096], saved;
	struct stat st;

	if (!n || n >= sizeof(path))
		return n ? -ENAMETOOLONG : -ENOENT;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		saved = *p;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = saved;
		if (!saved)
			break;
	}
	if (stat(dir, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int spool__dir_ready(const char *dir)
{
	int err = mkdirs(dir);

	if (!err && access(dir, W_OK | X_OK))
		err = -errno;
	return err;
}

int spool__prepare(const char *dir)
{
	int err = spool__dir_ready(dir);

	if (err)
		pr_err("spool directory %s cannot take files: %s; choose a writable directory "
		       "with --spool-dir or PROFCAP_SPOOL_DIR",
		       dir, strerror(-err));
	return err;
}

/* A host name as a safe file name component. */
static void safe_host(char *out, size_t len, const char *host)
{
	size_t i;

	if (!host || !*host)
		host = "host";
	for (i = 0; host[i] && i + 1 < len; i++)
		out[i] = host[i] == '/' || (host[i] == '.' && i == 0) ? '_' : host[i];
	out[i] = '\0';
}

/* Reserve a free name in @dir for a capture of @host at @t: create it empty
 * with O_EXCL, adding -1, -2, ... before ".pb" when taken. */
static int reserve(const char *dir, const char *host, time_t t, char *path, size_t pathlen)
{
	int fd;

	for (int i = 0; i < SPOOL_MAX_SUFFIX; i++) {
		if (file_sink__default_name(path, pathlen, dir, host, t, ".pb", i))
			return -ENAMETOOLONG;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int spool__save(const char *dir, const char *host, const void *data, size_t len, char *path,
		size_t pathlen)
{
	struct sink *s = NULL;
	char hostname[128];
	int err;

	err = spool__prepare(dir);
	if (err)
		return err;
	safe_host(hostname, sizeof(hostname), host);
	err = reserve(dir, hostname, time(NULL), path, pathlen);
	if (err) {
		pr_err("cannot create a file in spool directory %s: %s; choose another with "
		       "--spool-dir",
		       dir, strerror(-err));
		return err;
	}
	/* The sink logs its own failures. */
	s = file_sink__new(path);
	if (!s) {
		err = -EIO;
		goto err_out;
	}
	err = sink__deliver(s, data, len);
	if (err)
		goto err_out;
	sink__free(s);
	chmod(path, 0600);
	return 0;

err_out:
	sink__free(s);
	unlink(path);
	return err;
}
