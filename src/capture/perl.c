/* perl.c - the Perl processes of the capture (see perl.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/perl.h"
#include "collect/sampler_perl.h"
#include "proc/perlproc.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "symbolize/perlframes.h"
#include "util/array.h"
#include "util/log.h"

struct perl_entry {
	int pid;
	int pending;	 /* Perl, its interpreter not up yet */
	__s64 first_ns;	 /* when found pending */
	__s64 tried_ns;	 /* last look */
};

struct capture_perl {
	struct sampler *smp;
	struct perlframes *pf;
	struct perl_entry *e;
	size_t n, cap;
	/* -v */
	unsigned long long found, not_walked, unsupported, failed;
};

/* The one registry (main thread only). */
static struct capture_perl *reg;

static __s64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__s64)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void capture_perl__release(void)
{
	if (!reg)
		return;
	perlframes__free(reg->pf);
	free(reg->e);
	free(reg);
	reg = NULL;
}

/* The registry for sampler @smp, made (or made again for a new sampler). */
static struct capture_perl *registry(struct sampler *smp)
{
	if (reg && reg->smp == smp)
		return reg;
	capture_perl__release();
	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return NULL;
	reg->smp = smp;
	reg->pf = perlframes__new(NULL);
	if (!reg->pf) {
		free(reg);
		reg = NULL;
	}
	return reg;
}

static size_t find(const struct capture_perl *cp, int pid)
{
	size_t i;

	for (i = 0; i < cp->n; i++)
		if (cp->e[i].pid == pid)
			return i;
	return cp->n;
}

/* Forget entry @i: neither walked nor named any more. */
static void drop(struct capture_perl *cp, size_t i)
{
	sampler__set_perl(cp->smp, cp->e[i].pid, NULL);
	perlframes__forget(cp->pf, cp->e[i].pid);
	cp->e[i] = cp->e[--cp->n];
}

void capture_perl__forget_gone(void)
{
	struct capture_perl *cp = reg;
	size_t i = 0;

	while (cp && i < cp->n) {
		if (kill(cp->e[i].pid, 0) && errno == ESRCH)
			drop(cp, i);
		else
			i++;
	}
}

/* Can the process of snapshot @snap run Perl: a mapped file named perl*
 * or libperl*? Cheap, and true of every process perlproc__locate() finds. */
static bool maybe_perl(const struct procsnap *snap)
{
	size_t i, n = procmaps__count(snap->maps);

	for (i = 0; i < n; i++) {
		const char *p = procmaps__entry(snap->maps, i)->path, *b = strrchr(p, '/');

		b = b ? b + 1 : p;
		if (!strncmp(b, "perl", 4) || !strncmp(b, "libperl", 7))
			return true;
	}
	return false;
}

/* Look at process @pid (entry @i, or cp->n when new). 1 when Perl. */
static int look(struct capture_perl *cp, size_t i, int pid, const struct procsnap *snap,
		__s64 now)
{
	struct perlproc pp;
	int err;

	err = snap && snap->maps && !maybe_perl(snap) ? -ENOENT
						       : perlproc__locate(NULL, pid, snap, &pp);
	if (err && err != -EAGAIN) {
		if (err == -ENOTSUP)
			cp->unsupported++;
		else if (err != -ENOENT && err != -ESRCH)
			cp->failed++;
		if (i < cp->n) /* another program now (exec), or a PID reused */
			drop(cp, i);
		return 0;
	}
	if (i == cp->n) {
		if (array__grow((void **)&cp->e, &cp->cap, cp->n, sizeof(*cp->e), 16,
				CAPTURE_PERL_PROCS))
			return 0;
		cp->e[cp->n++] = (struct perl_entry){.pid = pid, .first_ns = now};
		cp->found++;
	}
	cp->e[i].tried_ns = now;
	cp->e[i].pending = err == -EAGAIN;
	if (cp->e[i].pending)
		return 1;
	perlframes__set_process(cp->pf, pid, &pp);
	err = sampler__set_perl(cp->smp, pid, &pp);
	if (err)
		cp->not_walked++;
	else
		pr_debug("process %d: Perl %s, its Perl frames walked", pid, pp.version);
	return 1;
}

int capture_perl__process(struct sampler *smp, int pid, const struct procsnap *snap)
{
	struct capture_perl *cp = registry(smp);
	__s64 now = mono_ns();

	if (!cp || pid <= 0)
		return 0;
	return look(cp, find(cp, pid), pid, snap, now);
}

struct perlframes *capture_perl__frames_of(struct sampler *smp, int pid)
{
	size_t i;
	__s64 now;

	if (!reg || (i = find(reg, pid)) == reg->n)
		return NULL;
	/* a pending process is looked at again only while its sampler runs:
	 * records ingested after it is freed (the final settle) name what
	 * is known */
	if (reg->e[i].pending && smp && smp == reg->smp) {
		now = mono_ns();
		if (now - reg->e[i].first_ns > CAPTURE_PERL_PENDING_NS) {
			drop(reg, i);
			return NULL;
		}
		if (now - reg->e[i].tried_ns >= CAPTURE_PERL_RETRY_NS &&
		    !look(reg, i, pid, NULL, now))
			return NULL;
	}
	return perlframes__process(reg->pf, pid) ? reg->pf : NULL;
}

void capture_perl__log(void)
{
	struct perlframes_stats st;

	if (!reg || !(reg->found + reg->unsupported + reg->failed))
		return;
	perlframes__stats(reg->pf, &st);
	pr_debug("Perl: %llu processes found (%llu of them not walked), %llu of a build profcap "
		 "cannot read, %llu not looked into (unreadable); subs: %llu read, %llu from the "
		 "cache, %llu frames not named, %llu changed since the sample, %llu statements "
		 "read",
		 reg->found, reg->not_walked, reg->unsupported, reg->failed,
		 (unsigned long long)st.misses, (unsigned long long)st.hits,
		 (unsigned long long)st.unknown, (unsigned long long)st.changed,
		 (unsigned long long)st.cops);
}
