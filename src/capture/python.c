/* python.c - the CPython processes of a session (see python.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "capture/ingest.h"
#include "capture/python.h"
#include "collect/sampler.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"
#include "symbolize/pyframes.h"
#include "util/array.h"
#include "util/log.h"

struct py_known {
	int pid;
	__s64 since; /* CLOCK_MONOTONIC when it was found */
};

struct capture_python {
	struct sampler *smp;
	struct pyframes *pf;
	struct py_known *procs;
	size_t n, cap;
	/* -v */
	__u64 found, not_walked, unsupported, failed;
};

struct capture_python *capture_python__new(struct sampler *smp)
{
	struct capture_python *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return NULL;
	cp->smp = smp;
	cp->pf = pyframes__new(NULL);
	if (!cp->pf) {
		free(cp);
		return NULL;
	}
	return cp;
}

void capture_python__free(struct capture_python *cp)
{
	if (!cp)
		return;
	pyframes__free(cp->pf);
	free(cp->procs);
	free(cp);
}

struct pyframes *capture_python__frames(struct capture_python *cp)
{
	return cp ? cp->pf : NULL;
}

static size_t find(const struct capture_python *cp, int pid)
{
	size_t i;

	for (i = 0; i < cp->n; i++)
		if (cp->procs[i].pid == pid)
			return i;
	return cp->n;
}

/* Forget entry @i: neither walked nor named any more. */
static void drop(struct capture_python *cp, size_t i)
{
	sampler__set_python(cp->smp, cp->procs[i].pid, NULL);
	pyframes__forget(cp->pf, cp->procs[i].pid);
	cp->procs[i] = cp->procs[--cp->n];
}

/* Can the process of snapshot @snap run CPython: a mapped file named
 * python* or libpython*? Cheap, and true of every interpreter
 * pyproc__locate() finds. */
static bool maybe_python(const struct procsnap *snap)
{
	size_t i, n = procmaps__count(snap->maps);

	for (i = 0; i < n; i++) {
		const char *p = procmaps__entry(snap->maps, i)->path, *b = strrchr(p, '/');

		b = b ? b + 1 : p;
		if (!strncmp(b, "python", 6) || !strncmp(b, "libpython", 9))
			return true;
	}
	return false;
}

int capture_python__process(struct capture_python *cp, int pid, const struct procsnap *snap,
			    __s64 now_ns)
{
	struct pyproc pp;
	size_t i;
	int err;

	if (!cp || pid <= 0)
		return 0;
	i = find(cp, pid);
	/* A snapshot from the kernel's records (lasting) has only the
	 * executable mappings, not the first one of each file that
	 * pyproc__locate() looks for: then it reads /proc/PID/maps, for what
	 * may be Python. */
	if (snap && snap->maps && !maybe_python(snap))
		err = -ENOENT;
	else
		err = pyproc__locate(NULL, pid, snap && snap->maps && !snap->lasting ? snap : NULL,
				     &pp);
	if (err) {
		if (err == -ENOTSUP)
			cp->unsupported++;
		else if (err != -ENOENT && err != -ESRCH)
			cp->failed++;
		if (i < cp->n) /* another program now (exec), or a PID reused */
			drop(cp, i);
		return 0;
	}
	if (i == cp->n) {
		if (array__grow((void **)&cp->procs, &cp->cap, cp->n, sizeof(*cp->procs), 16,
				CAPTURE_PY_PROCS))
			return 0;
		cp->n++;
		cp->found++;
	}
	cp->procs[i] = (struct py_known){.pid = pid, .since = now_ns};
	pyframes__set_process(cp->pf, pid, &pp);
	err = sampler__set_python(cp->smp, pid, &pp);
	if (err)
		cp->not_walked++;
	else
		pr_debug("process %d: Python %s%s, its frames walked", pid, pp.version,
			 pp.debug_offsets ? " (layout from its debug offsets)" : "");
	return 1;
}

__s64 capture_python__next_drain(const struct capture_python *cp, __s64 now_ns, __s64 next)
{
	size_t i;

	if (!cp || next <= now_ns + CAPTURE_PY_DRAIN_NS)
		return next;
	for (i = 0; i < cp->n; i++)
		if (now_ns - cp->procs[i].since < CAPTURE_PY_YOUNG_NS)
			return now_ns + CAPTURE_PY_DRAIN_NS;
	return next;
}

void capture_python__forget_gone(struct capture_python *cp)
{
	size_t i = 0;

	while (cp && i < cp->n) {
		if (kill(cp->procs[i].pid, 0) && errno == ESRCH)
			drop(cp, i);
		else
			i++;
	}
}

void capture_python__log(const struct capture_python *cp, const struct sampler_stats *st,
			 const struct ingest_counts *c)
{
	if (!cp || !(cp->found + cp->unsupported + cp->failed))
		return;
	pr_debug("Python: %llu processes found (%llu of them not walked), %llu of a version "
		 "profcap does not know, %llu not looked into (unreadable); %llu stacks walked "
		 "(%llu cut by a failed read, %llu at %u frames); last window: %llu samples with "
		 "Python frames, %llu cut, %llu with frames not named",
		 (unsigned long long)cp->found, (unsigned long long)cp->not_walked,
		 (unsigned long long)cp->unsupported, (unsigned long long)cp->failed,
		 (unsigned long long)st->py_stacks, (unsigned long long)st->py_partial,
		 (unsigned long long)st->py_trunc, SAMPLER_MAX_PYFRAMES,
		 (unsigned long long)c->py_samples, (unsigned long long)c->py_partial,
		 (unsigned long long)c->py_unknown);
}
