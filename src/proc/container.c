#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fdio.h"
#include "proc/container.h"
#include "util/scan.h"

#define CGROUP_FILE_MAX 65536 /* bytes read from one PID/cgroup file */
#define CGROUP_SMALL 2048     /* ... on the stack, before the heap */
#define LINE_MAX_LEN 4096

static bool all_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

/* Is the component @c (@n bytes, no '/') a container's cgroup? */
static bool component_id(const char *c, size_t n, const char **id)
{
	static const char *const runtimes[] = {"docker-", "cri-containerd-", "crio-", "libpod-",
					       "containerd-"};
	size_t i;

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	if (starts_with(c, n, "crio-conmon-") || starts_with(c, n, "libpod-conmon-"))
		return false;
	for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		if (starts_with(c, n, runtimes[i])) {
			c += strlen(runtimes[i]);
			n -= strlen(runtimes[i]);
			break;
		}
	}
	if (n != CONTAINER_ID_LEN || !all_hex(c, n))
		return false;
	*id = c;
	return true;
}

int container__id_from_path(const char *cgpath, char *id, size_t len)
{
	const char *p, *end, *found = NULL, *cid;

	if (!cgpath || !id || len < CONTAINER_ID_LEN + 1)
		return -EINVAL;
	for (p = cgpath; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '/');
		if (end > p && component_id(p, (size_t)(end - p), &cid))
			found = cid;
	}
	if (!found)
		return -ENOENT;
	memcpy(id, found, CONTAINER_ID_LEN);
	id[CONTAINER_ID_LEN] = '\0';
	return 0;
}

/* Read @proc_root/@pid/cgroup, NUL-terminated, into @small (CGROUP_SMALL
 * bytes; a cgroup file is mostly a line or two), or when it does not fit
 * into a heap buffer left in *@heap for the caller to free. *@out points at
 * the text. 0 or -errno. */
static int read_cgroup_file(const char *proc_root, int pid, char *small, char **heap, char **out)
{
	char path[4096];
	ssize_t n;

	*heap = NULL;
	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, pid);
	n = fdio__read_proc(path, small, CGROUP_SMALL - 1);
	if (n >= 0 && n < CGROUP_SMALL - 1) {
		small[n] = '\0';
		*out = small;
		return 0;
	}
	if (n < 0)
		return (int)n;
	*heap = malloc(CGROUP_FILE_MAX + 1);
	if (!*heap)
		return -ENOMEM;
	n = fdio__read_file(path, *heap, CGROUP_FILE_MAX);
	if (n < 0) {
		free(*heap);
		*heap = NULL;
		return (int)n;
	}
	(*heap)[n] = '\0';
	*out = *heap;
	return 0;
}

int container__cgroup_of(const char *proc_root, int pid, char *path, size_t len)
{
	char small[CGROUP_SMALL], *heap, *buf, *line, *save = NULL;
	int err;

	err = read_cgroup_file(proc_root, pid, small, &heap, &buf);
	if (err)
		return err;
	err = -ENOENT;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3))
			continue;
		err = strlen(line + 3) < len ? 0 : -ENAMETOOLONG;
		if (!err)
			strcpy(path, line + 3);
		break;
	}
	free(heap);
	return err;
}

int container__id_in(const char *proc_root, int pid, char *id, size_t len, bool *v2_only)
{
	char small[CGROUP_SMALL], *heap, *buf, *line, *save = NULL, *colon;
	size_t lines = 0;
	bool v2 = false;
	int err;

	*v2_only = false;
	err = read_cgroup_file(proc_root, pid, small, &heap, &buf);
	if (err)
		return err == -ENOMEM ? err : -ESRCH;
	err = -ENOENT;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		v2 |= !strncmp(line, "0::", 3);
		if (!err)
			continue; /* found: the lines are still counted */
		/* hierarchy-ID:controllers:path */
		colon = strchr(line, ':');
		if (colon)
			colon = strchr(colon + 1, ':');
		if (colon)
			err = container__id_from_path(colon + 1, id, len);
	}
	*v2_only = v2 && lines == 1;
	free(heap);
	return err;
}

int container__id_of(const char *proc_root, int pid, char *id, size_t len)
{
	bool v2_only;
	int err = container__id_in(proc_root, pid, id, len, &v2_only);

	return err == -ESRCH ? -ENOENT : err;
}

int container__find(const char *proc_root, const char *prefix, char *id, size_t idlen, char *cgpath,
		    size_t cglen, int *pid)
{
	char cur[CONTAINER_ID_LEN + 1];
	size_t plen = prefix ? strlen(prefix) : 0;
	struct dirent *de;
	bool found = false;
	DIR *d;
	int err = 0, p;

	if (plen < 4 || plen > CONTAINER_ID_LEN || !all_hex(prefix, plen) ||
	    idlen < CONTAINER_ID_LEN + 1 || !cglen)
		return -EINVAL;
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!scan__all(de->d_name, isdigit))
			continue;
		p = atoi(de->d_name);
		if (container__id_of(proc_root, p, cur, sizeof(cur)) || memcmp(cur, prefix, plen))
			continue;
		if (found && strcmp(cur, id)) {
			err = -EEXIST;
			break;
		}
		if (found)
			continue;
		found = true;
		strcpy(id, cur);
		*pid = p;
		if (container__cgroup_of(proc_root, p, cgpath, cglen))
			cgpath[0] = '\0';
	}
	closedir(d);
	if (err)
		return err;
	return found ? 0 : -ENOENT;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int container__cgroup2_mount(const char *proc_root, char *out, size_t len)
{
	char path[4096], line[LINE_MAX_LEN], *f[5], *save, *sep;
	FILE *fp;
	int err = -ENOENT, i;

	snprintf(path, sizeof(path), "%s/self/mountinfo", proc_root);
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		*sep = '\0';
		save = NULL;
		for (i = 0; i < 5; i++)
			if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
				break;
		if (i < 5)
			continue;
		unescape(f[4]);
		err = strlen(f[4]) < len ? 0 : -ENAMETOOLONG;
		if (!err)
			strcpy(out, f[4]);
		break;
	}
	fclose(fp);
	return err;
}
