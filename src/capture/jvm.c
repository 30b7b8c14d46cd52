/* jvm.c - the HotSpot JVMs of a session (see jvm.h). */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/jvm.h"
#include "collect/record.h"
#include "collect/sampler_jvm.h"
#include "proc/jvmproc.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "symbolize/jvmframes.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/log.h"

/* A JVM still starting, looked at again when its samples come. */
struct jvm_pending {
	int pid;
	unsigned tries;
	__u64 next_ns; /* CLOCK_MONOTONIC of the next look */
};

struct capture_jvm {
	struct sampler *smp;
	struct jvmframes *jf;
	int *pids;
	size_t n, cap;
	struct jvm_pending pending[CAPTURE_JVM_PENDING];
	size_t npending;
	/* -v */
	__u64 found, not_walked, unsupported, failed, late, gave_up;
};

struct capture_jvm *capture_jvm__new(struct sampler *smp)
{
	struct capture_jvm *cj = calloc(1, sizeof(*cj));

	if (!cj)
		return NULL;
	cj->smp = smp;
	cj->jf = jvmframes__new(NULL);
	if (!cj->jf) {
		free(cj);
		return NULL;
	}
	return cj;
}

void capture_jvm__free(struct capture_jvm *cj)
{
	if (!cj)
		return;
	jvmframes__free(cj->jf);
	free(cj->pids);
	free(cj);
}

struct jvmframes *capture_jvm__frames(struct capture_jvm *cj)
{
	return cj ? cj->jf : NULL;
}

static size_t find(const struct capture_jvm *cj, int pid)
{
	size_t i;

	for (i = 0; i < cj->n; i++)
		if (cj->pids[i] == pid)
			return i;
	return cj->n;
}

static size_t find_pending(const struct capture_jvm *cj, int pid)
{
	size_t i;

	for (i = 0; i < cj->npending; i++)
		if (cj->pending[i].pid == pid)
			return i;
	return cj->npending;
}

static void drop_pending(struct capture_jvm *cj, size_t i)
{
	cj->pending[i] = cj->pending[--cj->npending];
}

/* Forget entry @i: neither walked nor named any more. */
static void drop(struct capture_jvm *cj, size_t i)
{
	sampler__set_jvm(cj->smp, cj->pids[i], NULL);
	jvmframes__forget(cj->jf, cj->pids[i]);
	cj->pids[i] = cj->pids[--cj->n];
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* What the snapshot @snap says: 2 libjvm is mapped (look now), 1 a Java
 * launcher that has not mapped it yet (look later), 0 not a JVM. */
static int maybe_jvm(const struct procsnap *snap)
{
	size_t i, n = procmaps__count(snap->maps);

	for (i = 0; i < n; i++)
		if (!strcmp(base_name(procmaps__entry(snap->maps, i)->path), "libjvm.so"))
			return 2;
	if ((snap->exe && !strcmp(base_name(snap->exe), "java")) || !strcmp(snap->comm, "java"))
		return 1;
	return 0;
}

/* Look for HotSpot in @pid now. 1 found, 0 not (a JVM still starting is
 * kept pending when @may_wait). */
static int look(struct capture_jvm *cj, int pid, bool may_wait)
{
	size_t i = find(cj, pid), p;
	struct jvmproc jp;
	bool added;
	int err;

	err = jvmproc__locate(NULL, pid, NULL, &jp);
	if (err) {
		if (err == -ENOTSUP)
			cj->unsupported++;
		else if (err != -ENOENT && err != -ESRCH && err != -EAGAIN)
			cj->failed++;
		if (i < cj->n) /* another program now (exec), or a PID reused */
			drop(cj, i);
		p = find_pending(cj, pid);
		if ((err == -EAGAIN || err == -ENOENT) && may_wait && p == cj->npending &&
		    cj->npending < CAPTURE_JVM_PENDING)
			cj->pending[cj->npending++] = (struct jvm_pending){
				.pid = pid, .next_ns = clock__mono_ns() + CAPTURE_JVM_RETRY_NS};
		return 0;
	}
	p = find_pending(cj, pid);
	if (p < cj->npending) {
		drop_pending(cj, p);
		cj->late++;
	}
	added = i == cj->n;
	if (added) {
		if (array__grow((void **)&cj->pids, &cj->cap, cj->n, sizeof(*cj->pids), 16,
				CAPTURE_JVM_PROCS))
			return 0;
		cj->n++;
		cj->found++;
	}
	cj->pids[i] = pid;
	jvmframes__set_process(cj->jf, pid, &jp);
	err = sampler__set_jvm(cj->smp, pid, &jp);
	if (err && added)
		cj->not_walked++;
	else if (!err && added)
		pr_debug("process %d: HotSpot JVM %u, its Java frames walked", pid, jp.major);
	return 1;
}

int capture_jvm__process(struct capture_jvm *cj, int pid, const struct procsnap *snap)
{
	size_t i, p;
	int kind = 2;

	if (!cj || pid <= 0)
		return 0;
	if (snap && snap->maps)
		kind = maybe_jvm(snap);
	if (!kind) {
		i = find(cj, pid);
		if (i < cj->n) /* exec()ed another program */
			drop(cj, i);
		p = find_pending(cj, pid);
		if (p < cj->npending)
			drop_pending(cj, p);
		return 0;
	}
	return look(cj, pid, true);
}

void capture_jvm__record(struct capture_jvm *cj, const struct sampler_record *r)
{
	struct jvm_pending *jp;
	size_t p;
	__u64 now;

	if (!cj || !cj->npending)
		return;
	p = find_pending(cj, (int)r->tgid);
	if (p == cj->npending)
		return;
	jp = &cj->pending[p];
	now = clock__mono_ns();
	if (now < jp->next_ns)
		return;
	if (++jp->tries >= CAPTURE_JVM_TRIES) {
		cj->gave_up++;
		drop_pending(cj, p);
		return;
	}
	jp->next_ns = now + CAPTURE_JVM_RETRY_NS;
	look(cj, (int)r->tgid, false);
}

void capture_jvm__forget_gone(struct capture_jvm *cj)
{
	size_t i = 0;

	while (cj && i < cj->n) {
		if (kill(cj->pids[i], 0) && errno == ESRCH)
			drop(cj, i);
		else
			i++;
	}
	i = 0;
	while (cj && i < cj->npending) {
		if (kill(cj->pending[i].pid, 0) && errno == ESRCH)
			drop_pending(cj, i);
		else
			i++;
	}
}

void capture_jvm__log(const struct capture_jvm *cj)
{
	struct jvmframes_stats st;

	if (!cj || !(cj->found + cj->unsupported + cj->failed + cj->npending))
		return;
	jvmframes__stats(cj->jf, &st);
	pr_debug("JVM: %llu processes found (%llu once started, %llu of them not walked), %llu of "
		 "a build profcap cannot read, %llu not looked into (unreadable), %llu given up "
		 "while starting, %zu still starting; methods: %llu read, %llu from the cache, "
		 "%llu frames not named, %llu changed since the sample, %llu inlined frames",
		 (unsigned long long)cj->found, (unsigned long long)cj->late,
		 (unsigned long long)cj->not_walked, (unsigned long long)cj->unsupported,
		 (unsigned long long)cj->failed, (unsigned long long)cj->gave_up, cj->npending,
		 (unsigned long long)st.misses, (unsigned long long)st.hits,
		 (unsigned long long)st.unknown, (unsigned long long)st.changed,
		 (unsigned long long)st.inlined);
}
