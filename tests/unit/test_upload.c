/* test_upload.c - `profcap upload`: a real capture (encoded by otlp.c) is
 * accepted, truncated or foreign bytes are refused; the command against a
 * scripted local HTTP server: delivery, --remove-sent, corrupt files left in
 * place, failed deliveries, exit codes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/buf.h"
#include "httpd.h"
#include "formats/otlp.h"
#include "model/profile.h"
#include "test.h"
#include "cli/upload.h"

static char dir[] = "/tmp/profcap-test-upload-XXXXXX";
static struct buf capture;

static int make_capture(struct buf *out)
{
	static const struct profile_mapping_desc exe = {
		.start = 0x400000, .limit = 0x500000, .path = "/usr/bin/app"};
	const struct profile_frame frames[] = {
		{.address = 0x401000, .mapping = &exe, .function = "work"},
		{.address = 0x401100, .mapping = &exe, .function = "main"},
	};
	const struct profile_process_desc proc = {
		.pid = 42, .exe_name = "app", .exe_path = "/usr/bin/app", .cmdline = "app"};
	struct profile_meta m = {
		.time_unix_nano = 1700000000000000000ull,
		.duration_nano = 1000000000ull,
		.period_ns = 10000000ull,
		.profile_id = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		.host_name = "h",
		.host_arch = "amd64",
		.os_type = "linux",
		.scope_name = "profcap",
		.scope_version = "0.1",
	};
	struct profile *p = profile__new();
	int err;

	if (!p)
		return -ENOMEM;
	err = profile__set_meta(p, &m);
	if (!err)
		err = profile__add_sample(p, &proc, 42, "app", frames, 2, 7);
	if (!err)
		err = profile__add_sample(p, &proc, 43, "io", frames + 1, 1, 2);
	if (!err)
		err = otlp__encode(p, out);
	profile__free(p);
	return err;
}

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	size_t n;

	if (!f)
		return -errno;
	n = fwrite(data, 1, len, f);
	return fclose(f) || n != len ? -EIO : 0;
}

/* Run `upload` with @args (NULL-terminated), stderr silenced. */
static int run_upload(const char **args)
{
	char *argv[32];
	int argc = 0, ret, saved = dup(2), null = open("/dev/null", O_WRONLY);

	argv[argc++] = "upload";
	while (*args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	fflush(stderr);
	dup2(null, 2);
	ret = upload__main(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(null);
	return ret;
}

TEST(check_valid_capture)
{
	char why[256] = "";
	size_t nprof = 0;

	CHECK(capture.len > 100);
	CHECK_EQ_U64(upload__check(capture.data, capture.len, &nprof, why, sizeof(why)), 0);
	CHECK_EQ_U64(nprof, 1);
	CHECK_EQ_U64(upload__check(capture.data, capture.len, NULL, why, sizeof(why)), 0);
}

TEST(check_refuses_damage)
{
	static const char text[] = "hello, this is not a capture\n";
	char why[256];
	size_t cut;

	CHECK_EQ_U64(upload__check("", 0, NULL, why, sizeof(why)), -EBADMSG);
	CHECK(strstr(why, "empty"));
	CHECK_EQ_U64(upload__check(capture.data, capture.len - 1, NULL, why, sizeof(why)),
		     -EBADMSG);
	CHECK(strstr(why, "protobuf decoding failed at byte"));
	CHECK_EQ_U64(upload__check(capture.data, capture.len / 2, NULL, why, sizeof(why)),
		     -EBADMSG);
	/* Truncation inside the first field (the dictionary) at every point. */
	for (cut = 1; cut < 64 && cut < capture.len; cut++)
		CHECK(upload__check(capture.data, cut, NULL, why, sizeof(why)) == -EBADMSG);
	CHECK_EQ_U64(upload__check(text, sizeof(text) - 1, NULL, why, sizeof(why)), -EBADMSG);
	/* Valid protobuf, wrong shape: field 1 as a varint. */
	CHECK_EQ_U64(upload__check("\x08\x01", 2, NULL, why, sizeof(why)), -EBADMSG);
	/* Valid protobuf of nothing we know: no profiles, no dictionary. */
	CHECK_EQ_U64(upload__check("\x78\x01", 2, NULL, why, sizeof(why)), -EBADMSG);
	CHECK(strstr(why, "no resource profiles"));
}

TEST(check_refuses_bad_nested_message)
{
	/* ProfilesData{resource_profiles: {scope_profiles: {scope: 1}}}: the
	 * framing is fine at every level, but ScopeProfiles.scope is a message
	 * and a varint there is refused. */
	static const unsigned char bad[] = {0x0a, 0x04, 0x12, 0x02, 0x08, 0x01};
	/* The same with a well-formed inside: {schema_url: ""}. */
	static const unsigned char good[] = {0x0a, 0x04, 0x12, 0x02, 0x1a, 0x00};
	/* A profile whose sample is broken. */
	static const unsigned char bad_sample[] = {0x0a, 0x08, 0x12, 0x06, 0x12,
						   0x04, 0x12, 0x02, 0x08, 0x80};
	char why[256];
	size_t n = 9;

	CHECK_EQ_U64(upload__check(good, sizeof(good), &n, why, sizeof(why)), 0);
	CHECK_EQ_U64(n, 0);
	CHECK_EQ_U64(upload__check(bad, sizeof(bad), NULL, why, sizeof(why)), -EBADMSG);
	CHECK_EQ_U64(upload__check(bad_sample, sizeof(bad_sample), NULL, why, sizeof(why)),
		     -EBADMSG);
}

static void clear_env(void)
{
	static const char *const vars[] = {
		"OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_PROFILES_HEADERS",
		"OTEL_EXPORTER_OTLP_TIMEOUT",
		"OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT",
		"OTEL_EXPORTER_OTLP_COMPRESSION",
		"OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION",
		"OTEL_EXPORTER_OTLP_INSECURE",
		"OTEL_EXPORTER_OTLP_PROFILES_INSECURE",
		"http_proxy",
		"HTTP_PROXY",
		"all_proxy",
		"ALL_PROXY",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

TEST(upload_delivers_and_removes)
{
	static const struct httpd_reply script[] = {{200, NULL, NULL, 0}};
	char a[256], b[256], bad[256], url[64];
	struct httpd h;
	int ret;

	snprintf(a, sizeof(a), "%s/a.pb", dir);
	snprintf(b, sizeof(b), "%s/b.pb", dir);
	snprintf(bad, sizeof(bad), "%s/bad.pb", dir);
	CHECK(!write_file(a, capture.data, capture.len));
	CHECK(!write_file(b, capture.data, capture.len));
	CHECK(!write_file(bad, capture.data, capture.len - 3));
	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", h.port);
	{
		const char *args[] = {
			a, "--endpoint", url, "--protocol", "http/protobuf", "--remove-sent", bad,
			b, NULL};
		ret = run_upload(args);
	}
	httpd_stop(&h);
	/* The corrupt file decides the exit code and stays; the good ones went
	 * out once each and are gone. */
	CHECK_EQ_U64(ret, 1);
	CHECK_EQ_U64(h.nrequests, 2);
	CHECK(h.body_lens[0] == capture.len && !memcmp(h.bodies[0], capture.data, capture.len));
	CHECK(h.body_lens[1] == capture.len);
	CHECK(access(a, F_OK) && access(b, F_OK));
	CHECK(!access(bad, F_OK));
	httpd_release(&h);
	unlink(bad);
}

TEST(upload_failure_leaves_files)
{
	static const struct httpd_reply script[] = {{400, NULL, NULL, 0}};
	char a[256], url[64];
	struct httpd h;
	int ret;

	snprintf(a, sizeof(a), "%s/keep.pb", dir);
	CHECK(!write_file(a, capture.data, capture.len));
	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", h.port);
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url, 1);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
	{
		const char *args[] = {"--remove-sent", "-q", a, NULL};
		ret = run_upload(args);
	}
	httpd_stop(&h);
	httpd_release(&h);
	clear_env();
	CHECK_EQ_U64(ret, 3);
	CHECK_EQ_U64(h.nrequests, 1);
	CHECK(!access(a, F_OK));
	unlink(a);
}

TEST(upload_usage_errors)
{
	char a[256];

	snprintf(a, sizeof(a), "%s/x.pb", dir);
	CHECK(!write_file(a, capture.data, capture.len));
	{
		const char *args[] = {a, NULL}; /* no endpoint */
		CHECK_EQ_U64(run_upload(args), 2);
	}
	{
		const char *args[] = {"--endpoint", "http://127.0.0.1:1", NULL}; /* no file */
		CHECK_EQ_U64(run_upload(args), 2);
	}
	{
		const char *args[] = {"--bogus", a, NULL};
		CHECK_EQ_U64(run_upload(args), 2);
	}
	{
		const char *args[] = {
			"--endpoint", "http://127.0.0.1:1", "--protocol", "http/json", a, NULL};
		CHECK_EQ_U64(run_upload(args), 2);
	}
	{
		const char *args[] = {"--endpoint", "http://127.0.0.1:1", "/nonexistent/x.pb",
				      NULL};
		CHECK_EQ_U64(run_upload(args), 1);
	}
	CHECK(!access(a, F_OK));
	unlink(a);
}

int main(void)
{
	int ret;

	clear_env();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	buf__init(&capture, 1 << 20);
	if (make_capture(&capture)) {
		printf("FAIL cannot encode a test capture\n");
		return 1;
	}
	RUN(check_valid_capture);
	RUN(check_refuses_damage);
	RUN(check_refuses_bad_nested_message);
	RUN(upload_delivers_and_removes);
	RUN(upload_failure_leaves_files);
	RUN(upload_usage_errors);
	ret = TEST_DONE();
	buf__release(&capture);
	rmdir(dir);
	return ret;
}
