#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/fdio.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"

_Static_assert(PATH_MAX >= PROCSNAP_MAX_CMDLINE, "cmdline read into a path buffer");

/* The slot of @cache for cgroup @cg and css_set @css, read since @now_ns -
 * PROCSNAP_CGROUP_TTL_NS; or -1. */
static int cgroup_slot(const struct procsnap_cgroups *cache, __u64 cg, __u64 css, __u64 now_ns)
{
	unsigned int i;

	for (i = 0; cg && cache && i < PROCSNAP_CGROUPS; i++)
		if (cache->e[i].cgroup == cg && cache->e[i].css == css &&
		    now_ns - cache->e[i].at_ns < PROCSNAP_CGROUP_TTL_NS)
			return (int)i;
	return -1;
}

/* Container of process p->pid into p->container_id: from @cache when its
 * cgroups @cg, @css are there, else read (and kept there when they say
 * which it is: a known css_set, or a file with the v2 hierarchy alone). */
static void read_container(const char *proc_root, __u64 cg, __u64 css,
			   struct procsnap_cgroups *cache, struct procsnap *p)
{
	int slot = cgroup_slot(cache, cg, css, p->at_ns), err;
	bool v2_only = false;

	if (slot >= 0) {
		memcpy(p->container_id, cache->e[slot].container_id, sizeof(p->container_id));
		cache->hits++;
		return;
	}
	/* Here rather than where the process is described: a short-lived
	 * one is gone by then, and its samples lost their container. */
	err = container__id_in(proc_root, p->pid, p->container_id, sizeof(p->container_id),
			       &v2_only);
	if (err)
		p->container_id[0] = '\0';
	if ((err && err != -ENOENT) || !cg || !cache || (!css && !v2_only))
		return; /* gone, or its cgroups do not say which */
	slot = (int)(cache->next++ % PROCSNAP_CGROUPS);
	cache->e[slot].cgroup = cg;
	cache->e[slot].css = css;
	cache->e[slot].at_ns = p->at_ns;
	memcpy(cache->e[slot].container_id, p->container_id, sizeof(p->container_id));
}

int procsnap__read(const char *proc_root, int pid, struct procsnap **out)
{
	return procsnap__read_cached(proc_root, pid, 0, 0, NULL, out);
}

/* The snapshot of @pid; what @g gives (NULL: nothing) is not read. */
static int read_snap(const char *proc_root, int pid, __u64 cgroup, __u64 css,
		     struct procsnap_cgroups *cache, const struct procsnap_given *g,
		     struct procsnap **out)
{
	static const struct procsnap_given none;
	char path[PATH_MAX], target[PATH_MAX];
	struct procsnap *p;
	struct timespec ts;
	ssize_t n;
	int err;

	*out = NULL;
	if (!g)
		g = &none;
	p = calloc(1, sizeof(*p));
	if (!p) {
		procmaps__free(g->maps);
		return -ENOMEM;
	}
	p->pid = pid;
	p->refs = 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->at_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	p->maps = g->maps;
	if (!p->maps) {
		snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
		err = procmaps__read(path, &p->maps);
		if (err) {
			procsnap__free(p);
			return err == -ENOMEM ? err : -ESRCH;
		}
	}
	snprintf(path, sizeof(path), "%s/%d/exe", proc_root, pid);
	n = g->exe && *g->exe ? (ssize_t)snprintf(target, sizeof(target), "%s", g->exe)
			      : readlink(path, target, sizeof(target) - 1);
	if (n > 0 && (size_t)n < sizeof(target)) {
		target[n] = '\0';
		p->exe = strdup(target);
		if (!p->exe) {
			procsnap__free(p);
			return -ENOMEM;
		}
	}
	if (g->comm && *g->comm) {
		snprintf(p->comm, sizeof(p->comm), "%s", g->comm);
	} else {
		snprintf(path, sizeof(path), "%s/%d/comm", proc_root, pid);
		n = fdio__read_proc(path, p->comm, sizeof(p->comm) - 1);
		p->comm[n > 0 ? n : 0] = '\0';
		p->comm[strcspn(p->comm, "\n")] = '\0';
	}
	if (g->cmdline) {
		n = (ssize_t)(g->cmdline_len < PROCSNAP_MAX_CMDLINE ? g->cmdline_len
								    : PROCSNAP_MAX_CMDLINE);
		if (n > 0)
			memcpy(target, g->cmdline, (size_t)n);
	} else {
		/* Read into @target (PATH_MAX >= PROCSNAP_MAX_CMDLINE), kept at
		 * its length: a page-sized allocation per process cost an munmap. */
		snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, pid);
		n = fdio__read_proc(path, target, PROCSNAP_MAX_CMDLINE);
	}
	if (n > 0) {
		p->cmdline = malloc((size_t)n);
		if (!p->cmdline) {
			procsnap__free(p);
			return -ENOMEM;
		}
		memcpy(p->cmdline, target, (size_t)n);
		p->cmdline_len = (size_t)n;
	}
	read_container(proc_root, cgroup, css, cache, p);
	p->lasting = g->maps && g->comm && *g->comm && g->exe && *g->exe;
	*out = p;
	return 0;
}

int procsnap__read_cached(const char *proc_root, int pid, __u64 cgroup, __u64 css,
			  struct procsnap_cgroups *cache, struct procsnap **out)
{
	return read_snap(proc_root, pid, cgroup, css, cache, NULL, out);
}

int procsnap__read_given(const char *proc_root, int pid, __u64 cgroup, __u64 css,
			 struct procsnap_cgroups *cache, const struct procsnap_given *g,
			 struct procsnap **out)
{
	return read_snap(proc_root, pid, cgroup, css, cache, g, out);
}

struct procsnap *procsnap__get(struct procsnap *p)
{
	if (p)
		__atomic_fetch_add(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void procsnap__free(struct procsnap *p)
{
	if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL))
		return;
	procmaps__free(p->maps);
	free(p->exe);
	free(p->cmdline);
	free(p);
}

static char *exe_of(const char *root, int pid, const struct procsnap *snap)
{
	char path[96], buf[PATH_MAX];
	ssize_t n;

	if (snap && snap->pid == pid && snap->exe)
		return strdup(snap->exe);
	snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

int procsnap__maps_of(const char *proc_root, int pid, const struct procsnap *snap,
		      const struct procmaps **maps, struct procmaps **own, char **exe)
{
	const char *root = proc_root ? proc_root : "/proc";
	int err;

	*own = NULL;
	if (exe)
		*exe = NULL;
	if (snap && snap->pid == pid && snap->maps) {
		*maps = snap->maps;
	} else {
		err = procmaps__read_pid(NULL, root, pid, own);
		if (err)
			return err;
		*maps = *own;
	}
	if (exe)
		*exe = exe_of(root, pid, snap);
	return 0;
}

int procsnap__with_maps(const char *proc_root, int pid, const struct procsnap *snap,
			procsnap_maps_fn fn, void *ctx)
{
	const char *root = proc_root ? proc_root : "/proc";
	struct procmaps *own = NULL;
	const struct procmaps *maps;
	char *exe = NULL;
	int err;

	err = procsnap__maps_of(root, pid, snap, &maps, &own, &exe);
	if (err)
		return err;
	err = fn(root, pid, maps, exe, ctx);
	free(exe);
	procmaps__free(own);
	return err;
}
