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
	n = fdio__read_file(path, p->comm, sizeof(p->comm) - 1);
	p->comm[n > 0 ? n : 0] = '\0';
	p->comm[strcspn(p->comm, "\n")] = '\0';
	p->cmdline = malloc(PROCSNAP_MAX_CMDLINE);
	if (!p->cmdline) {
		procsnap__free(p);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, pid);
	n = fdio__read_file(path, p->cmdline, PROCSNAP_MAX_CMDLINE);
	p->cmdline_len = n > 0 ? (size_t)n : 0;
	*out = p;
	return 0;
}

void procsnap__free(struct procsnap *p)
{
	if (!p)
		return;
	procmaps__free(p->maps);
	free(p->exe);
	free(p->cmdline);
	free(p);
}
