/* test_sink.c - the file sink: early failure, atomic delivery, no leftovers. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/sink.h"
#include "test.h"

static char dir[] = "/tmp/profcap-test-sink-XXXXXX";

static int count_entries(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, ".."));
	closedir(d);
	return n;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

TEST(deliver_is_atomic)
{
	char path[256];
	struct sink *s;

	snprintf(path, sizeof(path), "%s/out.pb", dir);
	s = file_sink__new(path);
	CHECK(s);
	CHECK_STR(sink__describe(s), path);
	/* Only the hidden temporary file exists until delivery. */
	CHECK(access(path, F_OK) == -1);
	CHECK_EQ_U64(count_entries(), 1);
	CHECK(!sink__deliver(s, "hello", 5));
	CHECK_EQ_U64(file_size(path), 5);
	sink__free(s);
	CHECK_EQ_U64(count_entries(), 1);

	/* A second capture replaces the first only when delivered. */
	s = file_sink__new(path);
	CHECK(s);
	CHECK_EQ_U64(file_size(path), 5);
	CHECK(!sink__deliver(s, "longer!", 7));
	sink__free(s);
	CHECK_EQ_U64(file_size(path), 7);
	unlink(path);
}

TEST(undelivered_leaves_nothing)
{
	char path[256];
	struct sink *s;

	snprintf(path, sizeof(path), "%s/never.pb", dir);
	s = file_sink__new(path);
	CHECK(s);
	sink__free(s);
	CHECK(access(path, F_OK) == -1);
	CHECK_EQ_U64(count_entries(), 0);
	sink__free(NULL);
}

TEST(bad_paths_fail_early)
{
	char path[256];

	/* stderr gets the operator's hint; the return value is what we check. */
	CHECK(!file_sink__new("/nonexistent-profcap-dir/x.pb"));
	CHECK(!file_sink__new(dir)); /* a directory */
	CHECK(!file_sink__new(""));
	snprintf(path, sizeof(path), "%s/missing/x.pb", dir);
	CHECK(!file_sink__new(path));
}

TEST(default_name)
{
	char name[128];

	/* 2026-11-22 01:02:03 UTC */
	CHECK(!file_sink__default_name(name, sizeof(name), NULL, "web-1", 1795309323, ".pb", 0));
	CHECK_STR(name, "profcap-web-1-20261122T010203Z.pb");
	CHECK(!file_sink__default_name(name, sizeof(name), NULL, "", 0, ".pb", 0));
	CHECK_STR(name, "profcap-host-19700101T000000Z.pb");
	CHECK(!file_sink__default_name(name, sizeof(name), "/var/spool", "h", 0, ".svg", 2));
	CHECK_STR(name, "/var/spool/profcap-h-19700101T000000Z-2.svg");
	CHECK(file_sink__default_name(name, 10, NULL, "web-1", 0, ".pb", 0) == -ENAMETOOLONG);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* The sink logs operator hints for the bad paths: keep test output clean. */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	RUN(deliver_is_atomic);
	RUN(undelivered_leaves_nothing);
	RUN(bad_paths_fail_early);
	RUN(default_name);
	rmdir(dir);
	return TEST_DONE();
}
