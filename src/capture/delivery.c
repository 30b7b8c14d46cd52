/* delivery.c - one delivery policy for every output (see delivery.h).
 *
 * Per capture: the file first (-o, the default name, or a window file in
 * --output-dir, re-created if it was moved or removed); a file that cannot
 * be written is rescued to $TMPDIR (then /tmp). Then the export: at once for
 * `capture`, on a worker thread for agent windows so a slow or dead endpoint
 * never stretches the windows. An export that fails leaves the OTLP capture
 * in the -o file when that file is OTLP and is never trimmed, otherwise in
 * the spool directory. The last capture of a run stopped by a signal is
 * spooled first and then given a short bounded try, so a container's grace
 * period never loses it.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/delivery.h"
#include "export/sink.h"
#include "export/spool.h"
#include "util/log.h"

#define OUTPUT_MAX_BYTES (1ull << 30)
#define QUEUE_MAX_JOBS 8 /* windows waiting for the endpoint */
#define QUEUE_MAX_BYTES (256ull << 20)

/* One capture waiting for (or in) its export. */
struct job {
	struct buf otlp;
	char kept[4096]; /* where the capture stays if the export fails ("" = nowhere yet) */
	bool spooled;	 /* @kept is a spool file made before the export */
	int result;	 /* exit code once done */
	bool last;	 /* the run's last capture */
	bool finished;	 /* the export returned (its outcome is being handled) */
	struct job *next;
};

struct delivery {
	struct delivery_opts o;
	struct sink *sink;	 /* the -o file (or default name); NULL otherwise */
	struct otlp_config *cfg; /* the endpoint; NULL when not exporting */
	struct exporter *exp;
	char spool_dir[4096];
	bool warned_dir; /* --output-dir was re-created */
	/* the export worker (agent) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t worker;
	bool have_worker, stopping, worker_left;
	struct job *head, *tail, *busy; /* queue; the job being exported */
	size_t queued_bytes, njobs;
	__u64 bound_ms;	 /* > 0: exports must end within this (shutting down) */
	int last_result; /* of the last capture's export */
	struct delivery_stats st;
};

static const struct env *env_of(const struct delivery *d)
{
	return d->o.env ? d->o.env : env__process();
}

static void count(struct delivery *d, __u64 *field)
{
	pthread_mutex_lock(&d->lock);
	(*field)++;
	pthread_mutex_unlock(&d->lock);
}

static int export_real(void *ctx, const void *data, size_t len, __u64 bound_ms,
		       struct export_result *r)
{
	return exporter__export_within(ctx, data, len, bound_ms, r);
}

/* The endpoint's side: the spool directory and the exporter. 0 or -1. */
static int open_export(struct delivery *d)
{
	const struct delivery_opts *o = &d->o;

	if (env__spool_dir(env_of(d), o->export ? o->export->spool_dir : NULL, geteuid() == 0,
			   (unsigned int)geteuid(), d->spool_dir, sizeof(d->spool_dir))) {
		pr_err("the spool directory name is too long; give a shorter --spool-dir");
		return -1;
	}
	/* Without -o the spool directory is where an undelivered capture goes:
	 * it must take files before we sample. */
	if (!o->output && spool__prepare(d->spool_dir))
		return -1;
	if (!o->output)
		file_sink__clean_stale(d->spool_dir);
	if (!d->o.export_fn) {
		d->exp = exporter__new(d->cfg);
		if (!d->exp)
			return -1;
		d->o.export_fn = export_real;
		d->o.export_ctx = d->exp;
	}
	return 0;
}

/* Remove stale temporaries in the directory of @path (NULL: the current
 * directory). */
static void clean_stale_beside(const char *path)
{
	char dir[4096];
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (!slash) {
		file_sink__clean_stale(NULL);
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	file_sink__clean_stale(slash == path ? "/" : dir);
}

/* ---- rescue ------------------------------------------------------------------------ */

/* Save @out in @dir under a name no other file has; its path into @path. */
static int save_in(const char *dir, const struct buf *out, char *path, size_t len)
{
	struct sink *s;
	int err;

	snprintf(path, len, "%s/profcap-rescued-%d-%lld.pb", dir, (int)getpid(),
		 (long long)time(NULL));
	s = file_sink__open(path, ".pb", FILE_SINK_NOCLOBBER | FILE_SINK_QUIET, &err);
	if (s)
		err = sink__deliver(s, out->data, out->len);
	if (!err)
		snprintf(path, len, "%s", sink__describe(s));
	sink__free(s);
	return err;
}

/* Save a capture that could not go where the user asked (@why says what
 * failed, or NULL when that was logged already): $TMPDIR, else /tmp. One
 * error line. Returns 1 (the exit code of a capture not written where
 * asked). */
static int rescue(struct delivery *d, const struct buf *out, const char *why)
{
	const char *dir = env__tmpdir(env_of(d));
	char path[4096], tmpwhy[4200] = "";
	int err;

	err = save_in(dir, out, path, sizeof(path));
	if (err && strcmp(dir, "/tmp")) {
		snprintf(tmpwhy, sizeof(tmpwhy), " (TMPDIR %s: %s)", dir, strerror(-err));
		err = save_in("/tmp", out, path, sizeof(path));
	}
	if (!err) {
		count(d, &d->st.rescued);
		pr_err("%s%sthe capture was saved to %s%s instead: move it where you want it",
		       why ? why : "", why ? "; " : "", path, tmpwhy);
	} else {
		count(d, &d->st.lost);
		pr_err("%s%sthe capture could not be saved anywhere (%s, also in %s and /tmp): it "
		       "is lost; free space or set TMPDIR to a writable directory",
		       why ? why : "", why ? "; " : "", strerror(-err), dir);
	}
	return 1;
}

/* ---- the export -------------------------------------------------------------------- */

/* Spool @j's capture unless it is kept already; the caller holds d->lock
 * when @locked. 0 or -errno (logged). */
static int spool_job(struct delivery *d, struct job *j, bool locked)
{
	int err;

	if (j->kept[0])
		return 0;
	err = spool__save(d->spool_dir, d->o.host, j->otlp.data, j->otlp.len, j->kept,
			  sizeof(j->kept));
	if (err) {
		j->kept[0] = '\0';
		return err;
	}
	j->spooled = true;
	if (locked)
		d->st.spooled++;
	else
		count(d, &d->st.spooled);
	return 0;
}

static void report_ok(const struct delivery *d, const struct job *j, const struct export_result *r)
{
	if (!d->o.quiet && !d->o.per_window)
		pr_info("delivered %zu bytes (%zu on the wire) to %s in %.0f ms (%u attempt%s)",
			j->otlp.len, r->bytes_sent, d->cfg->url, r->seconds * 1e3, r->attempts,
			r->attempts == 1 ? "" : "s");
	if (r->rejected)
		pr_warn("the endpoint rejected %lld profiles: %s", (long long)r->rejected,
			r->partial_message[0] ? r->partial_message : "(no message)");
	else if (r->partial_message[0])
		pr_warn("the endpoint said: %s", r->partial_message);
}

/* Export @j within @bound_ms (0: the configured deadline); sets j->result:
 * 0 delivered, 3 kept (file or spool), 1 rescued or lost. */
static void export_job(struct delivery *d, struct job *j, __u64 bound_ms)
{
	struct export_result r;
	bool have;
	int err;

	memset(&r, 0, sizeof(r));
	err = d->o.export_fn(d->o.export_ctx, j->otlp.data, j->otlp.len, bound_ms, &r);
	pthread_mutex_lock(&d->lock);
	j->finished = true;
	if (!err) {
		d->st.exported++;
		if (j->spooled && !unlink(j->kept)) /* the spooled copy is not needed */
			d->st.spooled--;
		pthread_mutex_unlock(&d->lock);
		report_ok(d, j, &r);
		j->result = 0;
		return;
	}
	d->st.export_failed++;
	have = j->kept[0];
	pthread_mutex_unlock(&d->lock);
	if (!have && spool_job(d, j, false)) {
		j->result = rescue(d, &j->otlp, NULL);
		return;
	}
	pr_err("export to %s failed: %s; the capture is kept in %s: send it later with "
	       "'profcap upload %s' (same endpoint flags)",
	       d->cfg->url, r.error[0] ? r.error : strerror(-err), j->kept, j->kept);
	j->result = 3;
}

static void *worker_main(void *arg)
{
	struct delivery *d = arg;
	struct job *j;
	__u64 bound;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->head && !d->stopping)
			pthread_cond_wait(&d->cond, &d->lock);
		if (!d->head)
			break;
		j = d->head;
		d->head = j->next;
		if (!d->head)
			d->tail = NULL;
		d->busy = j;
		bound = d->bound_ms;
		pthread_mutex_unlock(&d->lock);
		export_job(d, j, bound);
		pthread_mutex_lock(&d->lock);
		if (j->last)
			d->last_result = j->result;
		d->busy = NULL;
		d->queued_bytes -= j->otlp.len;
		d->njobs--;
		buf__release(&j->otlp);
		free(j);
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* A queued copy of @tmpl (its capture copied). NULL when out of memory. */
static struct job *new_job(const struct job *tmpl)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	*j = *tmpl;
	j->next = NULL;
	buf__init(&j->otlp, OUTPUT_MAX_BYTES);
	if (buf__append(&j->otlp, tmpl->otlp.data, tmpl->otlp.len)) {
		buf__release(&j->otlp);
		free(j);
		return NULL;
	}
	return j;
}

/* Hand @tmpl's capture to the worker. A full queue (the endpoint is down
 * or slow) spools the capture at once instead of holding the window.
 * Returns the exit code known now (0, or 3/1 when spooled/rescued here). */
static int enqueue(struct delivery *d, struct job *tmpl)
{
	struct job *j = NULL;
	bool full;

	pthread_mutex_lock(&d->lock);
	full = d->njobs >= QUEUE_MAX_JOBS || d->queued_bytes + tmpl->otlp.len > QUEUE_MAX_BYTES;
	pthread_mutex_unlock(&d->lock);
	if (!full)
		j = new_job(tmpl);
	if (!j) {
		count(d, &d->st.export_failed);
		if (spool_job(d, tmpl, false))
			return rescue(d, &tmpl->otlp, NULL);
		if (tmpl->last)
			d->last_result = 3;
		pr_err("the endpoint %s is behind (%d captures waiting): this one is kept in %s; "
		       "send it later with 'profcap upload %s'",
		       d->cfg->url, QUEUE_MAX_JOBS, tmpl->kept, tmpl->kept);
		return 3;
	}
	pthread_mutex_lock(&d->lock);
	if (d->tail)
		d->tail->next = j;
	else
		d->head = j;
	d->tail = j;
	d->njobs++;
	d->queued_bytes += j->otlp.len;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/* ---- files ------------------------------------------------------------------------- */

/* The -o file, or a default name no other capture takes (reserved at the
 * final rename). */
static struct sink *open_output(const struct delivery_opts *o, __s64 t_unix)
{
	const char *ext = format__extension(o->format);
	char name[512];
	int err;

	if (o->output)
		return file_sink__open(o->output, NULL, FILE_SINK_QUIET_WRITE, &err);
	if (file_sink__default_name(name, sizeof(name), NULL, o->host, t_unix, ext, 0))
		snprintf(name, sizeof(name), "profcap%s", ext);
	return file_sink__open(name, ext, FILE_SINK_NOCLOBBER | FILE_SINK_QUIET_WRITE, &err);
}

struct wfile {
	char name[256];
	__s64 mtime;
	__u64 size;
};

/* The window files (this naming scheme) in @dir; *@total their size. */
static size_t list_window_files(const char *dir, struct wfile **out, __u64 *total)
{
	struct wfile *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	char path[4096];
	DIR *dp;

	*total = 0;
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		if (strncmp(de->d_name, "profcap-", 8) || strlen(de->d_name) >= sizeof(v->name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].mtime = (__s64)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
		v[n].size = (__u64)st.st_size;
		*total += v[n].size;
		n++;
	}
	closedir(dp);
	*out = v;
	return n;
}

/* Keep the window files in --output-dir under --max-dir-size by removing
 * the oldest ones (only files this naming scheme made), never @keep. A
 * window whose export failed is in the spool, not only here. */
static void trim_output_dir(const struct delivery *d, const char *keep)
{
	const char *dir = d->o.output_dir;
	struct wfile *v = NULL;
	size_t n, i, oldest;
	char path[4096];
	__u64 total;

	n = list_window_files(dir, &v, &total);
	while (total > d->o.max_dir_bytes && n > 1) {
		oldest = n;
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
			if (keep && !strcmp(path, keep))
				continue;
			if (oldest == n || v[i].mtime < v[oldest].mtime)
				oldest = i;
		}
		if (oldest == n)
			break;
		snprintf(path, sizeof(path), "%s/%s", dir, v[oldest].name);
		if (unlink(path) && errno != ENOENT) {
			pr_warn("cannot remove %s to stay under --max-dir-size: %s", path,
				strerror(errno));
			break;
		}
		pr_debug("removed %s (--max-dir-size)", path);
		total -= v[oldest].size;
		v[oldest] = v[--n];
	}
	free(v);
}

/* Write a window file in --output-dir (re-created when it was moved or
 * removed). 0 or -errno after one error line. */
static int write_window_file(struct delivery *d, const struct buf *payload, __s64 t_unix, char *why,
			     size_t whylen)
{
	const char *dir = d->o.output_dir, *ext = format__extension(d->o.format);
	char name[4096];
	struct sink *s;
	struct stat st;
	int err;

	if (stat(dir, &st)) {
		if (spool__dir_ready(dir)) {
			snprintf(why, whylen,
				 "output directory %s is gone and cannot be re-created", dir);
			return -ENOENT;
		}
		if (!d->warned_dir)
			pr_warn("output directory %s was moved or removed: re-created it (earlier "
				"windows stay where the old directory went)",
				dir);
		d->warned_dir = true;
	}
	if (file_sink__default_name(name, sizeof(name), dir, d->o.host, t_unix / 1000000000ll, ext,
				    0))
		return -ENAMETOOLONG;
	s = file_sink__open(name, ext, FILE_SINK_NOCLOBBER | FILE_SINK_QUIET, &err);
	if (s)
		err = sink__deliver(s, payload->data, payload->len);
	if (err) {
		snprintf(why, whylen, "cannot write the window to %s: %s", dir, strerror(-err));
	} else {
		pr_debug("wrote %s (%zu bytes)", sink__describe(s), payload->len);
		trim_output_dir(d, sink__describe(s));
	}
	sink__free(s);
	return err;
}

/* The file the user asked for: 0 written, 1 rescued or lost. *@kept names
 * it when it holds the OTLP capture for good (an OTLP -o file). */
static int write_file(struct delivery *d, const struct buf *otlp, const struct buf *file,
		      __s64 t_unix, const char **kept)
{
	const struct buf *payload = file ? file : otlp;
	char why[4200];
	int err;

	if (d->o.output_dir) {
		err = write_window_file(d, payload, t_unix, why, sizeof(why));
	} else {
		err = sink__deliver(d->sink, payload->data, payload->len);
		snprintf(why, sizeof(why), "writing %s failed: %s", sink__describe(d->sink),
			 strerror(-err));
	}
	if (err)
		return rescue(d, otlp, why);
	count(d, &d->st.files);
	if (d->sink) {
		if (!d->o.quiet && !d->o.per_window)
			pr_info("wrote %s (%zu bytes, %s)", sink__describe(d->sink), payload->len,
				format__name(file ? d->o.format : FORMAT_OTLP));
		if (!file)
			*kept = sink__describe(d->sink);
	}
	return 0;
}

/* ---- the policy -------------------------------------------------------------------- */

int delivery__deliver(struct delivery *d, const struct buf *otlp, const struct buf *file,
		      __s64 t_unix, unsigned int flags)
{
	const char *kept = NULL;
	struct job j;
	int ret = 0, xret;

	if (d->sink || d->o.output_dir)
		ret = write_file(d, otlp, file, t_unix, &kept);
	if (!d->cfg)
		return ret;
	memset(&j, 0, sizeof(j));
	j.otlp = *otlp;
	j.last = flags & DELIVERY_LAST;
	if (kept)
		snprintf(j.kept, sizeof(j.kept), "%s", kept);
	/* Stopping on a signal: spool first, so a SIGKILL during the export
	 * loses nothing. */
	if (flags & DELIVERY_URGENT && spool_job(d, &j, false))
		return rescue(d, otlp, NULL);
	if (d->have_worker) {
		xret = enqueue(d, &j);
		return ret ? ret : xret;
	}
	export_job(d, &j, flags & DELIVERY_URGENT ? DELIVERY_LAST_EXPORT_MS : 0);
	return ret ? ret : j.result;
}

int delivery__deliver_profile(struct delivery *d, const struct profile *p, const struct buf *otlp,
			      __s64 t_unix, unsigned int flags)
{
	struct buf other;
	int err, ret;

	if (!delivery__wants_file_format(d))
		return delivery__deliver(d, otlp, NULL, t_unix, flags);
	buf__init(&other, OUTPUT_MAX_BYTES);
	err = format__encode(p, d->o.format, NULL, &other);
	if (err) {
		pr_err("encoding the capture as %s failed: %s; writing OTLP instead",
		       format__name(d->o.format), strerror(-err));
		buf__release(&other);
		return delivery__deliver(d, otlp, NULL, t_unix, flags);
	}
	ret = delivery__deliver(d, otlp, &other, t_unix, flags);
	buf__release(&other);
	return ret;
}

int delivery__finish(struct delivery *d, bool urgent)
{
	struct timespec until;
	struct job *j;
	int ret = 0;

	if (!d->have_worker)
		return 0;
	pthread_mutex_lock(&d->lock);
	if (urgent) {
		/* Spool what still waits, then give the endpoint a short try. */
		for (j = d->head; j; j = j->next)
			spool_job(d, j, true);
		if (d->busy && !d->busy->finished)
			spool_job(d, d->busy, true);
		d->bound_ms = DELIVERY_LAST_EXPORT_MS;
	}
	d->stopping = true;
	pthread_cond_broadcast(&d->cond);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += urgent ? DELIVERY_LAST_EXPORT_MS / 1000 + 1 : 3600;
	while ((d->head || d->busy) &&
	       pthread_cond_timedwait(&d->cond, &d->lock, &until) != ETIMEDOUT)
		;
	if (d->head || d->busy)
		ret = 3; /* still exporting: every waiting capture is spooled */
	pthread_mutex_unlock(&d->lock);
	if (ret) {
		pr_warn("the endpoint did not answer in time: the waiting captures stay in %s for "
			"'profcap upload'",
			d->spool_dir);
		pthread_detach(d->worker); /* the process is exiting */
	} else {
		pthread_join(d->worker, NULL);
	}
	d->have_worker = false;
	d->worker_left = ret != 0;
	return ret ? ret : d->last_result;
}

int delivery__open(const struct delivery_opts *o, struct delivery **out)
{
	struct otlp_flags none = {0};
	struct delivery *d;
	int ret = 1, err;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d) {
		pr_err("out of memory");
		return 1;
	}
	d->o = *o;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	if (otlp_config__resolve(o->export ? o->export : &none, env_of(d), &d->cfg)) {
		ret = 2;
		goto err_out;
	}
	if (d->cfg && open_export(d))
		goto err_out;
	if (o->output_dir) {
		/* One file per window, created when the window ends. */
		err = spool__dir_ready(o->output_dir);
		if (err) {
			pr_err("output directory %s cannot take files: %s; choose a writable "
			       "--output-dir",
			       o->output_dir, strerror(-err));
			goto err_out;
		}
		file_sink__clean_stale(o->output_dir);
	} else if (o->output || !d->cfg) {
		d->sink = open_output(o, time(NULL));
		if (!d->sink)
			goto err_out;
		clean_stale_beside(o->output);
	}
	file_sink__clean_stale(env__tmpdir(env_of(d)));
	if (d->cfg && o->per_window) {
		if (pthread_create(&d->worker, NULL, worker_main, d)) {
			pr_err("cannot start the export thread: out of resources");
			goto err_out;
		}
		d->have_worker = true;
	}
	*out = d;
	return 0;

err_out:
	delivery__free(d);
	return ret;
}

bool delivery__wants_file_format(const struct delivery *d)
{
	return d->o.format != FORMAT_OTLP && (d->sink || d->o.output_dir);
}

void delivery__reopen(struct delivery *d)
{
	int err;

	if (!d->o.output_dir)
		return;
	err = spool__dir_ready(d->o.output_dir);
	if (err)
		pr_err("SIGHUP: output directory %s cannot take files: %s; make it writable "
		       "and send SIGHUP again",
		       d->o.output_dir, strerror(-err));
	else
		pr_info("SIGHUP: output directory %s reopened", d->o.output_dir);
}

void delivery__stats(struct delivery *d, struct delivery_stats *st)
{
	pthread_mutex_lock(&d->lock);
	*st = d->st;
	st->pending = d->njobs;
	pthread_mutex_unlock(&d->lock);
}

bool delivery__worker_busy(const struct delivery *d)
{
	return d && d->worker_left;
}

void delivery__free(struct delivery *d)
{
	if (!d)
		return;
	if (d->have_worker)
		delivery__finish(d, true);
	sink__free(d->sink);
	if (d->worker_left)
		return; /* the worker still uses the rest; the process is exiting */
	exporter__free(d->exp);
	otlp_config__free(d->cfg);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d);
}
