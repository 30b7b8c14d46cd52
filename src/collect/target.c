#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "proc/container.h"
#include "proc/privs.h"
#include "util/log.h"
#include "util/scan.h"
#include "collect/target.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

const char target__usage[] =
	"  -p, --pid PID[,PID...]   only these processes (all their threads)\n"
	"      --tid TID[,TID...]   only these threads\n"
	"      --comm NAME[,NAME...] only threads with this name (as in ps -L -o comm;\n"
	"                           the kernel keeps 15 characters)\n"
	"      --cgroup PATH        only processes in this cgroup v2 group or below it: a\n"
	"                           path as in /proc/PID/cgroup, or a directory under the\n"
	"                           cgroup2 mount (repeatable)\n"
	"      --container ID       only this container (full ID or a unique prefix of at\n"
	"                           least 4 hex digits; Docker, containerd, CRI-O, Podman;\n"
	"                           repeatable)\n"
	"  Different filters combine with AND; several values of one filter with OR.\n";

static int parse_ids(const char *arg, int *ids, size_t *n, size_t max, const char *cmd,
		     const char *what)
{
	const char *p = arg;
	char *end;
	long v;

	while (*p) {
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > 0x3fffffff || (*end && *end != ','))
			return log__usage_error(cmd,
						"invalid %s list '%s': expected %s[,%s...] with "
						"positive numbers",
						what, arg, what, what);
		if (*n == max)
			return log__usage_error(cmd, "too many %ss in '%s' (at most %zu)", what,
						arg, max);
		ids[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return log__usage_error(cmd, "invalid %s list '%s': trailing comma", what,
						arg);
	}
	if (!*n)
		return log__usage_error(cmd, "empty %s list '%s'", what, arg);
	return 0;
}

static int parse_comms(struct target_opts *t, const char *arg, const char *cmd)
{
	static char store[TARGET_MAX_COMMS][PROFCAP_COMM_LEN];
	const char *p = arg, *end;
	size_t len;

	if (!*arg)
		return log__usage_error(cmd, "--comm needs a thread name");
	for (; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		len = (size_t)(end - p);
		if (!len)
			return log__usage_error(cmd, "invalid --comm list '%s': empty name", arg);
		if (t->ncomms == TARGET_MAX_COMMS)
			return log__usage_error(cmd, "too many --comm names (at most %d)",
						TARGET_MAX_COMMS);
		if (len >= PROFCAP_COMM_LEN) {
			pr_warn("--comm '%.*s' is longer than the kernel's %d-character thread "
				"names: matching its first %d characters",
				(int)len, p, PROFCAP_COMM_LEN - 1, PROFCAP_COMM_LEN - 1);
			len = PROFCAP_COMM_LEN - 1;
		}
		memcpy(store[t->ncomms], p, len);
		store[t->ncomms][len] = '\0';
		t->comms[t->ncomms] = store[t->ncomms];
		t->ncomms++;
	}
	return 0;
}

int target__flag(struct target_opts *t, int c, const char *arg, const char *cmd)
{
	switch (c) {
	case 'p':
		return parse_ids(arg, t->pids, &t->npids, TARGET_MAX_PIDS, cmd, "PID") ? -EINVAL
										       : 0;
	case TARGET_OPT_TID:
		return parse_ids(arg, t->tids, &t->ntids, TARGET_MAX_PIDS, cmd, "TID") ? -EINVAL
										       : 0;
	case TARGET_OPT_COMM:
		return parse_comms(t, arg, cmd) ? -EINVAL : 0;
	case TARGET_OPT_CGROUP:
	case TARGET_OPT_CONTAINER:
		if (!*arg)
			return log__usage_error(cmd, "%s needs a value",
						c == TARGET_OPT_CGROUP ? "--cgroup" : "--container")
				       ? -EINVAL
				       : 0;
		if (t->ncgroups + t->ncontainers == PROFCAP_MAX_CGROUPS)
			return log__usage_error(cmd, "too many --cgroup/--container (at most %d)",
						PROFCAP_MAX_CGROUPS)
				       ? -EINVAL
				       : 0;
		if (c == TARGET_OPT_CGROUP)
			t->cgroups[t->ncgroups++] = arg;
		else
			t->containers[t->ncontainers++] = arg;
		return 0;
	default:
		return -ENOENT;
	}
}

bool target__any(const struct target_opts *t)
{
	return t->npids || t->ntids || t->ncomms || t->ncgroups || t->ncontainers;
}

static int add_pid(struct target *t, int pid)
{
	size_t i;
	int *p;

	for (i = 0; i < t->npids; i++)
		if (t->pids[i] == pid)
			return 0;
	p = realloc(t->pids, (t->npids + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	t->pids = p;
	t->pids[t->npids++] = pid;
	return 0;
}

int target__add_followed_pid(struct target *t, int pid)
{
	t->follow_forks = true;
	return add_pid(t, pid);
}

/* Open cgroup v2 directory @rel (a path as in /proc/PID/cgroup) or @arg (a
 * directory under @mnt); keeps the /proc-style path for matching. */
static int open_cgroup(struct target *t, const char *arg, const char *mnt, const char *flag)
{
	char full[PATH_MAX], rel[PATH_MAX];
	size_t mlen = strlen(mnt), len;
	struct statfs sfs;
	int fd, err;

	if (!strncmp(arg, mnt, mlen) && (arg[mlen] == '/' || !arg[mlen])) {
		snprintf(full, sizeof(full), "%s", arg);
		snprintf(rel, sizeof(rel), "%s", arg[mlen] ? arg + mlen : "/");
	} else {
		snprintf(full, sizeof(full), "%s%s%s", mnt, *arg == '/' ? "" : "/", arg);
		snprintf(rel, sizeof(rel), "%s%s", *arg == '/' ? "" : "/", arg);
	}
	len = strlen(rel);
	while (len > 1 && rel[len - 1] == '/')
		rel[--len] = '\0';
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("%s '%s': cannot open cgroup directory %s (%s); give a path as in "
		       "/proc/PID/cgroup or a directory under %s",
		       flag, arg, full, strerror(-err), mnt);
		return err;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		pr_err("%s '%s': %s is not on the cgroup v2 file system; give a path under %s",
		       flag, arg, full, mnt);
		close(fd);
		return -EINVAL;
	}
	t->cgroup_paths[t->ncgroups] = strdup(rel);
	if (!t->cgroup_paths[t->ncgroups]) {
		close(fd);
		return -ENOMEM;
	}
	t->cgroup_fds[t->ncgroups++] = fd;
	return 0;
}

/* A container without its own cgroup v2 group (cgroup v1 host): keep its
 * current processes and follow their children. */
static int add_container_pids(struct target *t, const char *proc_root, const char *id)
{
	char cur[CONTAINER_ID_LEN + 1];
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int err = 0, pid;

	d = opendir(proc_root);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && !err) {
		if (!scan__all(de->d_name, isdigit))
			continue;
		pid = atoi(de->d_name);
		if (container__id_of(proc_root, pid, cur, sizeof(cur)) || strcmp(cur, id))
			continue;
		err = target__add_followed_pid(t, pid);
		n++;
	}
	closedir(d);
	if (!err)
		pr_warn("container %.12s has no cgroup v2 group of its own (cgroup v1 host): "
			"profiling its %zu current processes and their children instead",
			id, n);
	return err;
}

static int resolve_container(struct target *t, const char *proc_root, const char *arg,
			     const char *mnt, bool have_mnt)
{
	char id[CONTAINER_ID_LEN + 1], cg[PATH_MAX], *p;
	int err, pid = 0;

	err = container__find(proc_root, arg, id, sizeof(id), cg, sizeof(cg), &pid);
	if (err == -EINVAL) {
		pr_err("--container '%s': expected a container ID (at least 4 lowercase hex "
		       "digits), as shown by 'docker ps --no-trunc' or 'crictl ps'",
		       arg);
		return err;
	}
	if (err == -EEXIST) {
		pr_err("--container '%s' matches several containers: give more digits", arg);
		return err;
	}
	if (err) {
		pr_err("--container '%s': no running process belongs to a container with that "
		       "ID; check 'docker ps --no-trunc' or 'crictl ps'",
		       arg);
		return -ENOENT;
	}
	/* The container's group is the one named by its ID; a process may sit
	 * in a group below it (Podman's ".../libpod-<id>.scope/container"). */
	p = strstr(cg, id);
	if (p && (p = strchr(p, '/')))
		*p = '\0';
	if (have_mnt && cg[0] && strcmp(cg, "/") && strstr(cg, id))
		return open_cgroup(t, cg, mnt, "--container");
	return add_container_pids(t, proc_root, id);
}

/* The process of @pid: @pid itself, or, when -p named a thread other than a
 * process's main thread, that process (with a note saying so). */
static int process_of(const char *proc_root, int pid)
{
	char path[PATH_MAX], line[128];
	int tgid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	if (tgid <= 0 || tgid == pid)
		return pid;
	pr_info("PID %d is a thread of process %d: profiling all of process %d (for that "
		"thread only, use --tid %d)",
		pid, tgid, tgid, pid);
	return tgid;
}

int target__resolve(struct target *t, const struct target_opts *o, const char *proc_root)
{
	char mnt[PATH_MAX], path[PATH_MAX];
	bool have_mnt;
	size_t i;
	int err;

	memset(t, 0, sizeof(*t));
	t->o = o;
	for (i = 0; i < o->npids; i++) {
		snprintf(path, sizeof(path), "%s/%d", proc_root, o->pids[i]);
		if (access(path, F_OK)) {
			pr_err("no process with PID %d; check it with 'ps -p %d'", o->pids[i],
			       o->pids[i]);
			return -ESRCH;
		}
		err = add_pid(t, process_of(proc_root, o->pids[i]));
		if (err)
			return err;
	}
	for (i = 0; i < o->ntids; i++) {
		snprintf(path, sizeof(path), "%s/%d", proc_root, o->tids[i]);
		if (access(path, F_OK)) {
			pr_err("no thread with TID %d; list threads with 'ps -eL'", o->tids[i]);
			return -ESRCH;
		}
	}
	if (!o->ncgroups && !o->ncontainers)
		return 0;
	have_mnt = !container__cgroup2_mount(proc_root, mnt, sizeof(mnt));
	if (!have_mnt && o->ncgroups) {
		pr_err("--cgroup needs the cgroup v2 hierarchy, which is not mounted; mount it "
		       "with 'mount -t cgroup2 none /sys/fs/cgroup/unified'");
		return -ENOENT;
	}
	for (i = 0; i < o->ncgroups; i++) {
		err = open_cgroup(t, o->cgroups[i], mnt, "--cgroup");
		if (err)
			return err;
	}
	for (i = 0; i < o->ncontainers; i++) {
		err = resolve_container(t, proc_root, o->containers[i], mnt, have_mnt);
		if (err)
			return err;
	}
	return 0;
}

void target__warn_privileges(const struct target *t, const char *proc_root)
{
	bool foreign = !t->npids || t->o->ntids || t->o->ncomms || t->ncgroups;
	char msg[700], path[PATH_MAX];
	struct privs pv;
	struct stat st;
	size_t i;

	if (privs__read(proc_root, &pv) || !privs__foreign_cost(&pv, msg, sizeof(msg)))
		return;
	for (i = 0; i < t->npids && !foreign; i++) {
		snprintf(path, sizeof(path), "%s/%d", proc_root, t->pids[i]);
		foreign = !stat(path, &st) && st.st_uid != pv.euid;
	}
	if (foreign)
		pr_warn("%s", msg);
}

void target__sampler_opts(const struct target *t, struct sampler_opts *so)
{
	so->pids = t->pids;
	so->npids = t->npids;
	so->tids = t->o->tids;
	so->ntids = t->o->ntids;
	so->comms = t->o->comms;
	so->ncomms = t->o->ncomms;
	so->cgroup_fds = t->cgroup_fds;
	so->ncgroups = t->ncgroups;
	so->follow_forks = t->follow_forks;
}

static bool int_in(const int *v, size_t n, int x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool under_path(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (!strcmp(top, "/"))
		return true;
	return !strncmp(path, top, n) && (path[n] == '/' || !path[n]);
}

/* Does thread @tid of process @pid pass every filter? */
static bool task_matches(const struct target *t, const char *proc_root, int pid, int tid)
{
	char path[PATH_MAX], buf[256], cg[PATH_MAX];
	ssize_t n;
	size_t i;
	int fd;
	bool ok;

	if (t->npids && !int_in(t->pids, t->npids, pid))
		return false;
	if (t->o->ntids && !int_in(t->o->tids, t->o->ntids, tid))
		return false;
	if (t->o->ncomms) {
		snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc_root, pid, tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return false;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		for (i = 0, ok = false; i < t->o->ncomms && !ok; i++)
			ok = !strcmp(buf, t->o->comms[i]);
		if (!ok)
			return false;
	}
	if (t->ncgroups) {
		if (container__cgroup_of(proc_root, pid, cg, sizeof(cg)))
			return false;
		for (i = 0, ok = false; i < t->ncgroups && !ok; i++)
			ok = under_path(cg, t->cgroup_paths[i]);
		if (!ok)
			return false;
	}
	return true;
}

bool target__explain_empty(const struct target *t, const char *proc_root, char *msg, size_t len)
{
	char path[PATH_MAX];
	struct dirent *pe, *te;
	size_t matches = 0;
	DIR *pd, *td;
	int pid;

	pd = opendir(proc_root);
	if (!pd) {
		snprintf(msg, len, "no sample matched the filters in the first second");
		return false;
	}
	while ((pe = readdir(pd))) {
		if (!scan__all(pe->d_name, isdigit))
			continue;
		pid = atoi(pe->d_name);
		if (t->npids && !int_in(t->pids, t->npids, pid) && !t->follow_forks)
			continue;
		snprintf(path, sizeof(path), "%s/%d/task", proc_root, pid);
		td = opendir(path);
		if (!td)
			continue;
		while ((te = readdir(td)))
			if (scan__all(te->d_name, isdigit) &&
			    task_matches(t, proc_root, pid, atoi(te->d_name)))
				matches++;
		closedir(td);
	}
	closedir(pd);
	if (!matches) {
		snprintf(msg, len,
			 "no running thread matches the filters: the profile stays empty unless "
			 "a matching process starts; check the -p/--tid/--comm/--cgroup/"
			 "--container values");
		return true;
	}
	snprintf(msg, len,
		 "%zu matching thread%s used no CPU in the first second (idle or blocked); "
		 "samples appear when they run",
		 matches, matches == 1 ? "" : "s");
	return false;
}

void target__release(struct target *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->ncgroups; i++) {
		close(t->cgroup_fds[i]);
		free(t->cgroup_paths[i]);
	}
	free(t->pids);
	memset(t, 0, sizeof(*t));
}
