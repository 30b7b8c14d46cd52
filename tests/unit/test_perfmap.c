/* test_perfmap.c - the perf map parser: format, later-wins overlays,
 * garbage, caps, incremental file reads, and the careful open through a
 * process root (symlinks, FIFOs, owners). No root needed. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/perfmap.h"
#include "test.h"

static const char *name_at(const struct perfmap *m, __u64 addr)
{
	const struct perfmap_sym *s = perfmap__lookup(m, addr);

	return s ? s->name : NULL;
}

static int add_all(struct perfmap *m, const char *text)
{
	size_t used = 0;

	return perfmap__add_text(m, text, strlen(text), &used);
}

TEST(parse_formats)
{
	struct perfmap *m = perfmap__new();
	struct perfmap_stats st;
	static const char text[] = "7f0000001000 40 LazyCompile:*hot /srv/app.js:3\n" /* node */
				   "0x7f0000002000 0x20 Ljava/lang/String;.hashCode()I\n"
				   "7F0000003000 10 py::compute:/srv/x.py\r\n" /* CRLF */
				   "  7f0000004000\t8\t  spaced name  \n";

	CHECK(m);
	CHECK(!add_all(m, text));
	CHECK_EQ_U64(perfmap__count(m), 4);
	CHECK_STR(name_at(m, 0x7f0000001000ull), "LazyCompile:*hot /srv/app.js:3");
	CHECK_STR(name_at(m, 0x7f000000103full), "LazyCompile:*hot /srv/app.js:3");
	CHECK(!name_at(m, 0x7f0000001040ull)); /* end is exclusive */
	CHECK(!name_at(m, 0x7f0000000fffull));
	CHECK_STR(name_at(m, 0x7f0000002010ull), "Ljava/lang/String;.hashCode()I");
	CHECK_STR(name_at(m, 0x7f0000003000ull), "py::compute:/srv/x.py");
	CHECK_STR(name_at(m, 0x7f0000004007ull), "spaced name");
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.lines, 4);
	CHECK_EQ_U64(st.bad_lines, 0);
	perfmap__free(m);
	perfmap__free(NULL);
}

TEST(later_entries_win)
{
	struct perfmap *m = perfmap__new();
	const char *first;

	CHECK(m);
	/* One batch: B rewrites the middle of A; C then covers part of B and A. */
	CHECK(!add_all(m, "1000 100 A\n"
			  "1040 40 B\n"
			  "1070 20 C\n"));
	CHECK_STR(name_at(m, 0x1000), "A");
	CHECK_STR(name_at(m, 0x103f), "A");
	CHECK_STR(name_at(m, 0x1040), "B");
	CHECK_STR(name_at(m, 0x106f), "B");
	CHECK_STR(name_at(m, 0x1070), "C");
	CHECK_STR(name_at(m, 0x108f), "C");
	CHECK_STR(name_at(m, 0x1090), "A");
	CHECK_STR(name_at(m, 0x10ff), "A");
	CHECK(!name_at(m, 0x1100));
	CHECK_EQ_U64(perfmap__count(m), 4);
	first = name_at(m, 0x1000);
	/* A later batch (incremental read) overrides the older table; the same
	 * range rewritten twice keeps only the last name. */
	CHECK(!add_all(m, "1080 100 D\n"
			  "2000 10 E\n"
			  "2000 10 F\n"));
	CHECK_STR(name_at(m, 0x107f), "C");
	CHECK_STR(name_at(m, 0x1080), "D");
	CHECK_STR(name_at(m, 0x117f), "D");
	CHECK_STR(name_at(m, 0x2000), "F");
	CHECK(name_at(m, 0x1000) == first); /* names never move */
	/* An entry inside an old one splits it. */
	CHECK(!add_all(m, "1010 10 G\n"));
	CHECK_STR(name_at(m, 0x100f), "A");
	CHECK_STR(name_at(m, 0x1010), "G");
	CHECK_STR(name_at(m, 0x1020), "A");
	/* Segments stay sorted and disjoint. */
	for (size_t i = 1; i < perfmap__count(m); i++)
		CHECK(perfmap__sym(m, i - 1)->end <= perfmap__sym(m, i)->start);
	perfmap__free(m);
}

TEST(garbage_lines)
{
	struct perfmap *m = perfmap__new();
	struct perfmap_stats st;
	char longline[PERFMAP_MAX_LINE + 64];
	char text[PERFMAP_MAX_LINE + 1024];
	int n;

	CHECK(m);
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	memcpy(longline, "5000 10 ", 8);
	n = snprintf(text, sizeof(text),
		     "\n"
		     "garbage\n"
		     "1000\n"
		     "1000 10\n"
		     "1000 10    \n"	  /* no name */
		     "1000 0 zero-size\n" /* covers nothing */
		     "zz00 10 bad-hex\n"
		     "1000 1g bad-size\n"
		     "ffffffffffffffff 10 wraps\n"
		     "11111111111111111 10 too-many-digits\n"
		     "%s\n"
		     "3000 10 \x01nul\x7f\xff\xc3\xa9t\xe2\x82\n"
		     "4000 10 good\n",
		     longline);
	CHECK(n > 0 && (size_t)n < sizeof(text));
	CHECK(!add_all(m, text));
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.lines, 2);
	CHECK_EQ_U64(st.bad_lines, 11);
	CHECK_EQ_U64(perfmap__count(m), 2);
	CHECK(!name_at(m, 0x1000));
	CHECK(!name_at(m, 0x5000));
	CHECK_STR(name_at(m, 0x4000), "good");
	/* Control characters and invalid UTF-8 become '?', valid UTF-8 stays. */
	CHECK_STR(name_at(m, 0x3000), "?nul??\xc3\xa9t??");
	perfmap__free(m);
}

TEST(partial_lines)
{
	struct perfmap *m = perfmap__new();
	char big[PERFMAP_MAX_LINE + 100];
	struct perfmap_stats st;
	size_t used;

	CHECK(m);
	/* A half-written last line is left for later. */
	CHECK(!perfmap__add_text(m, "1000 10 a\n2000 1", 16, &used));
	CHECK_EQ_U64(used, 10);
	CHECK_STR(name_at(m, 0x1000), "a");
	CHECK(!name_at(m, 0x2000));
	CHECK(!perfmap__add_text(m, "2000 10 b\n", 10, &used));
	CHECK_EQ_U64(used, 10);
	CHECK_STR(name_at(m, 0x2000), "b");
	/* An over-long line without its newline yet is dropped, and so is its
	 * rest when it arrives; the next line is read. */
	memset(big, 'y', sizeof(big));
	memcpy(big, "3000 10 ", 8);
	CHECK(!perfmap__add_text(m, big, sizeof(big), &used));
	CHECK_EQ_U64(used, sizeof(big));
	CHECK(!perfmap__add_text(m, "yyyy\n4000 10 c\n", 15, &used));
	CHECK_EQ_U64(used, 15);
	CHECK(!name_at(m, 0x3000));
	CHECK_STR(name_at(m, 0x4000), "c");
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.lines, 3);
	CHECK_EQ_U64(st.bad_lines, 1);
	perfmap__free(m);
}

TEST(segment_cap)
{
	struct perfmap *m = perfmap__new_limited(PERFMAP_MAX_BYTES, 3);
	struct perfmap_stats st;

	CHECK(m);
	CHECK(!add_all(m, "1000 10 a\n2000 10 b\n"));
	/* Two more would make four: the batch is refused, the table kept. */
	CHECK(add_all(m, "3000 10 c\n4000 10 d\n") == -E2BIG);
	CHECK_STR(name_at(m, 0x2000), "b");
	CHECK(!name_at(m, 0x3000));
	perfmap__stats(m, &st);
	CHECK(st.capped);
	/* Capped: later text is ignored. */
	CHECK(add_all(m, "5000 10 e\n") == -E2BIG);
	CHECK(!name_at(m, 0x5000));
	CHECK_EQ_U64(perfmap__count(m), 2);
	perfmap__free(m);
}

/* Random overlapping entries in several batches against the definition:
 * the name of an address is that of the last line covering it. */
TEST(random_against_model)
{
	enum { N = 3000, SPACE = 0x4000 };
	static unsigned int start[N], size[N];
	static char text[N * 32];
	struct perfmap *m = perfmap__new();
	unsigned long long x = 88172645463325252ull;
	char want[32];
	size_t len = 0, used;
	int i, a, batch = 0;

	CHECK(m);
	for (i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		start[i] = (unsigned int)(x % SPACE);
		size[i] = 1 + (unsigned int)((x >> 20) % (i % 7 == 0 ? 0x800 : 0x40));
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%x %x n%d\n", start[i],
					size[i], i);
		/* Batches of varying size, as incremental reads give. */
		if (i == N - 1 || (x >> 40) % 97 == 0) {
			CHECK(!perfmap__add_text(m, text, len, &used));
			CHECK_EQ_U64(used, len);
			len = 0;
			batch++;
		}
	}
	CHECK(batch > 5);
	for (a = 0; a < SPACE + 0x900; a++) {
		const char *got = name_at(m, (__u64)a);

		for (i = N - 1; i >= 0; i--)
			if ((unsigned int)a >= start[i] && (unsigned int)a < start[i] + size[i])
				break;
		if (i < 0) {
			CHECK(!got);
			continue;
		}
		snprintf(want, sizeof(want), "n%d", i);
		CHECK_STR(got, want);
	}
	for (size_t k = 1; k < perfmap__count(m); k++)
		CHECK(perfmap__sym(m, k - 1)->end <= perfmap__sym(m, k)->start);
	perfmap__free(m);
}

static char tmpdir[64];

static int write_at(const char *rel, const char *text, bool append)
{
	char path[256];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static int open_rel(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	return open(path, O_RDONLY | O_CLOEXEC);
}

TEST(incremental_file)
{
	struct perfmap *m = perfmap__new();
	struct perfmap_stats st;
	int fd = -1;
	char path[256];

	CHECK(m);
	strcpy(tmpdir, "/tmp/profcap-perfmap-XXXXXX");
	CHECK(mkdtemp(tmpdir));
	CHECK(!write_at("a.map", "1000 10 one\n2000 10 tw", false));
	fd = open_rel("a.map");
	CHECK(fd >= 0);
	CHECK(!perfmap__update_fd(m, fd));
	CHECK_STR(name_at(m, 0x1000), "one");
	CHECK(!name_at(m, 0x2000));
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.bytes, 12);
	/* Only the appended bytes are read; the partial line completes. */
	CHECK(!write_at("a.map", "o\n1000 10 one-again\n", true));
	CHECK(!perfmap__update_fd(m, fd));
	CHECK_STR(name_at(m, 0x2000), "two");
	CHECK_STR(name_at(m, 0x1000), "one-again");
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.lines, 3);
	CHECK_EQ_U64(st.bytes, 12 + 12 + 18);
	/* Nothing new: nothing changes. */
	CHECK(!perfmap__update_fd(m, fd));
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.lines, 3);
	/* Truncated and rewritten shorter: read again from the start. */
	CHECK(!write_at("a.map", "3000 10 new\n", false));
	CHECK(!perfmap__update_fd(m, fd));
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.rereads, 1);
	CHECK(!name_at(m, 0x1000));
	CHECK_STR(name_at(m, 0x3000), "new");
	close(fd);
	/* Replaced by another file (another inode), even a longer one. */
	CHECK(!write_at("b.map", "4000 10 other\n5000 10 more-and-more\n", false));
	snprintf(path, sizeof(path), "%s/b.map", tmpdir);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(!perfmap__update_fd(m, fd));
	perfmap__stats(m, &st);
	CHECK_EQ_U64(st.rereads, 2);
	CHECK(!name_at(m, 0x3000));
	CHECK_STR(name_at(m, 0x4000), "other");
	close(fd);
	perfmap__free(m);

	/* The byte cap: lines past it are never read. */
	m = perfmap__new_limited(20, PERFMAP_MAX_SEGMENTS);
	CHECK(m);
	fd = open_rel("b.map");
	CHECK(fd >= 0);
	CHECK(perfmap__update_fd(m, fd) == -E2BIG);
	CHECK_STR(name_at(m, 0x4000), "other");
	CHECK(!name_at(m, 0x5000));
	perfmap__stats(m, &st);
	CHECK(st.capped);
	CHECK(perfmap__update_fd(m, fd) == -E2BIG);
	close(fd);
	perfmap__free(m);
}

TEST(open_through_root)
{
	char path[256], target[256];
	struct stat st;
	int fd = -1, err;

	/* root/tmp/perf-77.map: the normal case. */
	snprintf(path, sizeof(path), "%s/root", tmpdir);
	CHECK(!mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/root/tmp", tmpdir);
	CHECK(!mkdir(path, 0755));
	CHECK(!write_at("root/tmp/perf-77.map", "1000 10 jit\n", false));
	snprintf(path, sizeof(path), "%s/root", tmpdir);
	CHECK(!perfmap__open(path, 77, getuid(), &fd));
	CHECK(fd >= 0);
	CHECK(!fstat(fd, &st) && S_ISREG(st.st_mode));
	close(fd);
	CHECK(perfmap__open(path, 78, getuid(), &fd) == -ENOENT);
	CHECK(fd == -1);
	CHECK(perfmap__open(path, 0, getuid(), &fd) == -EINVAL);
	/* A symlink as the map (to a file outside the root) is refused. */
	snprintf(target, sizeof(target), "%s/secret", tmpdir);
	CHECK(!write_at("secret", "1000 10 host-secret\n", false));
	snprintf(path, sizeof(path), "%s/root/tmp/perf-79.map", tmpdir);
	CHECK(!symlink(target, path));
	snprintf(path, sizeof(path), "%s/root", tmpdir);
	CHECK(perfmap__open(path, 79, getuid(), &fd) == -ELOOP);
	/* A FIFO neither blocks nor is read. */
	snprintf(path, sizeof(path), "%s/root/tmp/perf-80.map", tmpdir);
	CHECK(!mkfifo(path, 0644));
	snprintf(path, sizeof(path), "%s/root", tmpdir);
	CHECK(perfmap__open(path, 80, getuid(), &fd) == -EINVAL);
	/* A directory neither. */
	snprintf(path, sizeof(path), "%s/root/tmp/perf-81.map", tmpdir);
	CHECK(!mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/root", tmpdir);
	err = perfmap__open(path, 81, getuid(), &fd);
	CHECK(err == -EINVAL || err == -EISDIR);
	/* Owned by someone else than the process or root. */
	if (getuid() != 0) {
		CHECK(perfmap__open(path, 77, getuid() + 1, &fd) == -EPERM);
	} else {
		snprintf(path, sizeof(path), "%s/root/tmp/perf-77.map", tmpdir);
		CHECK(!chown(path, 4321, 4321));
		snprintf(path, sizeof(path), "%s/root", tmpdir);
		CHECK(perfmap__open(path, 77, 1234, &fd) == -EPERM);
		CHECK(!perfmap__open(path, 77, 4321, &fd));
		close(fd);
	}
	/* "tmp" a symlink to an absolute path: resolved inside the root, so
	 * it cannot reach the host's file of that name. */
	snprintf(path, sizeof(path), "%s/root2", tmpdir);
	CHECK(!mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/host", tmpdir);
	CHECK(!mkdir(path, 0755));
	CHECK(!write_at("host/perf-77.map", "1000 10 host-file\n", false));
	snprintf(path, sizeof(path), "%s/root2/tmp", tmpdir);
	snprintf(target, sizeof(target), "%s/host", tmpdir);
	CHECK(!symlink(target, path));
	snprintf(path, sizeof(path), "%s/root2", tmpdir);
	err = perfmap__open(path, 77, getuid(), &fd);
	CHECK(err == -ENOENT || err == -ELOOP);
	CHECK(fd == -1);
	/* A missing root. */
	snprintf(path, sizeof(path), "%s/nonexistent", tmpdir);
	CHECK(perfmap__open(path, 77, getuid(), &fd) == -ENOENT);
	snprintf(path, sizeof(path), "rm -rf '%s'", tmpdir);
	CHECK(!system(path));
}

int main(void)
{
	RUN(parse_formats);
	RUN(later_entries_win);
	RUN(garbage_lines);
	RUN(partial_lines);
	RUN(segment_cap);
	RUN(random_against_model);
	RUN(incremental_file);
	RUN(open_through_root);
	return TEST_DONE();
}
