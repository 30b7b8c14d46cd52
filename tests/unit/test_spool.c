/* test_spool.c - spool directory defaults, creation, atomic saves that never
 * replace an earlier capture, and failures reported. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "export/spool.h"
#include "test.h"

static char root[] = "/tmp/profcap-test-spool-XXXXXX";

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

TEST(save_creates_dir_and_never_clobbers)
{
	char dir[256], p1[512], p2[512], p3[512];
	struct stat st;
	struct buf b;
	int hidden;

	snprintf(dir, sizeof(dir), "%s/a/b/spool", root);
	CHECK_EQ_U64(spool__save(dir, "web-1", "first", 5, p1, sizeof(p1)), 0);
	CHECK(!stat(dir, &st));
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ_U64(st.st_mode & 0777, 0700);
	CHECK(!strncmp(p1, dir, strlen(dir)));
	CHECK(strstr(p1, "/profcap-web-1-"));
	CHECK(strstr(p1, "Z.pb"));
	CHECK(!stat(p1, &st));
	CHECK_EQ_U64(st.st_mode & 0777, 0600);

	/* Same host, same second: new names, earlier files untouched. */
	CHECK_EQ_U64(spool__save(dir, "web-1", "second", 6, p2, sizeof(p2)), 0);
	CHECK_EQ_U64(spool__save(dir, "web-1", "third!", 6, p3, sizeof(p3)), 0);
	CHECK(strcmp(p1, p2) && strcmp(p2, p3) && strcmp(p1, p3));
	CHECK_EQ_U64(count_files(dir, &hidden), 3);
	CHECK_EQ_U64(hidden, 0); /* no temporary file left behind */
	buf__init(&b, 1 << 20);
	CHECK_EQ_U64(buf__read_file(&b, p1), 0);
	CHECK_EQ_U64(b.len, 5);
	CHECK(!memcmp(b.data, "first", 5));
	CHECK_EQ_U64(buf__read_file(&b, p3), 0);
	CHECK(b.len == 6 && !memcmp(b.data, "third!", 6));
	buf__release(&b);

	/* A host name cannot escape the directory. */
	CHECK_EQ_U64(spool__save(dir, "../evil/x", "z", 1, p1, sizeof(p1)), 0);
	CHECK(!strncmp(p1, dir, strlen(dir)));
	CHECK(!strchr(p1 + strlen(dir) + 1, '/'));
	CHECK_EQ_U64(count_files(dir, &hidden), 4);
	CHECK_EQ_U64(spool__save(dir, NULL, "z", 1, p1, sizeof(p1)), 0);
	CHECK(strstr(p1, "/profcap-host-"));

	/* Too small a path buffer fails cleanly. */
	CHECK_EQ_U64(spool__save(dir, "h", "z", 1, p1, 10), -ENAMETOOLONG);
	CHECK_EQ_U64(count_files(dir, &hidden), 5);
}

TEST(prepare_failures)
{
	char file[256], under[300];
	FILE *f;

	snprintf(file, sizeof(file), "%s/plain-file", root);
	f = fopen(file, "w");
	CHECK(f);
	fclose(f);
	/* stderr gets the hint; the return value is what we check. */
	CHECK_EQ_U64(spool__prepare(file), -ENOTDIR);
	snprintf(under, sizeof(under), "%s/sub", file);
	CHECK(spool__prepare(under) < 0);
	CHECK(spool__save(under, "h", "x", 1, file, sizeof(file)) < 0);
	CHECK_EQ_U64(spool__prepare(root), 0);
	CHECK(spool__prepare("") < 0);
}

static void cleanup(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("warning: could not remove %s\n", dir);
}

int main(void)
{
	int ret;

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(save_creates_dir_and_never_clobbers);
	RUN(prepare_failures);
	ret = TEST_DONE();
	cleanup(root);
	return ret;
}
