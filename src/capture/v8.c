/* v8.c - the V8 processes of a session (see v8.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "capture/v8.h"
#include "collect/sampler_v8.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/v8proc.h"
#include "symbolize/v8frames.h"
#include "util/array.h"
#include "util/log.h"

struct capture_v8 {
	struct sampler *smp;
	struct v8frames *vf;
	int *pids;
	size_t n, cap;
	/* -v */
	__u64 found, not_walked, unsupported, failed;
};

struct capture_v8 *capture_v8__new(struct sampler *smp)
{
	struct capture_v8 *cv = calloc(1, sizeof(*cv));

	if (!cv)
		return NULL;
	cv->smp = smp;
	cv->vf = v8frames__new(NULL);
	if (!cv->vf) {
		free(cv);
		return NULL;
	}
	return cv;
}

void capture_v8__free(struct capture_v8 *cv)
{
	if (!cv)
		return;
	v8frames__free(cv->vf);
	free(cv->pids);
	free(cv);
}

struct v8frames *capture_v8__frames(struct capture_v8 *cv)
{
	return cv ? cv->vf : NULL;
}

static size_t find(const struct capture_v8 *cv, int pid)
{
	size_t i;

	for (i = 0; i < cv->n; i++)
		if (cv->pids[i] == pid)
			return i;
	return cv->n;
}

/* Forget entry @i: neither walked nor named any more. */
static void drop(struct capture_v8 *cv, size_t i)
{
	sampler__set_v8(cv->smp, cv->pids[i], NULL);
	v8frames__forget(cv->vf, cv->pids[i]);
	cv->pids[i] = cv->pids[--cv->n];
}

/* Can the process of snapshot @snap run V8: a mapped file named node* or
 * libnode*? Cheap, and true of every process v8proc__locate() finds. */
static bool maybe_node(const struct procsnap *snap)
{
	size_t i, n = procmaps__count(snap->maps);

	for (i = 0; i < n; i++) {
		const char *p = procmaps__entry(snap->maps, i)->path, *b = strrchr(p, '/');

		b = b ? b + 1 : p;
		if (!strncmp(b, "node", 4) || !strncmp(b, "libnode", 7))
			return true;
	}
	return false;
}

int capture_v8__process(struct capture_v8 *cv, int pid, const struct procsnap *snap)
{
	struct v8proc vp;
	size_t i;
	int err;

	if (!cv || pid <= 0)
		return 0;
	i = find(cv, pid);
	/* The mappings are read from /proc/PID/maps: a snapshot from the
	 * kernel's records may predate the copy of the builtins V8 maps. */
	if (snap && snap->maps && !maybe_node(snap))
		err = -ENOENT;
	else
		err = v8proc__locate(NULL, pid, NULL, &vp);
	if (err) {
		if (err == -ENOTSUP)
			cv->unsupported++;
		else if (err != -ENOENT && err != -ESRCH)
			cv->failed++;
		if (i < cv->n) /* another program now (exec), or a PID reused */
			drop(cv, i);
		return 0;
	}
	if (i == cv->n) {
		if (array__grow((void **)&cv->pids, &cv->cap, cv->n, sizeof(*cv->pids), 16,
				CAPTURE_V8_PROCS))
			return 0;
		cv->n++;
		cv->found++;
	}
	cv->pids[i] = pid;
	v8frames__set_process(cv->vf, pid, &vp);
	err = sampler__set_v8(cv->smp, pid, &vp);
	if (err)
		cv->not_walked++;
	else
		pr_debug("process %d: V8 %s, its JavaScript frames walked", pid, vp.version);
	return 1;
}

void capture_v8__forget_gone(struct capture_v8 *cv)
{
	size_t i = 0;

	while (cv && i < cv->n) {
		if (kill(cv->pids[i], 0) && errno == ESRCH)
			drop(cv, i);
		else
			i++;
	}
}

void capture_v8__log(const struct capture_v8 *cv)
{
	struct v8frames_stats st;

	if (!cv || !(cv->found + cv->unsupported + cv->failed))
		return;
	v8frames__stats(cv->vf, &st);
	pr_debug("V8: %llu processes found (%llu of them not walked), %llu of a build profcap "
		 "cannot read, %llu not looked into (unreadable); functions: %llu read, %llu "
		 "from the cache, %llu frames not named, %llu changed since the sample, %llu "
		 "scripts read",
		 (unsigned long long)cv->found, (unsigned long long)cv->not_walked,
		 (unsigned long long)cv->unsupported, (unsigned long long)cv->failed,
		 (unsigned long long)st.misses, (unsigned long long)st.hits,
		 (unsigned long long)st.unknown, (unsigned long long)st.changed,
		 (unsigned long long)st.scripts);
}
