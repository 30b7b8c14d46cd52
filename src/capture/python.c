/* python.c - the CPython processes of a session (see python.h). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
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

/* A process named python* not running Python yet, looked at again. */
struct py_pending {
	int pid;
	__s64 since; /* CLOCK_MONOTONIC when it was first looked at */
};

struct capture_python {
	struct sampler *smp;
	struct pyframes *pf;
	struct pyproc_files *files; /* executables without an interpreter */
	struct py_known *procs;
	size_t n, cap;
	struct py_pending pending[CAPTURE_PY_PENDING];
	size_t npending;
	__s64 next_notices, last_found;
	__u64 cut, cut_depth; /* this window's samples: Python stack cut, native whole */
	/* -v */
	__u64 found, not_walked, unsupported, failed, found_late, pending_full;
};

struct capture_python *capture_python__new(struct sampler *smp)
{
	struct capture_python *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return NULL;
	cp->smp = smp;
	cp->pf = pyframes__new(NULL);
	cp->files = pyproc_files__new();
	cp->last_found = INT64_MIN / 2;
	if (!cp->pf || !cp->files) {
		capture_python__free(cp);
		return NULL;
	}
	return cp;
}

void capture_python__free(struct capture_python *cp)
{
	if (!cp)
		return;
	pyframes__free(cp->pf);
	pyproc_files__free(cp->files);
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

static void unpend(struct capture_python *cp, int pid)
{
	size_t i;

	for (i = 0; i < cp->npending; i++)
		if (cp->pending[i].pid == pid) {
			cp->pending[i] = cp->pending[--cp->npending];
			return;
		}
}

/* May the process of snapshot @snap run Python once ld.so has mapped its
 * libraries: a mapped file named python* (pyenv's python3.12 is a small
 * program linking libpython)? */
static bool named_python(const struct procsnap *snap)
{
	size_t i, n = snap && snap->maps ? procmaps__count(snap->maps) : 0;

	for (i = 0; i < n; i++) {
		const char *p = procmaps__entry(snap->maps, i)->path, *b = strrchr(p, '/');

		if (!strncmp(b ? b + 1 : p, "python", 6))
			return true;
	}
	return false;
}

/* Look at @pid again at the next polls while it is young (not when it
 * is known already). */
static void pend(struct capture_python *cp, int pid, __s64 now_ns)
{
	size_t i;

	for (i = 0; i < cp->npending; i++)
		if (cp->pending[i].pid == pid)
			return;
	if (cp->npending == CAPTURE_PY_PENDING) {
		cp->pending_full++;
		return;
	}
	cp->pending[cp->npending++] = (struct py_pending){.pid = pid, .since = now_ns};
}

/* Process @pid runs @pp: walked and named from now on. 1, or 0 when no
 * more can be kept. */
static int add(struct capture_python *cp, int pid, const struct pyproc *pp, __s64 now_ns)
{
	size_t i = find(cp, pid);
	int err;

	if (i == cp->n) {
		if (array__grow((void **)&cp->procs, &cp->cap, cp->n, sizeof(*cp->procs), 16,
				CAPTURE_PY_PROCS))
			return 0;
		cp->n++;
		cp->found++;
	}
	cp->procs[i] = (struct py_known){.pid = pid, .since = now_ns};
	cp->last_found = now_ns;
	pyframes__set_process(cp->pf, pid, pp);
	err = sampler__set_python(cp->smp, pid, pp);
	if (err)
		cp->not_walked++;
	else
		pr_debug("process %d: Python %s%s, its frames walked", pid, pp->version,
			 pp->debug_offsets ? " (layout from its debug offsets)" : "");
	return 1;
}

int capture_python__process(struct capture_python *cp, int pid, const struct procsnap *snap,
			    __s64 now_ns)
{
	struct pyproc pp;
	size_t i;
	int err;

	if (!cp || pid <= 0)
		return 0;
	unpend(cp, pid);
	err = pyproc__locate(NULL, pid, snap, cp->files, &pp);
	if (err) {
		if (err == -ENOTSUP)
			cp->unsupported++;
		else if (err != -ENOENT && err != -ESRCH)
			cp->failed++;
		i = find(cp, pid);
		if (i < cp->n) /* another program now (exec), or a PID reused */
			drop(cp, i);
		else if (err == -ENOENT && named_python(snap))
			pend(cp, pid, now_ns);
		return 0;
	}
	return add(cp, pid, &pp, now_ns);
}

void capture_python__retry(struct capture_python *cp, __s64 now_ns)
{
	struct procsnap snap;
	struct pyproc pp;
	size_t i = 0;
	int err;

	while (cp && i < cp->npending) {
		struct py_pending *p = &cp->pending[i];

		if (now_ns - p->since > CAPTURE_PY_RETRY_NS) {
			*p = cp->pending[--cp->npending];
			continue;
		}
		memset(&snap, 0, sizeof(snap));
		snap.pid = p->pid;
		if (sampler__process_maps(cp->smp, p->pid, &snap.maps))
			snap.maps = NULL; /* then /proc/PID/maps */
		err = pyproc__locate(NULL, p->pid, &snap, cp->files, &pp);
		procmaps__free(snap.maps);
		if (err == -ENOENT) {
			i++;
			continue;
		}
		if (!err) {
			cp->found_late++;
			add(cp, p->pid, &pp, now_ns);
		} else if (err == -ENOTSUP) {
			cp->unsupported++;
		}
		*p = cp->pending[--cp->npending]; /* found, gone or unreadable */
	}
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

bool capture_python__notices_due(struct capture_python *cp, __s64 now_ns)
{
	if (!cp || now_ns < cp->next_notices)
		return false;
	cp->next_notices =
		now_ns + (now_ns - cp->last_found < CAPTURE_PY_BUSY_NS ? CAPTURE_PY_NOTICES_BUSY_NS
								       : CAPTURE_PY_NOTICES_NS);
	return true;
}

__s64 capture_python__next_wake(const struct capture_python *cp, __s64 wake)
{
	return cp && cp->next_notices < wake ? cp->next_notices : wake;
}

void capture_python__record(struct capture_python *cp, const struct sampler_record *r)
{
	const __u32 native =
		SAMPLER_REC_USTACK_TRUNC | SAMPLER_REC_KSTACK_TRUNC | SAMPLER_REC_USTACK_PARTIAL;
	const __u32 py = SAMPLER_REC_PY_TRUNC | SAMPLER_REC_PY_PARTIAL | SAMPLER_REC_PY_LOST;

	if (!cp || r->kind != SAMPLER_KIND_CPU || !(r->flags & py) || (r->flags & native))
		return;
	cp->cut += r->count;
	if (r->flags & SAMPLER_REC_PY_TRUNC)
		cp->cut_depth += r->count;
}

__u64 capture_python__take_cut(struct capture_python *cp, __u64 *depth)
{
	__u64 n = cp ? cp->cut : 0;

	*depth = cp ? cp->cut_depth : 0;
	if (cp)
		cp->cut = cp->cut_depth = 0;
	return n;
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
	__u64 read, known;

	if (!cp || !(cp->found + cp->unsupported + cp->failed))
		return;
	pyproc_files__stats(cp->files, &read, &known);
	pr_debug("Python: %llu processes found (%llu of them not walked, %llu once their "
		 "libpython was mapped), %llu of a version profcap does not know, %llu not "
		 "looked into (unreadable), %llu python* processes not looked at again (%u were "
		 "waiting); executables looked into by their exports %llu, known without Python "
		 "%llu times; %llu stacks walked (%llu cut by a failed read, %llu at %u frames); "
		 "last window: %llu samples with Python frames, %llu cut, %llu with frames not "
		 "named",
		 (unsigned long long)cp->found, (unsigned long long)cp->not_walked,
		 (unsigned long long)cp->found_late, (unsigned long long)cp->unsupported,
		 (unsigned long long)cp->failed, (unsigned long long)cp->pending_full,
		 CAPTURE_PY_PENDING, (unsigned long long)read, (unsigned long long)known,
		 (unsigned long long)st->py_stacks, (unsigned long long)st->py_partial,
		 (unsigned long long)st->py_trunc, SAMPLER_MAX_PYFRAMES,
		 (unsigned long long)c->py_samples, (unsigned long long)c->py_partial,
		 (unsigned long long)c->py_unknown);
}
