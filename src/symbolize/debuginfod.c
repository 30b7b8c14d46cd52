#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debuginfod.h"
#include "symbolize/elfsym.h"
#include "util/env.h"
#include "util/log.h"

#define MAX_URLS 8
#define MAX_TRIED 4096
#define CONNECT_TIMEOUT_S 5L
#define TOTAL_TIMEOUT_S 600L
#define DEFAULT_STALL_S 90L
#define DEFAULT_MAXSIZE (1ull << 30)

static const char *const ca_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/ssl/cert.pem",
};

struct debuginfod {
	char *urls[MAX_URLS];
	size_t nurls;
	char cache[PATH_MAX];
	long stall_s;
	unsigned long long maxsize;
	const char *ca_file;
	char **tried; /* build-ids already asked for (not in the cache) */
	size_t ntried;
	bool curl_ok;
};

struct sink {
	FILE *f;
	unsigned long long n, max;
};

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct sink *k = arg;
	size_t len = size * nmemb;

	if (k->n + len > k->max)
		return 0; /* aborts the transfer: over the size cap */
	k->n += len;
	return fwrite(p, 1, len, k->f);
}

struct debuginfod *debuginfod__new_from_env(const struct env *e)
{
	const char *env = env__get(e, "DEBUGINFOD_URLS"), *v;
	struct debuginfod *d;
	char *copy, *tok, *save = NULL;
	size_t i;

	if (!env || !*env)
		return NULL;
	d = calloc(1, sizeof(*d));
	copy = strdup(env);
	if (!d || !copy)
		goto fail;
	for (tok = strtok_r(copy, " \t\n", &save); tok && d->nurls < MAX_URLS;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		size_t len = strlen(tok);

		while (len && tok[len - 1] == '/')
			tok[--len] = '\0';
		if (!len)
			continue;
		d->urls[d->nurls] = strdup(tok);
		if (!d->urls[d->nurls])
			goto fail;
		d->nurls++;
	}
	free(copy);
	copy = NULL;
	if (!d->nurls)
		goto fail;
	v = env__get(e, "DEBUGINFOD_CACHE_PATH");
	if (v)
		snprintf(d->cache, sizeof(d->cache), "%s", v);
	else if ((v = env__get(e, "HOME")))
		snprintf(d->cache, sizeof(d->cache), "%s/.cache/debuginfod_client", v);
	else
		goto fail;
	v = env__get(e, "DEBUGINFOD_TIMEOUT");
	d->stall_s = v && atol(v) > 0 ? atol(v) : DEFAULT_STALL_S;
	v = env__get(e, "DEBUGINFOD_MAXSIZE");
	d->maxsize = v && strtoull(v, NULL, 10) > 0 ? strtoull(v, NULL, 10) : DEFAULT_MAXSIZE;
	for (i = 0; i < sizeof(ca_bundles) / sizeof(ca_bundles[0]); i++)
		if (!access(ca_bundles[i], R_OK)) {
			d->ca_file = ca_bundles[i];
			break;
		}
	d->tried = calloc(MAX_TRIED, sizeof(*d->tried));
	if (!d->tried)
		goto fail;
	return d;
fail:
	free(copy);
	debuginfod__free(d);
	return NULL;
}

void debuginfod__free(struct debuginfod *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nurls; i++)
		free(d->urls[i]);
	for (i = 0; i < d->ntried; i++)
		free(d->tried[i]);
	free(d->tried);
	if (d->curl_ok)
		curl_global_cleanup();
	free(d);
}

static bool valid_build_id(const char *id)
{
	size_t n = strlen(id), i;

	if (n < 2 || n >= ELFSYM_BUILD_ID_HEX)
		return false;
	for (i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

/* mkdir -p for @path (the cache directory and its build-id subdirectory). */
static int make_dirs(const char *path)
{
	char tmp[PATH_MAX], *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Open @path when it is an ELF file with build-id @id. fd or -errno. */
static int open_checked(const char *path, const char *id)
{
	char hex[ELFSYM_BUILD_ID_HEX];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (elfsym__read_build_id_fd(fd, hex, sizeof(hex)) || strcmp(hex, id)) {
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

/* GET @url into @tmp. 0, or -errno with *@why set. */
static int fetch(struct debuginfod *d, const char *url, const char *tmp, char *why, size_t wlen)
{
	struct sink k = {.max = d->maxsize};
	CURL *c = NULL;
	CURLcode rc;
	long status = 0;
	int err = -EIO;

	k.f = fopen(tmp, "wbe");
	if (!k.f) {
		snprintf(why, wlen, "cannot write %s: %s", tmp, strerror(errno));
		return -errno;
	}
	c = curl_easy_init();
	if (!c) {
		snprintf(why, wlen, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 4L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, TOTAL_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, d->stall_s);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)d->maxsize);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &k);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "profcap");
	if (d->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, d->ca_file);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_WRITE_ERROR && k.n <= d->maxsize && !ferror(k.f))
		snprintf(why, wlen, "larger than DEBUGINFOD_MAXSIZE (%llu bytes)", d->maxsize);
	else if (rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(why, wlen, "larger than DEBUGINFOD_MAXSIZE (%llu bytes)", d->maxsize);
	else if (rc != CURLE_OK)
		snprintf(why, wlen, "%s", curl_easy_strerror(rc));
	else if (status != 200)
		snprintf(why, wlen, "HTTP %ld", status);
	else
		err = 0;
	if (!err && (fflush(k.f) || ferror(k.f))) {
		snprintf(why, wlen, "cannot write %s", tmp);
		err = -EIO;
	}
	if (err == -EIO && status == 404)
		err = -ENOENT;
out:
	curl_easy_cleanup(c);
	fclose(k.f);
	return err;
}

int debuginfod__open(struct debuginfod *d, const char *build_id)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], tmp[PATH_MAX + 32], url[PATH_MAX + 64];
	char why[PATH_MAX + 128] = "";
	size_t i;
	int fd, err = -ENOENT;

	if (!valid_build_id(build_id))
		return -EINVAL;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", d->cache, build_id) >= sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(path, sizeof(path), "%s/debuginfo", dir);
	fd = open_checked(path, build_id);
	if (fd >= 0)
		return fd;
	for (i = 0; i < d->ntried; i++)
		if (!strcmp(d->tried[i], build_id))
			return -ENOENT;
	if (d->ntried < MAX_TRIED && (d->tried[d->ntried] = strdup(build_id)))
		d->ntried++;
	if (!d->curl_ok) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -ENOMEM;
		d->curl_ok = true;
	}
	err = make_dirs(dir);
	if (err) {
		pr_warn("debuginfod: cannot create the cache directory %s (%s): set "
			"DEBUGINFOD_CACHE_PATH to a writable directory",
			dir, strerror(-err));
		return err;
	}
	snprintf(tmp, sizeof(tmp), "%s/.debuginfo.%d.tmp", dir, (int)getpid());
	for (i = 0; i < d->nurls; i++) {
		snprintf(url, sizeof(url), "%s/buildid/%s/debuginfo", d->urls[i], build_id);
		err = fetch(d, url, tmp, why, sizeof(why));
		if (!err) {
			fd = open_checked(tmp, build_id);
			if (fd >= 0) {
				close(fd);
				if (rename(tmp, path))
					err = -errno;
				else
					return open_checked(path, build_id);
			}
			snprintf(why, sizeof(why), "the file served is not the debug file of "
						   "build-id %s",
				 build_id);
			err = -EBADMSG;
		}
		unlink(tmp);
		if (err != -ENOENT)
			pr_warn("debuginfod: %s: %s; that binary stays without debug symbols",
				url, why);
	}
	if (err == -ENOENT)
		pr_debug("debuginfod: no server has build-id %s", build_id);
	return err < 0 ? err : -ENOENT;
}
