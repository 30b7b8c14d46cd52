/* comm_hint.c - --comm given a program's name (see comm_hint.h). */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture/comm_hint.h"
#include "collect/target.h"
#include "proc/procmaps.h"
#include "util/fdio.h"
#include "util/log.h"

/* Processes comm_hint__warn() looks at, at most. */
#define HINT_MAX_PROCS 65536

void comm_hint__warn(const struct target_opts *t)
{
	char path[64], exe[PATH_MAX], comm[32];
	const char *base;
	struct dirent *e;
	size_t seen = 0, i;
	ssize_t n;
	DIR *d;

	if (!t->ncomms || !(d = opendir("/proc")))
		return;
	while ((e = readdir(d)) && seen++ < HINT_MAX_PROCS) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/exe", e->d_name);
		n = readlink(path, exe, sizeof(exe) - 1);
		if (n <= 0)
			continue;
		exe[n] = '\0';
		if (n > (ssize_t)strlen(PROCMAPS_DELETED_SUFFIX) &&
		    !strcmp(exe + n - strlen(PROCMAPS_DELETED_SUFFIX), PROCMAPS_DELETED_SUFFIX))
			exe[n - strlen(PROCMAPS_DELETED_SUFFIX)] = '\0';
		base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		for (i = 0; i < t->ncomms && strcmp(base, t->comms[i]); i++)
			;
		if (i == t->ncomms)
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/comm", e->d_name);
		n = fdio__read_proc(path, comm, sizeof(comm) - 1);
		if (n <= 0)
			continue;
		comm[n] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		if (!strcmp(comm, t->comms[i]))
			continue; /* its threads are named so: idle */
		pr_warn("--comm matches thread names (the kernel's task name), not programs: "
			"process %s runs %s with its main thread named '%s'; use --comm '%s' or -p "
			"%s",
			e->d_name, base, comm, comm, e->d_name);
		break;
	}
	closedir(d);
}
