/* ruby.c - the CRuby processes of a session (see ruby.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "capture/ruby.h"
#include "collect/sampler_ruby.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/rubyproc.h"
#include "symbolize/rubyframes.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/log.h"

/* A process with a ruby* file mapped but no VM found (the loader has not
 * mapped libruby yet) or one that did not read right (a VM starting) is
 * looked at again for PENDING_NS, at most PENDING_MAX at once. */
#define PENDING_NS 2000000000ll
#define PENDING_MAX 64
#define RETRY_EVERY_NS 100000000ll /* however often processes are announced */

struct pending {
	int pid;
	int err;
	__s64 since;
};

struct capture_ruby {
	struct sampler *smp;
	struct rubyframes *rf;
	int *pids;
	size_t n, cap;
	struct pending pend[PENDING_MAX];
	size_t npend;
	__s64 last_retry;
	bool warned_layout;
	/* -v */
	__u64 found, not_walked, unsupported, failed;
};

struct capture_ruby *capture_ruby__new(struct sampler *smp)
{
	struct capture_ruby *cr = calloc(1, sizeof(*cr));

	if (!cr)
		return NULL;
	cr->smp = smp;
	cr->rf = rubyframes__new(NULL);
	if (!cr->rf) {
		free(cr);
		return NULL;
	}
	return cr;
}

void capture_ruby__free(struct capture_ruby *cr)
{
	if (!cr)
		return;
	rubyframes__free(cr->rf);
	free(cr->pids);
	free(cr);
}

struct rubyframes *capture_ruby__frames(struct capture_ruby *cr)
{
	return cr ? cr->rf : NULL;
}

static size_t find(const struct capture_ruby *cr, int pid)
{
	size_t i;

	for (i = 0; i < cr->n; i++)
		if (cr->pids[i] == pid)
			return i;
	return cr->n;
}

/* Forget entry @i: neither walked nor named any more. */
static void drop(struct capture_ruby *cr, size_t i)
{
	sampler__set_ruby(cr->smp, cr->pids[i], NULL);
	rubyframes__forget(cr->rf, cr->pids[i]);
	cr->pids[i] = cr->pids[--cr->n];
}

/* Can the process of snapshot @snap run CRuby: a mapped file named ruby*
 * or libruby*? Cheap, and true of every process rubyproc__locate() finds. */
static bool maybe_ruby(const struct procsnap *snap)
{
	size_t i, n = procmaps__count(snap->maps);

	for (i = 0; i < n; i++) {
		const char *p = procmaps__entry(snap->maps, i)->path, *b = strrchr(p, '/');

		b = b ? b + 1 : p;
		if (!strncmp(b, "ruby", 4) || !strncmp(b, "libruby", 7))
			return true;
	}
	return false;
}

/* Hand process @pid, found running @rp, to the walker and the namer. */
static void add(struct capture_ruby *cr, int pid, const struct rubyproc *rp)
{
	size_t i = find(cr, pid);
	int err;

	if (i == cr->n) {
		if (array__grow((void **)&cr->pids, &cr->cap, cr->n, sizeof(*cr->pids), 16,
				CAPTURE_RUBY_PROCS))
			return;
		cr->n++;
		cr->found++;
	}
	cr->pids[i] = pid;
	rubyframes__set_process(cr->rf, pid, rp);
	err = sampler__set_ruby(cr->smp, pid, rp);
	if (err)
		cr->not_walked++;
	else
		pr_debug("process %d: Ruby %s, its Ruby frames walked%s", pid, rp->version,
			 rp->checked ? "" : " (its VM not up yet)");
}

static void pend(struct capture_ruby *cr, int pid, int err)
{
	size_t i;

	for (i = 0; i < cr->npend; i++)
		if (cr->pend[i].pid == pid)
			return;
	if (cr->npend < PENDING_MAX)
		cr->pend[cr->npend++] = (struct pending){pid, err, (__s64)clock__mono_ns()};
}

/* Give up on pending entry @i (found or too old). */
static void unpend(struct capture_ruby *cr, size_t i)
{
	cr->pend[i] = cr->pend[--cr->npend];
}

int capture_ruby__process(struct capture_ruby *cr, int pid, const struct procsnap *snap)
{
	struct rubyproc rp;
	bool named;
	size_t i;
	int err;

	if (!cr || pid <= 0)
		return 0;
	capture_ruby__retry(cr);
	i = find(cr, pid);
	/* The mappings are read from /proc/PID/maps: a snapshot taken early
	 * may predate the loader's mapping of libruby. */
	named = snap && snap->maps && maybe_ruby(snap);
	if (snap && snap->maps && !named)
		err = -ENOENT;
	else
		err = rubyproc__locate(NULL, pid, NULL, &rp);
	if (err) {
		if (err == -ENOTSUP || (err == -ENOENT && named))
			pend(cr, pid, err);
		else if (err != -ENOENT && err != -ESRCH)
			cr->failed++;
		if (i < cr->n) /* another program now (exec), or a PID reused */
			drop(cr, i);
		return 0;
	}
	add(cr, pid, &rp);
	return 1;
}

void capture_ruby__retry(struct capture_ruby *cr)
{
	struct rubyproc rp;
	__s64 now = (__s64)clock__mono_ns();
	size_t i = 0;
	int err;

	if (!cr || !cr->npend || now - cr->last_retry < RETRY_EVERY_NS)
		return;
	cr->last_retry = now;
	while (i < cr->npend) {
		struct pending *p = &cr->pend[i];

		err = rubyproc__locate(NULL, p->pid, NULL, &rp);
		if (!err) {
			add(cr, p->pid, &rp);
			unpend(cr, i);
			continue;
		}
		if (err == -ENOTSUP || err == -ENOENT)
			p->err = err;
		if (err != -ENOTSUP && err != -ENOENT) {
			unpend(cr, i); /* gone */
			continue;
		}
		if (now - p->since < PENDING_NS) {
			i++;
			continue;
		}
		if (p->err == -ENOTSUP) {
			cr->unsupported++;
			if (!cr->warned_layout)
				pr_warn("Ruby process %d: its VM does not read as profcap's layout "
					"for its version says (a patched build?), its Ruby frames "
					"are not read",
					p->pid);
			cr->warned_layout = true;
		}
		unpend(cr, i);
	}
}

void capture_ruby__forget_gone(struct capture_ruby *cr)
{
	size_t i = 0;

	while (cr && i < cr->n) {
		if (kill(cr->pids[i], 0) && errno == ESRCH)
			drop(cr, i);
		else
			i++;
	}
}

void capture_ruby__log(const struct capture_ruby *cr)
{
	struct rubyframes_stats st;

	if (!cr || !(cr->found + cr->unsupported + cr->failed))
		return;
	rubyframes__stats(cr->rf, &st);
	pr_debug("Ruby: %llu processes found (%llu of them not walked), %llu of a version or "
		 "build profcap cannot read, %llu not looked into (unreadable); iseqs: %llu read, "
		 "%llu from the cache, %llu frames not named, %llu changed since the sample",
		 (unsigned long long)cr->found, (unsigned long long)cr->not_walked,
		 (unsigned long long)cr->unsupported, (unsigned long long)cr->failed,
		 (unsigned long long)st.misses, (unsigned long long)st.hits,
		 (unsigned long long)st.unknown, (unsigned long long)st.changed);
}
