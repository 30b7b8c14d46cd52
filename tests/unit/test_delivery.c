/* test_delivery.c - the one delivery policy of capture and agent: files,
 * exports (injected: no network), the spool and the $TMPDIR rescue, each
 * failure injected, every outcome counted. No root needed. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/delivery.h"
#include "test.h"

static char root[] = "/tmp/profcap-test-delivery-XXXXXX";
static char spool[512], tmpdir[512];

/* ---- an injected environment and exporter ---- */

static const char *env_get(void *ctx, const char *name)
{
	(void)ctx;
	if (!strcmp(name, "PROFCAP_SPOOL_DIR"))
		return spool;
	if (!strcmp(name, "TMPDIR"))
		return tmpdir;
	return NULL;
}

static const struct env fake_env = {.get = env_get};

struct fake_export {
	int fail; /* -errno to return, 0 = accept */
	int calls;
	__u64 bound_ms; /* of the last call */
};

static int fake_export(void *ctx, const void *data, size_t len, __u64 bound_ms,
		       struct export_result *r)
{
	struct fake_export *f = ctx;

	(void)data;
	(void)len;
	f->bound_ms = bound_ms;
	f->calls++;
	r->attempts = 1;
	if (f->fail)
		snprintf(r->error, sizeof(r->error), "injected failure");
	return f->fail;
}

/* ---- helpers ---- */

static void rm_rf(const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		perror(cmd);
}

/* A fresh directory @name under root; its path into @out. */
static void fresh(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", root, name);
	rm_rf(out);
	mkdir(out, 0700);
}

/* Files in @dir (not hidden); the hidden ones (temporaries) in *@hidden. */
static int count_files(const char *dir, int *hidden)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	*hidden = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_name[0] == '.')
			(*hidden)++;
		else
			n++;
	}
	closedir(d);
	return n;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

static struct buf payload(size_t n)
{
	struct buf b;

	buf__init(&b, 1 << 20);
	for (size_t i = 0; i < n; i++)
		buf__append(&b, "x", 1);
	return b;
}

static void base_opts(struct delivery_opts *o, struct otlp_flags *f, struct fake_export *fx)
{
	memset(o, 0, sizeof(*o));
	memset(f, 0, sizeof(*f));
	o->env = &fake_env;
	o->host = "testhost";
	o->quiet = true;
	o->export = f;
	if (fx) {
		f->endpoint = "http://127.0.0.1:1";
		o->export_fn = fake_export;
		o->export_ctx = fx;
	}
	fresh("spool", spool, sizeof(spool));
	fresh("tmp", tmpdir, sizeof(tmpdir));
}

/* ---- tests ---- */

TEST(file_only)
{
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(100);
	char dir[512], path[600];
	int hidden;

	base_opts(&o, &f, NULL);
	fresh("file_only", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/out.pb", dir);
	o.output = path;
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST), 0);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(file_size(path), 100);
	CHECK_EQ_U64(st.files, 1);
	CHECK_EQ_U64(st.rescued + st.lost + st.spooled + st.exported, 0);
	CHECK_EQ_U64(count_files(dir, &hidden), 1);
	CHECK_EQ_U64(hidden, 0);
}

TEST(export_ok)
{
	struct fake_export fx = {0};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10);
	int hidden;

	base_opts(&o, &f, &fx);
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST), 0);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(fx.calls, 1);
	CHECK_EQ_U64(st.exported, 1);
	CHECK_EQ_U64(st.files + st.spooled + st.rescued + st.lost, 0);
	CHECK_EQ_U64(count_files(spool, &hidden), 0);
}

TEST(export_fails_spooled)
{
	struct fake_export fx = {.fail = -ECONNREFUSED};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10);
	int hidden;

	base_opts(&o, &f, &fx);
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST), 3);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(st.export_failed, 1);
	CHECK_EQ_U64(st.spooled, 1);
	CHECK_EQ_U64(st.rescued + st.lost, 0);
	CHECK_EQ_U64(count_files(spool, &hidden), 1);
	CHECK_EQ_U64(hidden, 0);
}

TEST(export_fails_kept_in_otlp_file)
{
	struct fake_export fx = {.fail = -ETIMEDOUT};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10);
	char dir[512], path[600];
	int hidden;

	base_opts(&o, &f, &fx);
	fresh("kept", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/out.pb", dir);
	o.output = path;
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST), 3);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(st.files, 1);
	CHECK_EQ_U64(st.export_failed, 1);
	CHECK_EQ_U64(file_size(path), 10);
	CHECK_EQ_U64(st.rescued + st.lost, 0);
	(void)hidden;
}

TEST(export_fails_non_otlp_file_spooled)
{
	struct fake_export fx = {.fail = -ECONNREFUSED};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10), svg = payload(30);
	char dir[512], path[600];
	int hidden;

	/* upload takes OTLP only: an SVG file cannot stand in for the export. */
	base_opts(&o, &f, &fx);
	fresh("svg", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	o.output = path;
	o.format = FORMAT_SVG;
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	CHECK(delivery__wants_file_format(d));
	CHECK_EQ_U64(delivery__deliver(d, &b, &svg, 0, DELIVERY_LAST), 3);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	buf__release(&svg);
	CHECK_EQ_U64(file_size(path), 30);
	CHECK_EQ_U64(st.files, 1);
	CHECK_EQ_U64(st.spooled, 1);
	CHECK_EQ_U64(count_files(spool, &hidden), 1);
}

TEST(file_fails_still_exported_and_rescued)
{
	struct fake_export fx = {0};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10);
	char dir[512], path[600];
	int hidden;

	base_opts(&o, &f, &fx);
	fresh("gone", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/out.pb", dir);
	o.output = path;
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	rm_rf(dir); /* the -o directory disappears during the capture */
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST), 1);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(fx.calls, 1);
	CHECK_EQ_U64(st.exported, 1);
	CHECK_EQ_U64(st.rescued, 1);
	CHECK_EQ_U64(count_files(tmpdir, &hidden), 1);
	CHECK_EQ_U64(hidden, 0);
}

TEST(urgent_spools_first_and_bounds_the_export)
{
	struct fake_export fx = {0};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10);
	int hidden;

	base_opts(&o, &f, &fx);
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST | DELIVERY_URGENT), 0);
	delivery__stats(d, &st);
	CHECK_EQ_U64(fx.bound_ms, DELIVERY_LAST_EXPORT_MS);
	/* Exported: the copy spooled first is gone again. */
	CHECK_EQ_U64(st.exported, 1);
	CHECK_EQ_U64(st.spooled, 0);
	CHECK_EQ_U64(count_files(spool, &hidden), 0);
	fx.fail = -ETIMEDOUT;
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST | DELIVERY_URGENT), 3);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(st.spooled, 1);
	CHECK_EQ_U64(count_files(spool, &hidden), 1);
}

TEST(agent_exports_off_the_caller_and_queue_overflow_spools)
{
	struct fake_export fx = {.fail = -ECONNREFUSED};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10);
	int hidden, n = 20, ret;

	base_opts(&o, &f, &fx);
	o.per_window = true;
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	for (int i = 0; i < n; i++)
		delivery__deliver(d, &b, NULL, 0, 0);
	/* 0 when queued, 3 when the full queue spooled it at once. */
	ret = delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST | DELIVERY_URGENT);
	CHECK(ret == 0 || ret == 3);
	CHECK_EQ_U64(delivery__finish(d, true), 3);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	/* Every window failed to export and waits in the spool, none lost. */
	CHECK_EQ_U64(st.export_failed, n + 1);
	CHECK_EQ_U64(st.spooled, n + 1);
	CHECK_EQ_U64(st.rescued + st.lost + st.exported, 0);
	CHECK_EQ_U64(count_files(spool, &hidden), n + 1);
	CHECK_EQ_U64(hidden, 0);
}

TEST(spool_unusable_rescued_to_tmpdir)
{
	struct fake_export fx = {.fail = -ECONNREFUSED};
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(10);
	int hidden;

	base_opts(&o, &f, &fx);
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	/* The spool directory becomes a plain file after the start. */
	rm_rf(spool);
	fclose(fopen(spool, "w"));
	CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 0, DELIVERY_LAST), 1);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(st.spooled, 0);
	CHECK_EQ_U64(st.rescued, 1);
	CHECK_EQ_U64(st.lost, 0);
	CHECK_EQ_U64(count_files(tmpdir, &hidden), 1);
	CHECK_EQ_U64(hidden, 0);
	unlink(spool);
}

TEST(output_dir_never_clobbers_and_trims)
{
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery_stats st;
	struct delivery *d;
	struct buf b = payload(3000);
	char dir[512];
	int hidden;

	base_opts(&o, &f, NULL);
	fresh("windows", dir, sizeof(dir));
	o.output_dir = dir;
	o.max_dir_bytes = 7000; /* room for two windows */
	o.per_window = true;
	CHECK_EQ_U64(delivery__open(&o, &d), 0);
	/* Four windows in the same second: four names, the oldest trimmed. */
	for (int i = 0; i < 4; i++)
		CHECK_EQ_U64(delivery__deliver(d, &b, NULL, 1700000000000000000ll, DELIVERY_LAST), 0);
	delivery__stats(d, &st);
	delivery__free(d);
	buf__release(&b);
	CHECK_EQ_U64(st.files, 4);
	CHECK_EQ_U64(count_files(dir, &hidden), 2);
	CHECK_EQ_U64(hidden, 0);
}

TEST(bad_output_fails_at_open)
{
	struct delivery_opts o;
	struct otlp_flags f;
	struct delivery *d = NULL;

	base_opts(&o, &f, NULL);
	o.output = "/nonexistent-dir-for-profcap/x.pb";
	CHECK_EQ_U64(delivery__open(&o, &d), 1);
	CHECK(!d);
	o.output = NULL;
	f.endpoint = "ftp://x";
	CHECK_EQ_U64(delivery__open(&o, &d), 2);
	CHECK(!d);
}

int main(void)
{
	int ret;

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(file_only);
	RUN(export_ok);
	RUN(export_fails_spooled);
	RUN(export_fails_kept_in_otlp_file);
	RUN(export_fails_non_otlp_file_spooled);
	RUN(file_fails_still_exported_and_rescued);
	RUN(urgent_spools_first_and_bounds_the_export);
	RUN(agent_exports_off_the_caller_and_queue_overflow_spools);
	RUN(spool_unusable_rescued_to_tmpdir);
	RUN(output_dir_never_clobbers_and_trims);
	RUN(bad_output_fails_at_open);
	ret = TEST_DONE();
	rm_rf(root);
	return ret;
}
