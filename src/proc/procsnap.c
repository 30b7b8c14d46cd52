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

int procsnap__read(const char *proc_root, int pid, struct procsnap **out)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct procsnap *p;
	struct timespec ts;
	ssize_t n;
	int err;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->refs = 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->at_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
	err = procmaps__read(path, &p->maps);
	if (err) {
		procsnap__free(p);
		return err == -ENOMEM ? err : -ESRCH;
	}
	snprintf(path, sizeof(path), "%s/%d/exe", proc_root, pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		p->exe = strdup(target);
		if (!p->exe) {
			procsnap__free(p);
			return -ENOMEM;
		}
	}
	snprintf(path, sizeof(path), "%s/%d/comm", proc_root, pid);
	n = fdio__read_proc(path, p->comm, sizeof(p->comm) - 1);
	p->comm[n > 0 ? n : 0] = '\0';
	p->comm[strcspn(p->comm, "\n")] = '\0';
	/* Read into @target (PATH_MAX >= PROCSNAP_MAX_CMDLINE), kept at its
	 * length: a page-sized allocation per process cost an munmap. */
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, pid);
	n = fdio__read_proc(path, target, PROCSNAP_MAX_CMDLINE);
	if (n > 0) {
		p->cmdline = malloc((size_t)n);
		if (!p->cmdline) {
			procsnap__free(p);
			return -ENOMEM;
		}
		memcpy(p->cmdline, target, (size_t)n);
		p->cmdline_len = (size_t)n;
	}
	/* Here rather than where the process is described: a short-lived
	 * one is gone by then, and its samples lost their container. */
	if (container__id_of(proc_root, pid, p->container_id, sizeof(p->container_id)))
		p->container_id[0] = '\0';
	*out = p;
	return 0;
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
