/* php.c - the PHP processes of a session (see php.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "capture/php.h"
#include "collect/sampler_php.h"
#include "proc/phpproc.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "symbolize/phpframes.h"
#include "util/array.h"
#include "util/log.h"

struct capture_php {
	struct sampler *smp;
	struct phpframes *pf;
	int *pids;
	size_t n, cap;
	/* -v */
	__u64 found, not_walked, unsupported, failed;
};

struct capture_php *capture_php__new(struct sampler *smp)
{
	struct capture_php *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return NULL;
	cp->smp = smp;
	cp->pf = phpframes__new(NULL);
	if (!cp->pf) {
		free(cp);
		return NULL;
	}
	return cp;
}

void capture_php__free(struct capture_php *cp)
{
	if (!cp)
		return;
	phpframes__free(cp->pf);
	free(cp->pids);
	free(cp);
}

struct phpframes *capture_php__frames(struct capture_php *cp)
{
	return cp ? cp->pf : NULL;
}

static size_t find(const struct capture_php *cp, int pid)
{
	size_t i;

	for (i = 0; i < cp->n; i++)
		if (cp->pids[i] == pid)
			return i;
	return cp->n;
}

/* Forget entry @i: neither walked nor named any more. */
static void drop(struct capture_php *cp, size_t i)
{
	sampler__set_php(cp->smp, cp->pids[i], NULL);
	phpframes__forget(cp->pf, cp->pids[i]);
	cp->pids[i] = cp->pids[--cp->n];
}

/* Can the process of snapshot @snap run PHP: a mapped file named php* or
 * libphp*.so? Cheap, and true of every process phpproc__locate() finds. */
static bool maybe_php(const struct procsnap *snap)
{
	size_t i, n = procmaps__count(snap->maps);

	for (i = 0; i < n; i++) {
		const char *p = procmaps__entry(snap->maps, i)->path, *b = strrchr(p, '/');

		if (phpproc__is_php_name(b ? b + 1 : p))
			return true;
	}
	return false;
}

int capture_php__process(struct capture_php *cp, int pid, const struct procsnap *snap)
{
	struct phpproc pp;
	size_t i;
	int err;

	if (!cp || pid <= 0)
		return 0;
	i = find(cp, pid);
	if (snap && snap->maps && !maybe_php(snap))
		err = -ENOENT;
	else
		err = phpproc__locate(NULL, pid, snap && snap->maps ? snap : NULL, &pp);
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
		if (array__grow((void **)&cp->pids, &cp->cap, cp->n, sizeof(*cp->pids), 16,
				CAPTURE_PHP_PROCS))
			return 0;
		cp->n++;
		cp->found++;
	}
	cp->pids[i] = pid;
	phpframes__set_process(cp->pf, pid, &pp);
	err = sampler__set_php(cp->smp, pid, &pp);
	if (err)
		cp->not_walked++;
	else
		pr_debug("process %d: PHP %s, its PHP frames walked", pid, pp.version);
	return 1;
}

void capture_php__forget_gone(struct capture_php *cp)
{
	size_t i = 0;

	while (cp && i < cp->n) {
		if (kill(cp->pids[i], 0) && errno == ESRCH)
			drop(cp, i);
		else
			i++;
	}
}

void capture_php__log(const struct capture_php *cp)
{
	struct phpframes_stats st;

	if (!cp || !(cp->found + cp->unsupported + cp->failed))
		return;
	phpframes__stats(cp->pf, &st);
	pr_debug("PHP: %llu processes found (%llu of them not walked), %llu of a build profcap "
		 "cannot read, %llu not looked into (unreadable); functions: %llu read, %llu "
		 "from the cache, %llu frames not named, %llu changed since the sample",
		 (unsigned long long)cp->found, (unsigned long long)cp->not_walked,
		 (unsigned long long)cp->unsupported, (unsigned long long)cp->failed,
		 (unsigned long long)st.misses, (unsigned long long)st.hits,
		 (unsigned long long)st.unknown, (unsigned long long)st.changed);
}
