/* test_sink.c - the file sink: early failure, atomic delivery, no leftovers. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
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

/* A character device is written through, never replaced (mknod needs
 * CAP_MKNOD; /dev/null is used as it is). */
TEST(device_written_through)
{
	char path[256];
	struct stat st;
	struct sink *s;

	snprintf(path, sizeof(path), "%s/null", dir);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)))
		SKIP("mknod: %s (no CAP_MKNOD)", strerror(errno));
	s = file_sink__new(path);
	CHECK(s);
	CHECK(!sink__deliver(s, "hello", 5));
	sink__free(s);
	CHECK(!lstat(path, &st));
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ_U64(count_entries(), 1);
	unlink(path);
}

/* A full device (a node of /dev/full's numbers made here, so a broken
 * sink can never replace the host's): the write error is the delivery's. */
TEST(device_write_error_is_an_error)
{
	char path[256];
	struct stat st;
	struct sink *s;

	snprintf(path, sizeof(path), "%s/full", dir);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 7)))
		SKIP("mknod: %s (no CAP_MKNOD)", strerror(errno));
	s = file_sink__new(path);
	CHECK(s);
	CHECK(sink__deliver(s, "hello", 5) == -ENOSPC);
	sink__free(s);
	CHECK(!lstat(path, &st) && S_ISCHR(st.st_mode));
	unlink(path);
}

/* A FIFO gets the bytes (its reader started after the sink) and stays. */
TEST(fifo_written_through)
{
	char path[256], got[16] = "";
	struct stat st;
	struct sink *s;
	pid_t pid;
	int fd, status;

	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(!mkfifo(path, 0600));
	s = file_sink__new(path);
	CHECK(s);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		alarm(10);
		fd = open(path, O_RDONLY);
		_exit(fd >= 0 && read(fd, got, sizeof(got)) == 5 && !memcmp(got, "hello", 5) ? 0 : 1);
	}
	CHECK(!sink__deliver(s, "hello", 5));
	sink__free(s);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status));
	CHECK(!lstat(path, &st) && S_ISFIFO(st.st_mode));
	unlink(path);
}

/* A link to a regular file: the file is replaced atomically, the link kept. */
TEST(symlink_target_replaced)
{
	char path[256], link[256], buf[64];
	struct stat st;
	struct sink *s;

	snprintf(path, sizeof(path), "%s/target.pb", dir);
	snprintf(link, sizeof(link), "%s/link.pb", dir);
	CHECK(!sink__deliver(s = file_sink__new(path), "old", 3));
	sink__free(s);
	CHECK(!symlink("target.pb", link));
	s = file_sink__new(link);
	CHECK(s);
	CHECK_STR(sink__describe(s), link);
	CHECK(!sink__deliver(s, "newer", 5));
	sink__free(s);
	CHECK(!lstat(link, &st) && S_ISLNK(st.st_mode));
	CHECK_EQ_U64(readlink(link, buf, sizeof(buf)), 9);
	CHECK_EQ_U64(file_size(path), 5);
	CHECK_EQ_U64(count_entries(), 2);
	unlink(link);
	unlink(path);
}

/* Refused: a dangling link, a socket, a block device; nothing is created. */
TEST(refused_targets)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[256];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/dangling", dir);
	CHECK(!symlink("nowhere", path));
	CHECK(!file_sink__new(path));
	unlink(path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	CHECK(!bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	CHECK(!file_sink__new(sa.sun_path));
	close(fd);
	CHECK(!lstat(sa.sun_path, &st) && S_ISSOCK(st.st_mode));
	unlink(sa.sun_path);
	CHECK_EQ_U64(count_entries(), 0);
	snprintf(path, sizeof(path), "%s/blk", dir);
	if (mknod(path, S_IFBLK | 0600, makedev(7, 200)))
		SKIP("mknod: %s (no CAP_MKNOD)", strerror(errno));
	CHECK(!file_sink__new(path));
	CHECK(!lstat(path, &st) && S_ISBLK(st.st_mode));
	unlink(path);
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
	RUN(device_written_through);
	RUN(device_write_error_is_an_error);
	RUN(fifo_written_through);
	RUN(symlink_target_replaced);
	RUN(refused_targets);
	RUN(default_name);
	rmdir(dir);
	return TEST_DONE();
}
